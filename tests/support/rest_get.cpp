#include "tests/support/rest_get.h"

#include <gtest/gtest.h>

#include "tests/support/subprocess.h"

namespace ibfabric::testing {

nlohmann::json getJson(httplib::Client& client, const std::string& path, int status) {
  auto res = client.Get(path.c_str());
  EXPECT_TRUE(res) << path;
  if (!res) return {};
  EXPECT_EQ(res->status, status) << path << ": " << res->body;
  nlohmann::json j = nlohmann::json::parse(res->body, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << path << ": " << res->body;
  if (status >= 400) {
    EXPECT_EQ(j["error"]["code"], status) << res->body;
    EXPECT_TRUE(j["error"]["message"].is_string()) << res->body;
  }
  return j;
}

JsonClient::JsonClient(int port, int readTimeoutSeconds) : client("127.0.0.1", port) {
  client.set_connection_timeout(5, 0);
  client.set_read_timeout(readTimeoutSeconds, 0);
}

std::pair<int, nlohmann::json> JsonClient::get(const std::string& path) {
  auto res = client.Get(path.c_str());
  if (!res) return {-1, nlohmann::json()};
  return {res->status, nlohmann::json::parse(res->body, nullptr, false)};
}

bool hasEvent(JsonClient& http, const std::string& type, const std::string& node) {
  const nlohmann::json all = http.ok("/api/v1/events?since=0&limit=10000");
  for (const auto& e : all["events"])
    if (e["type"] == type &&
        (e["node"] == node || (e["remote"].is_object() && e["remote"]["node"] == node)))
      return true;
  return false;
}

nlohmann::json JsonClient::ok(const std::string& path) {
  auto [status, body] = get(path);
  EXPECT_EQ(status, 200) << path << ": " << body.dump();
  return body;
}

std::pair<int, nlohmann::json> JsonClient::post(const std::string& path, const std::string& token) {
  httplib::Headers h{{"Authorization", "Bearer " + token}};
  auto res = client.Post(path.c_str(), h, "", "application/json");
  if (!res) return {-1, nlohmann::json()};
  return {res->status, nlohmann::json::parse(res->body, nullptr, false)};
}

std::string metricsWith(httplib::Client& client, const std::vector<std::string>& needles,
                        std::chrono::milliseconds timeout) {
  std::string body;
  waitFor(
      [&] {
        auto res = client.Get("/metrics");
        if (!res || res->status != 200) return false;
        body = res->body;
        for (const auto& n : needles)
          if (body.find(n) == std::string::npos) return false;
        return true;
      },
      timeout, std::chrono::milliseconds(100));
  return body;
}

std::string guidOf(JsonClient& http, const std::string& description) {
  const nlohmann::json nodes = http.ok("/api/v1/nodes");  // alive while iterating
  for (const auto& n : nodes["nodes"])
    if (n["description"] == description) return n["guid"];
  return "";
}

}  // namespace ibfabric::testing
