// getJson: GET a path of a test daemon and check the answer's status and shape — the body is JSON
// and an error carries {"error": {"code", "message"}} — with gtest expectations. JsonClient: the
// integration tests' client of a daemon on 127.0.0.1. Test support.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace ibfabric::testing {

/// The parsed body (null when there was no answer).
nlohmann::json getJson(httplib::Client& client, const std::string& path, int status);

/// A daemon's REST API as the integration tests use it: the status and the body as JSON (null
/// when not JSON, status -1 when nothing answered).
struct JsonClient {
  explicit JsonClient(int port, int readTimeoutSeconds = 10);
  std::pair<int, nlohmann::json> get(const std::string& path);
  /// GET that expects 200 (a gtest expectation); the body.
  nlohmann::json ok(const std::string& path);
  /// POST with an empty JSON body and the bearer token.
  std::pair<int, nlohmann::json> post(const std::string& path, const std::string& token);
  httplib::Client client;
};

/// The daemon's /metrics once it holds every one of `needles` (the state families are rendered
/// off the request path, so a scrape may lag the REST answers by one rendering): waits up to
/// `timeout`; the last body seen either way, so the caller's expectations name what is missing.
std::string metricsWith(httplib::Client& client, const std::vector<std::string>& needles,
                        std::chrono::milliseconds timeout = std::chrono::seconds(30));

/// Whether /api/v1/events holds an event of `type` naming `node` at either end.
bool hasEvent(JsonClient& http, const std::string& type, const std::string& node);

/// The GUID ("0x…") of the node with this description in /api/v1/nodes; "" when none.
std::string guidOf(JsonClient& http, const std::string& description);

}  // namespace ibfabric::testing
