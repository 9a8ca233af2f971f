// BoundedQueue: the hand-off between OpenSM's threads (producers, in the plugin's report()) and
// the plugin's sender thread (the one consumer).
//
// tryPush() never waits for space: when the queue is full (or closed) the item is dropped and
// counted, so OpenSM is never blocked by a slow or absent ibfabricd. The mutex is held only to
// move one item. popFor() waits at most its timeout.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

namespace ibfabric::osm {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  /// Appends; false (and one more drop counted) when full or closed.
  bool tryPush(T item) {
    {
      std::lock_guard lock(mu_);
      if (closed_ || items_.size() >= capacity_) {
        ++dropped_;
        return false;
      }
      items_.push_back(std::move(item));
    }
    cv_.notify_one();
    return true;
  }

  /// The oldest item, waiting at most `timeout`; nullopt on timeout or when closed and empty.
  std::optional<T> popFor(std::chrono::nanoseconds timeout) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, timeout, [&] { return closed_ || !items_.empty(); })) {
      return std::nullopt;
    }
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    return item;
  }

  /// Removes everything queued (counted as dropped); returns how many.
  std::size_t dropAll() {
    std::lock_guard lock(mu_);
    const std::size_t n = items_.size();
    dropped_ += n;
    items_.clear();
    return n;
  }

  /// Counts `n` more drops that happened outside the queue (e.g. a failed send).
  void countDropped(std::uint64_t n) {
    std::lock_guard lock(mu_);
    dropped_ += n;
  }

  /// Wakes waiting poppers; later pushes are dropped.
  void close() {
    {
      std::lock_guard lock(mu_);
      closed_ = true;
    }
    cv_.notify_all();
  }

  std::uint64_t dropped() const {
    std::lock_guard lock(mu_);
    return dropped_;
  }
  std::size_t size() const {
    std::lock_guard lock(mu_);
    return items_.size();
  }
  std::size_t capacity() const { return capacity_; }

 private:
  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> items_;
  std::uint64_t dropped_ = 0;
  bool closed_ = false;
};

}  // namespace ibfabric::osm
