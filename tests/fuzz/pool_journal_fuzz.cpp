// Fuzz target: the GPU pool's journal (scheduler_hooks/pool/journal_check.h,
// journal_records.h) as PoolJournal::open() and the pool's replay read it at start: the record
// frames ([u32 length][u32 CRC-32][JSON payload]), the sequence checks, then the snapshot and
// the records decoded into the pool state (hosts, allocations, frees, degradations).
//
// The first byte chooses how the rest is read:
//   even: raw journal bytes (the frame decoder; bit 1 set: a snapshot with "seq": 3 exists);
//   odd:  lines; the first is the snapshot's JSON (empty: none), every other line a record's
//         payload, framed here with its true length and CRC so the decoder behind the frames
//         is reached (a mutation of framed bytes almost never keeps the CRC right).
// Replay either gives a state or throws (PoolError at start); memory errors, undefined
// behaviour and aborts are findings.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "scheduler_hooks/pool/journal_check.h"
#include "scheduler_hooks/pool/journal_file.h"
#include "scheduler_hooks/pool/journal_records.h"
#include "scheduler_hooks/pool/pool_state.h"
#include "tests/fuzz/fuzz_support.h"

using namespace ibfabric;
using namespace ibfabric::scheduler_hooks;
using nlohmann::json;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

namespace {

void putLe32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

/// The journal PoolJournal::append() would have written for these payloads.
std::string framed(std::string_view lines, std::optional<json>& snapshot) {
  std::string out;
  bool first = true;
  while (!lines.empty()) {
    const auto nl = lines.find('\n');
    const std::string_view line = lines.substr(0, nl);
    lines = nl == std::string_view::npos ? std::string_view() : lines.substr(nl + 1);
    if (first) {
      first = false;
      if (!line.empty()) snapshot = json::parse(line, nullptr, false);
      continue;
    }
    putLe32(out, static_cast<std::uint32_t>(line.size()));
    putLe32(out, crc32(line));
    out.append(line);
  }
  return out;
}

void replayJournal(std::string_view journal, std::optional<json> snapshot) {
  std::optional<std::uint64_t> seq;
  try {
    // readSnapshot()'s checks: a JSON object with an unsigned "seq".
    if (snapshot && (!snapshot->is_object() || !snapshot->contains("seq") ||
                     !(*snapshot)["seq"].is_number_unsigned()))
      return;
    seq = snapshotSeq(snapshot);
  } catch (const std::exception&) {
    return;
  }
  const JournalScan scan = scanJournal(journal, seq);
  try {
    throwIfCorrupt(scan, "fuzz/journal.log");
  } catch (const JournalCorruptError&) {
    return;  // the daemon refuses to start, the file untouched
  }
  pool_impl::PoolState state;
  try {
    pool_impl::applyReplay(state, snapshot, scan.records);
  } catch (const std::exception&) {
    return;  // replay() reports it as PoolError(kStorage)
  }
  (void)state.totalGpus();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest = fuzz::asText(data + 1, size - 1);
  if (data[0] % 2 == 0) {
    std::optional<json> snapshot;
    if (data[0] & 2)
      snapshot = json{{"seq", 3}, {"hosts", json::array()}, {"allocations", json::array()}};
    replayJournal(rest, snapshot);
    return 0;
  }
  std::optional<json> snapshot;
  const std::string journal = framed(rest, snapshot);
  replayJournal(journal, snapshot);
  return 0;
}
