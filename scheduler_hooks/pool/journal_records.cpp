// The pool's journal records: writing them, compacting the state into a snapshot, and replaying
// snapshot and records at start.
#include "scheduler_hooks/pool/journal_records.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "scheduler_hooks/pool/host_registry.h"
#include "scheduler_hooks/pool/json_codecs.h"
#include "scheduler_hooks/pool/usage_accounting.h"

namespace ibfabric::scheduler_hooks::pool_impl {
namespace {

using nlohmann::json;

json snapshotJson(const PoolState& s) {
  json hs = json::array(), as = json::array();
  for (const auto& h : s.hosts) hs.push_back(toJson(h.inv));
  for (const auto& [id, a] : s.allocations) as.push_back(toJson(a));
  return {{"schema", "ibfabric.pool/1"},
          {"seq", s.journalSeq},
          {"next_sequence", s.nextSequence},
          {"hosts", hs},
          {"allocations", as}};
}

void applyDegrade(PoolState& s, const json& rec) {
  auto it = s.allocations.find(rec.at("job").get<std::string>());
  if (it == s.allocations.end()) return;
  Allocation& a = it->second;
  a.state = AllocationState::kDegraded;
  a.degradedReason = rec.value("reason", "");
  a.replacement.reset();
  if (rec.contains("replacement") && rec["replacement"].is_string())
    a.replacement = rec["replacement"].get<std::string>();
  a.replacementNote = rec.value("note", "");
}

void applyRecord(PoolState& s, const json& rec) {
  const std::string op = rec.at("op");
  if (op == "host") {
    installHost(s, hostFromRecord(rec.at("host")));
  } else if (op == "alloc") {
    for (const auto& v : rec.value("victims", json::array()))
      removeAllocation(s, v.get<std::string>());
    s.preemptions += rec.value("victims", json::array()).size();
    addAllocation(s, allocationFromJson(rec.at("allocation")));
  } else if (op == "free") {
    removeAllocation(s, rec.at("job").get<std::string>());
  } else if (op == "degrade") {
    applyDegrade(s, rec);
  } else {
    throw std::runtime_error("unknown journal op " + op);
  }
}

PoolJournal::Replay openJournal(PoolState& s) {
  try {
    s.journal = std::make_unique<PoolJournal>(s.options.journalDir);
    return s.journal->open();
  } catch (const std::exception& e) {
    throw PoolError(PoolError::Kind::kStorage, std::string("journal: ") + e.what());
  }
}

void loadSnapshot(PoolState& s, const json& snap) {
  for (const auto& h : snap.at("hosts")) installHost(s, hostFromRecord(h));
  for (const auto& a : snap.at("allocations")) addAllocation(s, allocationFromJson(a));
  s.journalSeq = snap.at("seq").get<std::uint64_t>();
  s.nextSequence = std::max(s.nextSequence, snap.value("next_sequence", std::uint64_t(1)));
}

/// Applies the records the snapshot does not hold yet; returns how many.
std::size_t applyRecords(PoolState& s, const std::vector<json>& records) {
  std::size_t applied = 0;
  for (const auto& rec : records) {
    const auto seq = rec.at("seq").get<std::uint64_t>();
    if (seq <= s.journalSeq) continue;  // already in the snapshot
    applyRecord(s, rec);
    s.journalSeq = seq;
    ++applied;
  }
  return applied;
}

}  // namespace

void record(PoolState& s, json rec) {
  if (!s.journal) return;
  rec["seq"] = s.journalSeq + 1;
  try {
    s.journal->append(rec);
  } catch (const std::exception& e) {
    throw PoolError(PoolError::Kind::kStorage, std::string("journal: ") + e.what());
  }
  ++s.journalSeq;
}

void compact(PoolState& s) {
  if (!s.journal) return;
  try {
    s.journal->writeSnapshot(snapshotJson(s));
  } catch (const std::exception& e) {
    spdlog::error("pool: compaction failed (the journal keeps growing): {}", e.what());
  }
}

void maybeCompact(PoolState& s) {
  if (s.journal &&
      s.journal->recordsSinceSnapshot() >= std::max<std::size_t>(s.options.compactEvery, 1))
    compact(s);
}

void applyReplay(PoolState& s, const std::optional<json>& snapshot,
                 const std::vector<json>& records) {
  if (snapshot) loadSnapshot(s, *snapshot);
  const std::size_t applied = applyRecords(s, records);
  s.preemptions = 0;  // the metric counts preemptions of this process
  spdlog::info("pool: replayed {} hosts, {} allocations ({} journal records)", s.hosts.size(),
               s.allocations.size(), applied);
}

void replay(PoolState& s) {
  PoolJournal::Replay r = openJournal(s);
  s.tornBytes = r.tornBytes;
  if (r.tornBytes)
    spdlog::warn(
        "pool: cut a torn journal tail of {} bytes (the last write, never acknowledged) in {}; "
        "the bytes are kept in {}",
        r.tornBytes, s.options.journalDir.string(), r.tornSavedAs.string());
  try {
    applyReplay(s, r.snapshot, r.records);
  } catch (const std::exception& e) {
    throw PoolError(PoolError::Kind::kStorage,
                    "journal: cannot replay " + s.options.journalDir.string() + ": " + e.what());
  }
}

}  // namespace ibfabric::scheduler_hooks::pool_impl
