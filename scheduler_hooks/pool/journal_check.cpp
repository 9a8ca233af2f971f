// Reading and checking the pool journal without changing it: frames, resynchronisation after a
// bad frame (torn tail or corruption), sequence numbers, the snapshot.
#include "scheduler_hooks/pool/journal_check.h"

#include <fstream>
#include <iterator>

#include "scheduler_hooks/pool/journal_file.h"

namespace ibfabric::scheduler_hooks {
namespace {

std::uint32_t le32(const unsigned char* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 |
         std::uint32_t(p[3]) << 24;
}

/// The payload of the frame at `pos`, or why there is none.
struct Frame {
  std::string_view payload;
  const char* bad = nullptr;
};

Frame frameAt(std::string_view data, std::size_t pos) {
  if (data.size() - pos < 8) return {{}, "a record header cut short"};
  const auto* h = reinterpret_cast<const unsigned char*>(data.data() + pos);
  const std::uint32_t len = le32(h), crc = le32(h + 4);
  if (len == 0) return {{}, "a zero-length record header"};
  if (len > kMaxJournalRecord) return {{}, "a record length over 64 MiB"};
  if (data.size() - pos - 8 < len) return {{}, "a record running past the end of the file"};
  const std::string_view payload = data.substr(pos + 8, len);
  if (crc32(payload) != crc) return {{}, "a CRC-32 mismatch"};
  return {payload, nullptr};
}

/// Good frames from `pos` on, skipping bad bytes one at a time (the resynchronisation a torn tail
/// never survives: nothing good is ever written after it).
std::size_t goodFramesFrom(std::string_view data, std::size_t pos) {
  std::size_t good = 0;
  while (pos < data.size()) {
    const Frame f = frameAt(data, pos);
    if (f.bad) {
      ++pos;
      continue;
    }
    ++good;
    pos += 8 + f.payload.size();
  }
  return good;
}

/// Why record `rec` (1-based `n`) cannot follow sequence `prev` (0: it is the first); "" when
/// it can.
std::string sequenceProblem(const nlohmann::json& rec, std::uint64_t prev, std::size_t n,
                            std::optional<std::uint64_t> snapshotSeq) {
  const auto it = rec.find("seq");
  if (it == rec.end() || !it->is_number_unsigned() || it->get<std::uint64_t>() == 0)
    return "no positive integer sequence (\"seq\": " + (it == rec.end() ? "none" : it->dump()) +
           ")";
  const std::uint64_t seq = it->get<std::uint64_t>();
  if (n == 1) {
    const std::uint64_t first = snapshotSeq ? *snapshotSeq + 1 : 1;
    if (seq > first)
      return "sequence " + std::to_string(seq) + " where " + std::to_string(first) +
             " was due (records " + std::to_string(first) + ".." + std::to_string(seq - 1) +
             " are missing)";
    return "";
  }
  if (seq == prev + 1) return "";
  if (seq <= prev)
    return "sequence " + std::to_string(seq) + " after " + std::to_string(prev) +
           " (not increasing)";
  return "sequence " + std::to_string(seq) + " after " + std::to_string(prev) + " (a gap)";
}

}  // namespace

JournalCorruptError::JournalCorruptError(const std::filesystem::path& file, std::uint64_t offset,
                                         std::size_t record, const std::string& reason)
    : std::runtime_error(
          "pool journal " + file.string() + " is corrupt at offset " + std::to_string(offset) +
          " (record " + std::to_string(record) + "): " + reason +
          "; the file is left as it is. `ibfabric pool journal verify " +
          file.parent_path().string() + "` shows it; `ibfabric pool journal repair " +
          file.parent_path().string() + "` keeps a copy and the " + std::to_string(record - 1) +
          " records before it (docs/pool.md \"Journal\")"),
      offset_(offset),
      record_(record) {}

JournalScan scanJournal(std::string_view data, std::optional<std::uint64_t> snapshotSeq) {
  JournalScan out;
  out.totalBytes = data.size();
  std::size_t pos = 0;
  std::uint64_t prev = 0;
  while (pos < data.size()) {
    const std::size_t n = out.records.size() + 1;
    const Frame f = frameAt(data, pos);
    if (f.bad) {
      const std::size_t after = goodFramesFrom(data, pos + 1);
      std::string reason = f.bad;
      if (after) reason += ", with " + std::to_string(after) + " good records after it";
      out.bad = JournalScan::Bad{pos, n, reason, after == 0, after};
      break;
    }
    auto rec = nlohmann::json::parse(f.payload, nullptr, false);
    std::string problem = rec.is_object() ? sequenceProblem(rec, prev, n, snapshotSeq)
                                          : std::string("a record that is not a JSON object");
    if (!problem.empty()) {
      const std::size_t after = goodFramesFrom(data, pos + 8 + f.payload.size());
      out.bad = JournalScan::Bad{pos, n, problem, false, after};
      break;
    }
    prev = rec["seq"].get<std::uint64_t>();
    out.records.push_back(std::move(rec));
    pos += 8 + f.payload.size();
  }
  out.validBytes = pos;
  return out;
}

void throwIfCorrupt(const JournalScan& scan, const std::filesystem::path& file) {
  if (scan.bad && !scan.bad->torn)
    throw JournalCorruptError(file, scan.bad->offset, scan.bad->record, scan.bad->reason);
}

std::string readFileBytes(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::optional<nlohmann::json> readSnapshot(const std::filesystem::path& dir) {
  const auto path = dir / "snapshot.json";
  if (!std::filesystem::exists(path)) return std::nullopt;
  auto j = nlohmann::json::parse(readFileBytes(path), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("seq") || !j["seq"].is_number_unsigned())
    throw std::runtime_error("corrupt snapshot " + path.string());
  return j;
}

std::optional<std::uint64_t> snapshotSeq(const std::optional<nlohmann::json>& snapshot) {
  if (!snapshot) return std::nullopt;
  return (*snapshot)["seq"].get<std::uint64_t>();
}

JournalReport verifyJournal(const std::filesystem::path& dir) {
  JournalReport r;
  r.snapshotSeq = snapshotSeq(readSnapshot(dir));
  const auto log = dir / "journal.log";
  const std::string data = readFileBytes(log);
  const JournalScan scan = scanJournal(data, r.snapshotSeq);
  throwIfCorrupt(scan, log);
  r.records = scan.records.size();
  if (r.records) {
    r.firstSeq = scan.records.front()["seq"].get<std::uint64_t>();
    r.lastSeq = scan.records.back()["seq"].get<std::uint64_t>();
  }
  r.bytes = scan.totalBytes;
  r.tornBytes = scan.totalBytes - scan.validBytes;
  return r;
}

}  // namespace ibfabric::scheduler_hooks
