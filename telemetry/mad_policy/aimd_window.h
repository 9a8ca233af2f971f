// AimdWindow: how many requests may be in flight, grown while answers come back and cut on loss.
//
// Additive increase, multiplicative decrease, as TCP's congestion window: below the slow-start
// threshold every answer adds one (the window doubles per round trip); above it the window grows
// by one per window's worth of answers. A loss halves it (not below `min`) and sets the threshold
// to the new value, at most once per loss episode: a loss of an attempt sent before the last cut
// is part of the episode that caused it, so one burst of timeouts cuts once, not down to `min`.
// The window stays within [min, max]. A cut that proves spurious (the "lost" attempt is answered
// after all) is undone by restoring the state from before it, as long as no later cut happened.
//
// A pure value on the engine clock; not thread-safe (the MAD engine uses it on its I/O thread).
#pragma once

#include <cstdint>

#include "telemetry/clock.h"

namespace ibfabric::mad {

class AimdWindow {
 public:
  struct Bounds {
    int min = 1;
    int max = 256;
    int initial = 256;  ///< Clamped to [min, max].
  };

  /// What a cut changes, so a spurious one can be undone.
  struct State {
    double window = 0;
    double slowStartThreshold = 0;
  };

  explicit AimdWindow(Bounds bounds);

  /// A request was answered.
  void onAnswer();
  /// An attempt sent at `sentAt` was lost at `now`; returns whether the window was cut (not when
  /// the loss belongs to the last cut's episode, nor when the window is at `min` already).
  bool onLoss(Clock::time_point sentAt, Clock::time_point now);

  /// Requests allowed in flight now, in [min, max].
  int current() const { return static_cast<int>(window_); }
  State state() const { return {window_, slowStartThreshold_}; }
  /// Restores `before` (the state before a cut) if the last cut is still cut number `cut`
  /// (decreases() right after it): a later cut was caused by something else and stays.
  /// Returns whether it restored.
  bool undoCut(State before, std::uint64_t cut);
  int max() const { return max_; }
  int min() const { return min_; }
  std::uint64_t decreases() const { return decreases_; }
  std::uint64_t undone() const { return undone_; }

 private:
  int min_;
  int max_;
  double window_;
  double slowStartThreshold_;
  Clock::time_point lastCut_ = Clock::time_point::min();
  std::uint64_t decreases_ = 0;
  std::uint64_t undone_ = 0;
  std::uint64_t lastUndone_ = 0;  ///< The cut undone last (each is undone at most once).
};

}  // namespace ibfabric::mad
