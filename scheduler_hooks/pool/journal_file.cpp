// PoolJournal: length + CRC-32 records appended with fdatasync, torn-tail recovery, and the
// atomically renamed snapshot.
#include "scheduler_hooks/pool/journal_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ibfabric::scheduler_hooks {
namespace {

constexpr std::uint32_t kMaxRecord = 64u << 20;

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

std::uint32_t le32(const unsigned char* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 |
         std::uint32_t(p[3]) << 24;
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

PoolJournal::PoolJournal(std::filesystem::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw std::runtime_error("cannot create " + dir_.string() + ": " + ec.message());
}

PoolJournal::~PoolJournal() {
  if (fd_ >= 0) ::close(fd_);
}

PoolJournal::Replay PoolJournal::open() {
  Replay out;
  const auto snapPath = dir_ / "snapshot.json";
  if (std::filesystem::exists(snapPath)) {
    std::ifstream in(snapPath);
    std::ostringstream buf;
    buf << in.rdbuf();
    auto j = nlohmann::json::parse(buf.str(), nullptr, false);
    // The snapshot is only ever replaced by rename: a bad one is not a torn write.
    if (j.is_discarded() || !j.is_object())
      throw std::runtime_error("corrupt snapshot " + snapPath.string());
    out.snapshot = std::move(j);
  }
  const auto logPath = dir_ / "journal.log";
  if (fd_ >= 0) ::close(fd_);
  const bool existed = std::filesystem::exists(logPath);
  fd_ = ::open(logPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("open " + logPath.string());
  if (!existed) fsyncDir(dir_);  // the new file's directory entry is durable too
  std::string data;
  {
    std::ifstream in(logPath, std::ios::binary);
    data.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::size_t pos = 0;
  records_ = 0;
  while (pos + 8 <= data.size()) {
    const auto* h = reinterpret_cast<const unsigned char*>(data.data() + pos);
    const std::uint32_t len = le32(h), crc = le32(h + 4);
    if (len == 0 || len > kMaxRecord || pos + 8 + len > data.size()) break;
    std::string_view payload(data.data() + pos + 8, len);
    if (crc32(payload) != crc) break;
    auto j = nlohmann::json::parse(payload, nullptr, false);
    if (j.is_discarded()) break;
    out.records.push_back(std::move(j));
    pos += 8 + len;
    ++records_;
  }
  if (pos < data.size()) {
    out.tornBytes = data.size() - pos;
    if (::ftruncate(fd_, static_cast<off_t>(pos)) != 0) fail("truncate " + logPath.string());
    if (::fdatasync(fd_) != 0) fail("fdatasync " + logPath.string());
  }
  if (::lseek(fd_, static_cast<off_t>(pos), SEEK_SET) < 0) fail("seek " + logPath.string());
  return out;
}

void PoolJournal::append(const nlohmann::json& record) {
  if (fd_ < 0) throw std::runtime_error("journal not open");
  const std::string payload = record.dump();
  if (payload.size() > kMaxRecord) throw std::runtime_error("journal record too large");
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
  const std::string text = state.dump();
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("open " + tmp.string());
  try {
    writeAll(fd, text.data(), text.size(), "write " + tmp.string());
    if (::fsync(fd) != 0) fail("fsync " + tmp.string());
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), (dir_ / "snapshot.json").c_str()) != 0) fail("rename snapshot");
  fsyncDir(dir_);
  if (fd_ >= 0) {
    if (::ftruncate(fd_, 0) != 0) fail("truncate journal");
    if (::fdatasync(fd_) != 0) fail("fdatasync journal");
    ::lseek(fd_, 0, SEEK_SET);
  }
  records_ = 0;
}

}  // namespace ibfabric::scheduler_hooks
