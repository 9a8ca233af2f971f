// SubprocessMadTransport: a MadTransport whose real transport runs in a child process.
//
// Why: through ibsim's umad2sim a process connects to the simulator once, at its first umad
// call, and never again (umad2sim keeps that connection in a process-wide table), so a process
// whose simulator went away cannot reach the one that comes back by reopening umad. umad2sim
// also wraps poll()/write() for the whole process and holds one global mutex while a write to
// the simulator blocks, so a frozen simulator can stall every poll() in the process (an HTTP
// server's too). Here the umad port lives in a child (e.g. `ibfabricd --mad-proxy`, see
// mad_proxy.h); the parent never calls libibumad. Closing the transport ends the child and
// opening it again starts a fresh one, which connects afresh. On real hardware the child costs
// one process and a socket hop per batch of MADs.
//
// Wire: a SOCK_SEQPACKET socketpair; the child's end is its fd 3. Every packet holds whole
// fixed-size records (mad_proxy.h): requests parent -> child, replies child -> parent, and the
// child's first packet is a hello (port opened, or the open error). Sends are buffered and
// flushed together when the engine next waits in receive() (or when 64 are pending); the child
// batches replies the same way, so the per-MAD cost is a memcpy, not a syscall.
//
// Failure: a child that exits turns every later receive() into kError ("mad proxy exited ...")
// and send() into EPIPE; fatalError() says so, and the owner reopens (close() + open()). The
// child's stderr is forwarded line by line to the log (spdlog, "mad proxy[PID]: ..."); its last
// line (or its last "mad proxy: ..." line) ends the open() error of a child that dies before its
// hello, and the fatalError() of one that dies later. close() asks the child to exit
// (EOF on its socket), waits `exitGrace`, then SIGKILLs it, and reaps it. The child also gets
// SIGKILL when the thread that opened the transport exits (PR_SET_PDEATHSIG in the child).
//
// Thread-safety: as MadTransport (one user thread); fatalError() may be called from any thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "telemetry/mad_transport.h"

namespace ibfabric::mad {

class SubprocessMadTransport final : public MadTransport {
 public:
  struct Options {
    /// The child command (argv[0] absolute or looked up in PATH); it talks on fd 3.
    std::vector<std::string> argv;
    /// Instead of argv (tests): run this in a forked child with the socket's fd; its return
    /// value is the child's exit code.
    std::function<int(int fd)> childMain;
    /// How long open() waits for the child's hello.
    std::chrono::milliseconds openTimeout{10'000};
    /// How long close() waits for the child to exit before SIGKILL.
    std::chrono::milliseconds exitGrace{1'000};
  };

  explicit SubprocessMadTransport(Options options);
  ~SubprocessMadTransport() override;
  SubprocessMadTransport(const SubprocessMadTransport&) = delete;
  SubprocessMadTransport& operator=(const SubprocessMadTransport&) = delete;

  bool open(std::string& error) override;
  int send(const MadAddress& to, const MadBuffer& mad) override;
  ReceiveResult receive(std::chrono::nanoseconds timeout) override;
  void close() override;
  std::string fatalError() const override;
  Lid localLid() const override { return localLid_; }
  Lid smLid() const override { return smLid_; }
  Guid localPortGuid() const override { return localPortGuid_; }

  /// What the child reported in its hello (e.g. "umad mlx5_0:1"); empty before open().
  const std::string& childDescription() const { return description_; }
  pid_t childPid() const { return pid_; }

 private:
  Lid localLid_;
  Lid smLid_;
  Guid localPortGuid_;
  bool spawn(std::string& error);
  void markDead(const std::string& why);
  /// ": <the child's last 'mad proxy:' stderr line, else its last line>", or "".
  std::string stderrSuffix() const;
  /// Sends what is pending; false when the socket would block (the rest stays pending).
  bool flush();
  /// Reads one packet of replies into replies_; false on EOF/error (then the child is dead).
  bool readPacket();
  /// Waits `exitGrace` for the child, then SIGKILLs it; says how it ended.
  std::string reap();

  Options options_;
  pid_t pid_ = -1;
  int fd_ = -1;
  int stderrFd_ = -1;
  std::thread stderrReader_;
  std::vector<std::uint8_t> pending_;  // encoded request records not yet sent
  std::size_t pendingCount_ = 0;
  std::deque<ReceivedMad> replies_;
  std::vector<std::uint8_t> packet_;
  std::string description_;
  mutable std::mutex mu_;  // guards fatal_ and lastStderr_
  std::string fatal_;
  std::string lastStderr_;
  std::string proxyLine_;
  std::atomic<bool> dead_{false};
};

}  // namespace ibfabric::mad
