// DirectoryLock: flock(LOCK_EX | LOCK_NB) on `<dir>/lock`, the holder's pid written inside.
#include "scheduler_hooks/pool/directory_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace ibfabric::scheduler_hooks {
namespace {

/// The pid the holder wrote, or "unknown" (an older holder, or caught between lock and write).
std::string holderPid(const std::filesystem::path& file) {
  std::ifstream in(file);
  long pid = 0;
  if (in >> pid && pid > 0) return std::to_string(pid);
  return "unknown";
}

}  // namespace

DirectoryLock::DirectoryLock(const std::filesystem::path& dir) : file_(dir / "lock") {
  fd_ = ::open(file_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::runtime_error("open " + file_.string() + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw DirectoryLockedError(dir.string() + " is in use by another process (pid " +
                                 holderPid(file_) + ", another ibfabricd on this directory?)");
    throw std::runtime_error("lock " + file_.string() + ": " + std::strerror(err));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  // The pid is only for the message of the next one refused: a failure here is harmless.
  if (::ftruncate(fd_, 0) == 0) {
    [[maybe_unused]] const ssize_t n = ::pwrite(fd_, pid.data(), pid.size(), 0);
  }
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace ibfabric::scheduler_hooks
