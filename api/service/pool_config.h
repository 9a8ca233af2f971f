// The daemon's `pool:` configuration block (docs/pool.md):
//
//   pool:
//     inventory: /etc/ibfabric/pool.json   # hosts and GPUs (scheduler_hooks/pool/inventory.h)
//     journal: /var/lib/ibfabric/pool       # directory of the durable journal
//     compact_every: 1000                   # journal records between snapshots
//     quotas:
//       - {class: inference, max_percent: 60, window: "08:00-20:00"}
//
// Without a `pool:` block the pool endpoints answer 404. Plain value type.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "scheduler_hooks/pool/quota.h"

namespace ibfabric::api {

struct PoolConfig {
  bool enabled = false;
  std::string inventory;  ///< file; empty = hosts only through PUT /api/v1/pool/hosts/{name}
  std::string journal;    ///< directory; empty = in memory only (lost on restart)
  std::size_t compactEvery = 1000;
  std::vector<scheduler_hooks::QuotaRule> quotas;
};

}  // namespace ibfabric::api
