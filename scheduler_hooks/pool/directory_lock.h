// DirectoryLock: an exclusive flock(2) on `<dir>/lock`, held for the object's life, so that one
// process at a time owns a state directory (the pool's journal). The holder writes its pid into
// the file; a second process (or a second lock in the same process) is refused with a message
// naming that pid. The lock ends with the process, however it ends (kill -9 included): there is
// no stale lock to clean up; the file itself stays.
//
// Not thread-safe; movable-only resource.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

namespace ibfabric::scheduler_hooks {

/// The directory is locked by someone else; what() names the directory and the holder's pid.
class DirectoryLockedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class DirectoryLock {
 public:
  /// Throws DirectoryLockedError when another holder has it, std::runtime_error on I/O errors.
  explicit DirectoryLock(const std::filesystem::path& dir);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path file_;
  int fd_ = -1;
};

}  // namespace ibfabric::scheduler_hooks
