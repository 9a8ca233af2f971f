// The pool's JSON forms beyond those of scheduler_hooks/pool.h (requests and allocations, whose
// codecs json_codecs.cpp defines): an inventory host with its name inside, as the journal and
// the snapshot hold it. Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "scheduler_hooks/pool/inventory.h"

namespace ibfabric::scheduler_hooks::pool_impl {

/// {"name": "dgx0001", ...host form...} (toJson(PoolHost)) -> the host; throws InventoryError.
PoolHost hostFromRecord(const nlohmann::json& j);

}  // namespace ibfabric::scheduler_hooks::pool_impl
