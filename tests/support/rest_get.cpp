#include "tests/support/rest_get.h"

#include <gtest/gtest.h>

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

}  // namespace ibfabric::testing
