// PoolJournal: the pool's durable storage in one directory — an append-only journal of JSON
// records and a snapshot.
//
//   journal.log    records [u32 length LE][u32 CRC-32 (IEEE) of the payload LE][payload], each
//                  written with one write() and made durable with fdatasync() before append()
//                  returns. On open, a short or corrupt record ends the journal: it (and anything
//                  after it) is a torn write and is cut off (Replay::tornBytes says how much).
//   snapshot.json  the whole state, written to snapshot.json.tmp, fsync'd, renamed over the old
//                  one and the directory fsync'd; then the journal is emptied. The caller puts a
//                  sequence number into records and snapshot and skips records the snapshot
//                  already holds (a crash between rename and truncation leaves such records).
//
// Not thread-safe: the pool calls it under its own mutex.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

namespace ibfabric::scheduler_hooks {

/// CRC-32 (IEEE 802.3, reflected, as zlib's crc32()).
std::uint32_t crc32(std::string_view data);

class PoolJournal {
 public:
  struct Replay {
    std::optional<nlohmann::json> snapshot;
    std::vector<nlohmann::json> records;  ///< in write order
    std::uint64_t tornBytes = 0;          ///< cut off the end of the journal
  };

  /// Creates the directory when missing. Throws std::runtime_error on I/O errors.
  explicit PoolJournal(std::filesystem::path dir);
  ~PoolJournal();
  PoolJournal(const PoolJournal&) = delete;
  PoolJournal& operator=(const PoolJournal&) = delete;

  /// Reads snapshot and journal, cuts a torn tail, and opens the journal for appending.
  Replay open();
  /// Throws std::runtime_error when the record cannot be made durable.
  void append(const nlohmann::json& record);
  void writeSnapshot(const nlohmann::json& state);
  std::size_t recordsSinceSnapshot() const { return records_; }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  int fd_ = -1;
  std::size_t records_ = 0;
};

}  // namespace ibfabric::scheduler_hooks
