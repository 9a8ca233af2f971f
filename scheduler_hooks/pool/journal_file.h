// PoolJournal: the pool's durable storage in one directory — an append-only journal of JSON
// records and a snapshot.
//
//   journal.log    records [u32 length LE][u32 CRC-32 (IEEE) of the payload LE][payload], each
//                  written with one write() and made durable with fdatasync() before append()
//                  returns. On open the records are checked (journal_check.h): a torn tail (the
//                  last write, cut by a crash) is copied to journal.log.torn-<UTC time> and cut
//                  off (Replay::tornBytes says how much); anything else wrong — a bad record with
//                  good ones after it, a sequence gap — is JournalCorruptError and the file is
//                  left byte for byte as it was; repair() is the operator's way out.
//   snapshot.json  the whole state, written to snapshot.json.tmp, fsync'd, renamed over the old
//                  one and the directory fsync'd; then the journal is emptied. The caller puts a
//                  sequence number into records and snapshot and skips records the snapshot
//                  already holds (a crash between rename and truncation leaves such records).
//   lock           held (DirectoryLock) from construction to destruction: a second PoolJournal on
//                  the directory, in this process or another, is refused with the holder's pid.
//
// Not thread-safe: the pool calls it under its own mutex.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "scheduler_hooks/pool/directory_lock.h"

namespace ibfabric::scheduler_hooks {

/// CRC-32 (IEEE 802.3, reflected, as zlib's crc32()).
std::uint32_t crc32(std::string_view data);

class PoolJournal {
 public:
  struct Replay {
    std::optional<nlohmann::json> snapshot;
    std::vector<nlohmann::json> records;  ///< in write order
    std::uint64_t tornBytes = 0;          ///< cut off the end of the journal
    std::filesystem::path tornSavedAs;    ///< where the cut bytes were copied
  };
  struct Repair {
    std::filesystem::path savedAs;  ///< the untouched original; empty when nothing was wrong
    std::size_t keptRecords = 0;
    std::uint64_t keptBytes = 0;
    std::size_t droppedGoodRecords = 0;  ///< good records after the cut, lost by the repair
  };

  /// Creates the directory when missing and takes its lock. Throws DirectoryLockedError when
  /// another holder has it, std::runtime_error on I/O errors.
  explicit PoolJournal(std::filesystem::path dir);
  ~PoolJournal();
  PoolJournal(const PoolJournal&) = delete;
  PoolJournal& operator=(const PoolJournal&) = delete;

  /// Reads snapshot and journal, cuts a torn tail, and opens the journal for appending. Throws
  /// JournalCorruptError (the file untouched) or std::runtime_error.
  Replay open();
  /// Throws std::runtime_error when the record cannot be made durable.
  void append(const nlohmann::json& record);
  void writeSnapshot(const nlohmann::json& state);
  std::size_t recordsSinceSnapshot() const { return records_; }
  const std::filesystem::path& dir() const { return dir_; }

  /// The operator's way out of a corrupt journal (`ibfabric pool journal repair`): takes the
  /// lock (so never under a running daemon), copies journal.log byte for byte to
  /// journal.log.corrupt-<UTC time> and cuts journal.log before its first bad record.
  static Repair repair(const std::filesystem::path& dir);

 private:
  std::filesystem::path dir_;
  DirectoryLock lock_;
  int fd_ = -1;
  std::size_t records_ = 0;
};

}  // namespace ibfabric::scheduler_hooks
