// EventSender: the OpenSM plugin's delivery path. report() (called on OpenSM's threads) stamps a
// sequence number and tries to queue the event; a sender thread connects to ibfabricd, writes
// each event as one NDJSON line, and reconnects with exponential backoff when the daemon goes
// away.
//
// Nothing here ever blocks OpenSM: report() only takes the queue's mutex to move one item.
// Events are dropped and counted when the queue is full, while nobody listens (a reconnecting
// daemon crawls anyway; replayed stale traps would only mislead it), and when a write fails
// (with what was still queued for that connection). Every line carries the running drop count,
// and each new connection starts with a hello line.
//
// The connection is a seam (Connector): the plugin uses connectUnixSocket(); tests pass fakes.
// Thread-safety: report(), stats and stop() from any thread; start() once.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "tools/osm_plugin/event_queue.h"
#include "tools/osm_plugin/plugin_event.h"

namespace ibfabric::osm {

class Connection {
 public:
  virtual ~Connection() = default;
  /// Writes all of `data`; false when the connection is broken (it is then dropped).
  virtual bool send(std::string_view data) = 0;
};
using ConnectionPtr = std::unique_ptr<Connection>;
/// Returns nullptr when it cannot connect now (e.g. the daemon is not running).
using Connector = std::function<ConnectionPtr()>;

/// A Unix stream socket connection with a bounded write timeout; nullptr on failure.
ConnectionPtr connectUnixSocket(const std::string& path,
                                std::chrono::milliseconds writeTimeout = std::chrono::seconds(1));

struct SenderOptions {
  std::size_t queueCapacity = 4096;
  std::chrono::milliseconds backoffMin{100};
  std::chrono::milliseconds backoffMax{5000};
};

/// Next reconnect delay after a failed attempt: doubles, within [min, max].
std::chrono::milliseconds nextBackoff(std::chrono::milliseconds current,
                                      const SenderOptions& options);

class EventSender {
 public:
  /// `hello` builds the first event of each connection (its seq is stamped here).
  EventSender(Connector connector, SenderOptions options, std::function<PluginEvent()> hello);
  ~EventSender();
  EventSender(const EventSender&) = delete;
  EventSender& operator=(const EventSender&) = delete;

  void start();
  /// Stops the thread (at most one write timeout); later reports are dropped.
  void stop();

  /// Never blocks on I/O; false when the event was dropped. Never throws.
  bool report(PluginEvent event) noexcept;

  std::uint64_t dropped() const { return queue_.dropped(); }
  std::uint64_t sent() const { return sent_; }
  std::uint64_t connections() const { return connections_; }
  std::uint64_t connectAttempts() const { return connectAttempts_; }
  bool connected() const { return connected_; }

 private:
  void loop();
  /// Waits up to `d` unless stopping; false when stopping.
  bool sleepFor(std::chrono::milliseconds d);

  Connector connector_;
  SenderOptions options_;
  std::function<PluginEvent()> hello_;
  BoundedQueue<PluginEvent> queue_;
  std::atomic<std::uint64_t> nextSeq_{1};
  std::atomic<std::uint64_t> sent_{0};
  std::atomic<std::uint64_t> connections_{0};
  std::atomic<std::uint64_t> connectAttempts_{0};
  std::atomic<bool> connected_{false};
  std::mutex stopMu_;
  std::condition_variable stopCv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ibfabric::osm
