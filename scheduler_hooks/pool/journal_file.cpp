// PoolJournal: length + CRC-32 records appended with fdatasync, torn-tail recovery (the checks
// are journal_check.cpp's), the directory lock, the atomically renamed snapshot and the repair.
#include "scheduler_hooks/pool/journal_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "scheduler_hooks/pool/journal_check.h"

namespace ibfabric::scheduler_hooks {
namespace {

std::array<std::uint32_t, 256> makeCrcTable() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

void writeAll(int fd, const char* p, std::size_t n, const std::string& what) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail(what);
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void fsyncDir(const std::filesystem::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail("open " + dir.string());
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("fsync " + dir.string());
  }
  ::close(fd);
}

/// Creates (or replaces) `file` with `bytes` and fsyncs it; the caller fsyncs the directory.
void writeDurably(const std::filesystem::path& file, std::string_view bytes) {
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("open " + file.string());
  try {
    writeAll(fd, bytes.data(), bytes.size(), "write " + file.string());
    if (::fsync(fd) != 0) fail("fsync " + file.string());
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

std::filesystem::path createdDir(std::filesystem::path dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
  return dir;
}

std::string utcStamp() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

void putLe32(char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

}  // namespace

std::uint32_t crc32(std::string_view data) {
  static const auto table = makeCrcTable();
  std::uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : data) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

PoolJournal::PoolJournal(std::filesystem::path dir)
    : dir_(createdDir(std::move(dir))), lock_(dir_) {}

PoolJournal::~PoolJournal() {
  if (fd_ >= 0) ::close(fd_);
}

PoolJournal::Replay PoolJournal::open() {
  Replay out;
  out.snapshot = readSnapshot(dir_);
  const auto logPath = dir_ / "journal.log";
  if (fd_ >= 0) ::close(fd_);
  const bool existed = std::filesystem::exists(logPath);
  fd_ = ::open(logPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("open " + logPath.string());
  if (!existed) fsyncDir(dir_);  // the new file's directory entry is durable too
  const std::string data = readFileBytes(logPath);
  JournalScan scan = scanJournal(data, snapshotSeq(out.snapshot));
  throwIfCorrupt(scan, logPath);
  out.records = std::move(scan.records);
  records_ = out.records.size();
  if (scan.validBytes < data.size()) {
    out.tornBytes = data.size() - scan.validBytes;
    out.tornSavedAs = logPath.string() + ".torn-" + utcStamp();
    writeDurably(out.tornSavedAs, std::string_view(data).substr(scan.validBytes));
    fsyncDir(dir_);
    if (::ftruncate(fd_, static_cast<off_t>(scan.validBytes)) != 0)
      fail("truncate " + logPath.string());
    if (::fdatasync(fd_) != 0) fail("fdatasync " + logPath.string());
  }
  if (::lseek(fd_, static_cast<off_t>(scan.validBytes), SEEK_SET) < 0)
    fail("seek " + logPath.string());
  return out;
}

void PoolJournal::append(const nlohmann::json& record) {
  if (fd_ < 0) throw std::runtime_error("journal not open");
  const std::string payload = record.dump();
  if (payload.size() > kMaxJournalRecord) throw std::runtime_error("journal record too large");
  std::string buf(8 + payload.size(), '\0');
  putLe32(buf.data(), static_cast<std::uint32_t>(payload.size()));
  putLe32(buf.data() + 4, crc32(payload));
  std::memcpy(buf.data() + 8, payload.data(), payload.size());
  const off_t at = ::lseek(fd_, 0, SEEK_CUR);
  try {
    writeAll(fd_, buf.data(), buf.size(), "write journal");
    if (::fdatasync(fd_) != 0) fail("fdatasync journal");
  } catch (...) {
    // Leave no half record behind for the next append to follow.
    if (at >= 0 && ::ftruncate(fd_, at) == 0) ::lseek(fd_, at, SEEK_SET);
    throw;
  }
  ++records_;
}

void PoolJournal::writeSnapshot(const nlohmann::json& state) {
  const auto tmp = dir_ / "snapshot.json.tmp";
  writeDurably(tmp, state.dump());
  if (::rename(tmp.c_str(), (dir_ / "snapshot.json").c_str()) != 0) fail("rename snapshot");
  fsyncDir(dir_);
  if (fd_ >= 0) {
    if (::ftruncate(fd_, 0) != 0) fail("truncate journal");
    if (::fdatasync(fd_) != 0) fail("fdatasync journal");
    ::lseek(fd_, 0, SEEK_SET);
  }
  records_ = 0;
}

PoolJournal::Repair PoolJournal::repair(const std::filesystem::path& dir) {
  const DirectoryLock lock(dir);
  const auto snapshot = readSnapshot(dir);
  const auto logPath = dir / "journal.log";
  const std::string data = readFileBytes(logPath);
  const JournalScan scan = scanJournal(data, snapshotSeq(snapshot));
  Repair r;
  r.keptRecords = scan.records.size();
  r.keptBytes = scan.validBytes;
  if (!scan.bad) return r;
  r.droppedGoodRecords = scan.bad->goodAfter;
  r.savedAs = logPath.string() + ".corrupt-" + utcStamp();
  writeDurably(r.savedAs, data);
  fsyncDir(dir);
  const int fd = ::open(logPath.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) fail("open " + logPath.string());
  const bool ok = ::ftruncate(fd, static_cast<off_t>(scan.validBytes)) == 0 && ::fdatasync(fd) == 0;
  ::close(fd);
  if (!ok) fail("truncate " + logPath.string());
  return r;
}

}  // namespace ibfabric::scheduler_hooks
