// FakeMemberDaemon: an in-process HTTP server on 127.0.0.1 (port 0) that plays one ibfabricd for
// the federation's unit tests: canned JSON (or text) answers per method and path, or a handler;
// and the ways a member fails — slow (every answer delayed), malformed (answers that are not
// JSON), down (stop(): the port refuses connections). Records the requests it saw.
//
// Thread-safety: the setters and requests() from the test thread while the server thread
// answers (one mutex).
#pragma once

#include <httplib.h>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace ibfabric::testing {

class FakeMemberDaemon {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  FakeMemberDaemon();
  ~FakeMemberDaemon();
  FakeMemberDaemon(const FakeMemberDaemon&) = delete;
  FakeMemberDaemon& operator=(const FakeMemberDaemon&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  /// `method` `path` (no query) answers `status` with `body` as JSON.
  void json(const std::string& method, const std::string& path, int status, nlohmann::json body);
  /// ... with `text` as `contentType`.
  void text(const std::string& method, const std::string& path, int status, std::string text,
            std::string contentType = "text/plain");
  /// ... by `handler` (which sees the query parameters).
  void handle(const std::string& method, const std::string& path, Handler handler);

  /// Every answer waits this long first (a slow member).
  void setDelay(std::chrono::milliseconds delay);
  /// Every answer is "{not json" (a member that answers garbage).
  void setMalformed(bool malformed);
  /// Stops serving: the port refuses connections from now on (a member that is down).
  void stop();

  struct Seen {
    std::string method, path, query, body, authorization;
  };
  std::vector<Seen> requests() const;

 private:
  void serve(const httplib::Request& req, httplib::Response& res);

  httplib::Server server_;
  std::thread thread_;
  int port_ = -1;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, Handler> routes_;
  std::chrono::milliseconds delay_{0};
  bool malformed_ = false;
  std::vector<Seen> seen_;
};

}  // namespace ibfabric::testing
