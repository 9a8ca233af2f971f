// The pool's journal records: every change is written as a record ({"op": "host" | "alloc" |
// "free" | "degrade", "seq": n, ...}) before it is applied, the whole state is compacted into a
// snapshot now and then, and the constructor replays snapshot and records. The file format (length
// + CRC-32 records, the snapshot's atomic rename) is PoolJournal's (journal_file.h).
//
// Not thread-safe: runs with the pool's mutex held.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "scheduler_hooks/pool/pool_state.h"

namespace ibfabric::scheduler_hooks::pool_impl {

/// Appends a record (with the next "seq") and makes it durable; nothing without a journal.
/// Throws PoolError(kStorage) when it cannot be written.
void record(PoolState& s, nlohmann::json rec);
/// Writes a snapshot and restarts the journal; a failure is logged (the journal keeps growing).
void compact(PoolState& s);
/// compact() once the journal holds `compactEvery` records.
void maybeCompact(PoolState& s);
/// Opens `options.journalDir` and rebuilds the state from it; throws PoolError(kStorage).
void replay(PoolState& s);
/// replay() once the files are read: applies the snapshot, then the records it does not hold
/// yet. Throws what a record that does not decode throws (replay() makes it PoolError).
void applyReplay(PoolState& s, const std::optional<nlohmann::json>& snapshot,
                 const std::vector<nlohmann::json>& records);

}  // namespace ibfabric::scheduler_hooks::pool_impl
