// RttEstimator: a retransmission timeout from measured round-trip times, as TCP computes it.
//
// RFC 6298: the first sample R sets SRTT = R and RTTVAR = R/2; later ones RTTVAR = 3/4 RTTVAR +
// 1/4 |SRTT - R| and SRTT = 7/8 SRTT + 1/8 R; RTO = SRTT + max(G, 4 RTTVAR), clamped to the
// configured bounds. Before the first sample RTO is the configured initial value. A timeout backs
// the RTO off (doubles it, up to the bound) and the backed-off value stays until the next sample
// (section 5.5/5.7), so a responder slower than the current RTO gets a longer timer instead of a
// stream of premature retries. Every sample must belong to one known attempt (the MAD engine
// tells attempts apart by their TIDs, so it needs no Karn rule).
//
// A pure value on the engine clock; not thread-safe (the MAD engine uses it on its I/O thread).
#pragma once

#include <chrono>

#include "telemetry/clock.h"

namespace ibfabric::mad {

class RttEstimator {
 public:
  struct Bounds {
    Clock::duration initial = std::chrono::milliseconds(200);
    Clock::duration min = std::chrono::milliseconds(20);
    Clock::duration max = std::chrono::seconds(2);
    Clock::duration granularity = std::chrono::milliseconds(1);  ///< G in RFC 6298.
  };

  explicit RttEstimator(Bounds bounds);

  /// One measured round trip of a request answered on its first attempt.
  void sample(Clock::duration rtt);
  /// An attempt sent at `sentAt` timed out at `now`. Doubles the RTO once per loss episode: an
  /// attempt sent before the last back-off belongs to the episode that caused it. Returns whether
  /// the RTO was backed off.
  bool backOff(Clock::time_point sentAt, Clock::time_point now);
  /// Starts a new target from what another estimator measured (its SRTT, RTTVAR and RTO).
  void seedFrom(const RttEstimator& other);

  Clock::duration rto() const { return rto_; }
  Clock::duration srtt() const { return srtt_; }
  Clock::duration rttvar() const { return rttvar_; }
  bool measured() const { return measured_; }

 private:
  Clock::duration clamp(Clock::duration d) const;

  Bounds bounds_;
  Clock::duration srtt_{};
  Clock::duration rttvar_{};
  Clock::duration rto_;
  bool measured_ = false;
  Clock::time_point lastBackOff_ = Clock::time_point::min();
};

}  // namespace ibfabric::mad
