// PoolState's shared lookups: the wall clock, usable hosts, the pool's size.
#include "scheduler_hooks/pool/pool_state.h"

namespace ibfabric::scheduler_hooks::pool_impl {

SysClock::time_point PoolState::now() const {
  return options.clock ? options.clock() : SysClock::now();
}

bool PoolState::usable(std::size_t h) const {
  return hosts[h].known && hosts[h].health() == HostHealth::kOk;
}

int PoolState::totalGpus() const {
  int n = 0;
  for (const auto& h : hosts)
    if (h.known) n += static_cast<int>(h.inv.gpus.size());
  return n;
}

}  // namespace ibfabric::scheduler_hooks::pool_impl
