#include "telemetry/counter_history.h"

#include <algorithm>

namespace ibfabric::telemetry {

CounterHistory::CounterHistory(std::size_t depth) : depth_(std::max<std::size_t>(depth, 1)) {}

void CounterHistory::add(const CounterSnapshot& snapshot) {
  std::lock_guard lock(mu_);
  for (const PortSample& s : snapshot.ports) {
    if (s.status == PortStatus::kGone) {
      rings_.erase(s.key);
      continue;
    }
    if (s.status != PortStatus::kOk) continue;
    Ring& r = rings_[s.key];
    if (r.slots.size() < depth_) r.slots.resize(depth_);
    r.slots[r.next] = s;
    r.next = (r.next + 1) % depth_;
    r.size = std::min(r.size + 1, depth_);
  }
}

std::vector<PortSample> CounterHistory::samples(PortKey key) const {
  std::lock_guard lock(mu_);
  std::vector<PortSample> out;
  auto it = rings_.find(key);
  if (it == rings_.end()) return out;
  const Ring& r = it->second;
  out.reserve(r.size);
  const std::size_t first = (r.next + depth_ - r.size) % depth_;
  for (std::size_t i = 0; i < r.size; ++i) out.push_back(r.slots[(first + i) % depth_]);
  return out;
}

std::vector<PortKey> CounterHistory::ports() const {
  std::lock_guard lock(mu_);
  std::vector<PortKey> out;
  out.reserve(rings_.size());
  for (const auto& [k, r] : rings_) out.push_back(k);
  return out;
}

}  // namespace ibfabric::telemetry
