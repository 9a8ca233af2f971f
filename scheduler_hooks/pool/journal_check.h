// Reading and checking the pool journal (the format is PoolJournal's, journal_file.h) without
// changing it: the scan PoolJournal::open() trusts, `ibfabric pool journal verify` and
// `--check-config` print, and PoolJournal::repair() acts on.
//
// A record is good when its frame is (length 1 .. 64 MiB, inside the file, CRC-32 matching), its
// payload is a JSON object, and its "seq" is a positive integer one above the record before it.
// The first record's seq is 1 without a snapshot, and at most the snapshot's seq + 1 with one
// (records the snapshot already holds are left over from a crash during compaction).
// The first bad record decides what the journal is:
//   - a torn tail: its frame is bad and no good frame starts anywhere after it — the last write,
//     cut by a crash before its fdatasync returned (so never acknowledged); it may be cut off;
//   - corrupt: anything else (a bad frame with good frames after it, a zero-length header, a good
//     frame with bad JSON, a sequence gap, a sequence not increasing) — nothing may be cut.
//
// Plain functions, no state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ibfabric::scheduler_hooks {

inline constexpr std::uint32_t kMaxJournalRecord = 64u << 20;

/// A journal corrupt before its end; what() names the file, the offset and the record number
/// and says how the operator gets out (docs/pool.md "Journal").
class JournalCorruptError : public std::runtime_error {
 public:
  JournalCorruptError(const std::filesystem::path& file, std::uint64_t offset, std::size_t record,
                      const std::string& reason);
  std::uint64_t offset() const { return offset_; }
  std::size_t record() const { return record_; }  ///< 1-based

 private:
  std::uint64_t offset_;
  std::size_t record_;
};

struct JournalScan {
  struct Bad {
    std::uint64_t offset = 0;
    std::size_t record = 0;  ///< 1-based
    std::string reason;
    bool torn = false;          ///< a torn tail (see above); otherwise corrupt
    std::size_t goodAfter = 0;  ///< good frames after it
  };
  std::vector<nlohmann::json> records;  ///< the good records before the first bad one
  std::uint64_t validBytes = 0;         ///< their bytes: the offset of the first bad record
  std::uint64_t totalBytes = 0;
  std::optional<Bad> bad;
};

/// Scans journal bytes; `snapshotSeq` is the snapshot's "seq" when there is a snapshot.
JournalScan scanJournal(std::string_view data, std::optional<std::uint64_t> snapshotSeq);
/// Throws JournalCorruptError when `scan` found more than a torn tail.
void throwIfCorrupt(const JournalScan& scan, const std::filesystem::path& file);

/// `dir`/snapshot.json, or nothing when there is none; throws std::runtime_error when it is not
/// a JSON object with a "seq" (it is only ever replaced by rename: a bad one is not a torn write).
std::optional<nlohmann::json> readSnapshot(const std::filesystem::path& dir);
/// The snapshot's "seq", when there is a snapshot.
std::optional<std::uint64_t> snapshotSeq(const std::optional<nlohmann::json>& snapshot);
/// The whole file's bytes (empty when it does not exist).
std::string readFileBytes(const std::filesystem::path& file);

struct JournalReport {
  std::optional<std::uint64_t> snapshotSeq;
  std::size_t records = 0;
  std::uint64_t firstSeq = 0, lastSeq = 0;  ///< of the records; 0 without any
  std::uint64_t bytes = 0;
  std::uint64_t tornBytes = 0;  ///< a torn tail PoolJournal::open() would cut
};
/// Checks `dir` read-only, without its lock (safe beside a running daemon). Throws
/// JournalCorruptError or std::runtime_error.
JournalReport verifyJournal(const std::filesystem::path& dir);

}  // namespace ibfabric::scheduler_hooks
