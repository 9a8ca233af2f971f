// TrapSubscription: the SM's traps, subscribed the standard way (SA InformInfo, IBA 13.4.8 and
// 15.2.5.12) — what lets a fabric manager beside any subnet manager (OpenSM, one on a switch,
// UFM) hear of a port going down within the SM's own reaction time instead of at its next poll.
//
// On its own umad port (the SA class; in the daemon a MAD proxy child, api/daemon/trap_wiring.h)
// it sends SubnAdmSet(InformInfo) for each trap to the master SM's LID, checks each GetResponse
// (status, subscribe bit), then waits for SubnAdmReports: each is acknowledged with a
// ReportResponse (else the SM resends it), de-duplicated by transaction id and handed to the
// notice handler. It subscribes again every `resubscribeEvery` (an SM that restarted or failed
// over has forgotten its subscribers) and at once when the SM's LID changes; a failed round is
// retried after `retryAfter` (a periodic round the same SM left unanswered, busy with a heavy
// sweep, keeps `subscribed`: the earlier subscription stands; failures and lastError say so); a
// dead port is re-created through the factory. stop()
// unsubscribes, best effort.
//
// Thread-safety: start()/stop() from one owner thread; the handlers run on the subscription's
// thread. step() is the thread's body, public for tests driving a fake transport and clock (then
// do not start()).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "telemetry/clock.h"
#include "telemetry/mad_transport.h"
#include "telemetry/sa_attributes.h"
#include "telemetry/trap_status.h"

namespace ibfabric::mad {

struct TrapSubscriptionOptions {
  std::vector<Trap> traps{Trap::kGidInService, Trap::kGidOutOfService, Trap::kPortStateChange,
                          Trap::kLocalChanges};
  Clock::duration resubscribeEvery = std::chrono::seconds(60);
  Clock::duration replyTimeout = std::chrono::seconds(1);  ///< per InformInfo attempt
  int attempts = 3;                                        ///< per InformInfo and round
  Clock::duration retryAfter = std::chrono::seconds(5);    ///< after a failed round or open
};

class TrapSubscription {
 public:
  using TransportFactory = std::function<MadTransportPtr()>;
  /// The master SM's LID now (zero: none known yet).
  using SmLidSource = std::function<Lid()>;
  using NoticeHandler = std::function<void(const Notice&)>;
  using StatusHandler = std::function<void(const TrapSubscriptionStatus&)>;

  TrapSubscription(TransportFactory factory, const Clock& clock, SmLidSource smLid,
                   NoticeHandler onNotice, StatusHandler onStatus,
                   TrapSubscriptionOptions options = {});
  ~TrapSubscription();
  TrapSubscription(const TrapSubscription&) = delete;
  TrapSubscription& operator=(const TrapSubscription&) = delete;

  void start();
  /// Unsubscribes (best effort, within one reply timeout) and joins the thread.
  void stop();

  /// One turn: opens the port when due, (re)subscribes when due, then handles what arrives
  /// within `wait`. Returns false when there is no port (the caller waits before the next turn).
  bool step(Clock::duration wait);
  /// Sends the unsubscriptions and closes the port (stop() calls it).
  void unsubscribe();
  TrapSubscriptionStatus status() const;

 private:
  bool ensurePort();
  void subscribe(Lid sm, bool on);
  /// Handles one received MAD: a Report is answered and handled; a GetResponse with a TID in
  /// `pending` is removed from it and its InformInfo checked (returns its error, "" if ok).
  void handle(const ReceivedMad& mad, std::map<std::uint32_t, Trap>* pending,
              std::vector<std::string>* errors);
  /// Answers a request this port does not serve with "unsupported" (MAD status 0x000C).
  void refuse(const ReceivedMad& mad);
  void dropPort(const std::string& why);
  void publish();

  TransportFactory factory_;
  const Clock& clock_;
  SmLidSource smLid_;
  NoticeHandler onNotice_;
  StatusHandler onStatus_;
  TrapSubscriptionOptions options_;

  MadTransportPtr transport_;
  Clock::time_point nextOpen_{};
  Clock::time_point nextRound_{};
  Lid subscribedSm_;
  std::uint32_t nextTid_ = 0x5a000000;
  std::deque<std::uint64_t> recentReports_;  // TIDs of the last Reports (duplicates)

  mutable std::mutex statusMu_;
  TrapSubscriptionStatus status_;
  TrapSubscriptionStatus published_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ibfabric::mad
