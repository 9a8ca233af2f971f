// CongestionEpisodes: when a job's hottest link is congested, once per episode (hysteresis).
//
// An episode starts when a job's hottest-link utilization reaches `enter` and ends when it falls
// below `leave` (<= enter); update() says which episodes just started (the one moment to report
// each). Jobs left out of an update are forgotten (a job that comes back starts afresh).
//
// Plain value; not thread-safe (the JobService's follower owns one).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ibfabric::api {

class CongestionEpisodes {
 public:
  CongestionEpisodes(double enter, double leave) : enter_(enter), leave_(leave) {}

  /// One round over every job (id, hottest-link utilization now); returns the positions in
  /// `jobs` whose episode started in this round.
  std::vector<std::size_t> update(const std::vector<std::pair<std::string, double>>& jobs) {
    std::map<std::string, bool, std::less<>> next;
    std::vector<std::size_t> started;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const auto& [id, utilization] = jobs[i];
      bool hot = inEpisode(id);
      if (!hot && utilization >= enter_) {
        hot = true;
        started.push_back(i);
      } else if (hot && utilization < leave_) {
        hot = false;
      }
      next[id] = hot;
    }
    inEpisode_ = std::move(next);
    return started;
  }
  bool inEpisode(std::string_view id) const {
    auto it = inEpisode_.find(id);
    return it != inEpisode_.end() && it->second;
  }

 private:
  double enter_, leave_;
  std::map<std::string, bool, std::less<>> inEpisode_;
};

}  // namespace ibfabric::api
