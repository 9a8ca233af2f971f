// RetryBudget: re-sends capped at a fraction of the requests sent (a token bucket).
//
// Every first send earns `perRequest` tokens (0.1: at most one retry per ten requests in the long
// run), up to `burst` tokens; the bucket starts full. A retry spends one token; with less than one
// the retry is refused and the request fails without a re-send. Under total loss the engine then
// sends at most (1 + perRequest) MADs per request plus the burst, instead of 1 + retries.
//
// A pure value; not thread-safe (the MAD engine uses it on its I/O thread).
#pragma once

#include <cstdint>

namespace ibfabric::mad {

class RetryBudget {
 public:
  RetryBudget(double perRequest, double burst);

  void onFirstSend();
  /// Spends a token for one retry; false (and counted as a refusal) when there is none.
  bool trySpend();

  double tokens() const { return tokens_; }
  std::uint64_t refusals() const { return refusals_; }

 private:
  double perRequest_;
  double burst_;
  double tokens_;
  std::uint64_t refusals_ = 0;
};

}  // namespace ibfabric::mad
