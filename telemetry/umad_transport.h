// UmadTransport: MadTransport on libibumad (/dev/infiniband/umad*, or ibsim through umad2sim).
//
// One umad port, one agent per management class (LID-routed SMP and PerfMgt by default), sends
// with umad_send(timeout 0, retries 0) — the engine does timing and retries itself, because
// through umad2sim there is no kernel timeout — and receives with poll() on the umad fd alone
// (umad2sim intercepts poll() but not select()/epoll) followed by umad_recv().
//
// Thread-safety: none; one thread (the engine's I/O thread) uses it after open().
#pragma once

#include <map>
#include <string>
#include <vector>

#include "telemetry/mad_transport.h"

namespace ibfabric::mad {

class UmadTransport final : public MadTransport {
 public:
  struct Options {
    std::string caName;  ///< Empty: the first CA umad finds.
    int port = 0;        ///< 0: the first active port.
    std::vector<MgmtClass> classes{MgmtClass::kSubnLid, MgmtClass::kPerfMgt};
  };

  explicit UmadTransport(Options options);
  ~UmadTransport() override;
  UmadTransport(const UmadTransport&) = delete;
  UmadTransport& operator=(const UmadTransport&) = delete;

  bool open(std::string& error) override;
  int send(const MadAddress& to, const MadBuffer& mad) override;
  ReceiveResult receive(std::chrono::nanoseconds timeout) override;
  void close() override;

  /// Our own port's LID and the SM's LID, as umad_get_port reported them at open().
  Lid localLid() const override { return localLid_; }
  Lid smLid() const override { return smLid_; }
  /// Our port's GUID (where directed routes start), as umad_get_port reported it at open().
  Guid localPortGuid() const override { return localPortGuid_; }
  const std::string& caName() const { return openedCa_; }
  int portNum() const { return openedPort_; }

 private:
  Options options_;
  int portId_ = -1;
  std::map<MgmtClass, int> agents_;
  std::vector<std::uint8_t> sendBuf_;
  std::vector<std::uint8_t> recvBuf_;
  Lid localLid_;
  Lid smLid_;
  Guid localPortGuid_;
  std::string openedCa_;
  int openedPort_ = 0;
};

}  // namespace ibfabric::mad
