// FakeMadTransport: a scripted MadTransport for deterministic unit tests of the MAD engine.
//
// Each send() asks the responder what happens to that request: nothing (a drop or a dead target),
// one reply after a delay, several replies (duplicates), a reply later than any timeout, or a
// transport error status. Replies are queued by due time on the FakeClock; receive() delivers the
// earliest due reply, advancing the fake clock to its due time if it falls within the timeout,
// otherwise advances the clock by the whole timeout and reports a timeout. Time therefore moves
// only when the engine would block, which makes engine tests deterministic and instant.
// Replies carry an agent id in TID bits 32..47, as umad2sim does.
//
// Thread-safety: send()/receive() from one thread (the engine's); the observers (sent(), ...)
// may be called from any thread; all state is behind a mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "telemetry/mad_transport.h"
#include "tests/fakes/fake_clock.h"

namespace ibfabric::mad {

class FakeMadTransport final : public MadTransport {
 public:
  struct Reply {
    Reply(std::chrono::nanoseconds d = {}, std::optional<MadBuffer> m = std::nullopt, int st = 0)
        : delay(d), mad(std::move(m)), umadStatus(st) {}
    std::chrono::nanoseconds delay{0};
    /// nullopt: a GetResponse echo of the request (responseTo()).
    std::optional<MadBuffer> mad;
    /// Non-zero: delivered as a transport failure of the request (like umad2sim's status 110).
    int umadStatus = 0;
  };
  struct SentMad {
    Clock::time_point at;
    MadAddress to;
    MadBuffer mad;
  };
  /// Called for every send with the request and the number of earlier sends (0-based index).
  using Responder =
      std::function<std::vector<Reply>(const MadAddress& to, const MadBuffer& request, int index)>;

  static constexpr std::uint16_t kAgentId = 0x0005;

  FakeMadTransport(FakeClock& clock, Responder responder);

  /// A GetResponse to `request`: same header with the response bit, TID with agent bits set.
  static MadBuffer responseTo(const MadBuffer& request);

  bool open(std::string& error) override;
  int send(const MadAddress& to, const MadBuffer& mad) override;
  ReceiveResult receive(std::chrono::nanoseconds timeout) override;
  void close() override;

  /// Every send() so far, in order.
  std::vector<SentMad> sent() const;
  /// The most requests (distinct low TIDs) sent but not yet answered by a delivered reply.
  std::size_t maxUnanswered() const;
  /// Queues a MAD nobody asked for (e.g. an SA Report) from `from`, due `delay` from now.
  void deliver(const MadBuffer& mad, Lid from, std::chrono::nanoseconds delay = {});
  /// The next `count` sends fail with `error` (an errno) before reaching the responder.
  void failNextSends(int count, int error);
  bool isOpen() const;
  /// Send number `index` (0-based) and every one after fail with EPIPE, and receive() fails at
  /// once, with fatalError() `why`: the transport is gone until reopened (a MAD proxy that
  /// exited).
  void dieAtSend(int index, std::string why);
  std::string fatalError() const override;

 private:
  FakeClock& clock_;
  Responder responder_;
  mutable std::mutex mu_;
  std::multimap<std::pair<Clock::time_point, std::uint64_t>, ReceivedMad> queue_;
  std::uint64_t seq_ = 0;
  std::vector<SentMad> sent_;
  std::set<std::uint32_t> unanswered_;
  std::size_t maxUnanswered_ = 0;
  int failSends_ = 0;
  int failError_ = 0;
  int dieAt_ = -1;
  std::string dieWhy_;
  std::string fatal_;
  bool open_ = false;
};

}  // namespace ibfabric::mad
