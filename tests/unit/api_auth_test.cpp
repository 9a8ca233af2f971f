// The one write check of the HTTP server: constant-time comparison, and BearerAuth's answers
// (403 writes disabled, 401 no bearer token, 403 wrong token, the token replaced on reload).
#include "api/http/auth.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

namespace ibfabric::api {
namespace {

TEST(ApiAuth, ConstantTimeEqualsComparesWholeStrings) {
  EXPECT_TRUE(constantTimeEquals("", ""));
  EXPECT_TRUE(constantTimeEquals("t0ken", "t0ken"));
  EXPECT_FALSE(constantTimeEquals("t0ken", "t0keN"));
  EXPECT_FALSE(constantTimeEquals("t0ken", "t0ke"));  // a prefix is not the token
  EXPECT_FALSE(constantTimeEquals("t0ke", "t0ken"));
  EXPECT_FALSE(constantTimeEquals("t0ken", std::string_view("t0ken\0", 6)));
  EXPECT_FALSE(constantTimeEquals(std::string_view("a\0b", 3), std::string_view("a\0c", 3)));
  EXPECT_FALSE(constantTimeEquals("", "x"));
}

/// The status and message BearerAuth answers for an Authorization header (none when absent);
/// status 0 when the request may write.
std::pair<int, std::string> check(const BearerAuth& auth, const char* header) {
  httplib::Request req;
  if (header) req.headers.emplace("Authorization", header);
  httplib::Response res;
  if (auth.authorize(req, res)) return {0, ""};
  auto body = nlohmann::json::parse(res.body);
  EXPECT_EQ(body["error"]["code"], res.status);
  return {res.status, body["error"]["message"].get<std::string>()};
}

TEST(ApiAuth, BearerAuthAnswers) {
  BearerAuth off;
  EXPECT_EQ(check(off, "Bearer anything").first, 403);
  EXPECT_EQ(check(off, nullptr).second, "writes are disabled (no api_token set)");

  BearerAuth auth("t0ken");
  EXPECT_EQ(check(auth, "Bearer t0ken").first, 0);
  EXPECT_EQ(check(auth, nullptr), std::make_pair(401, std::string("bearer token required")));
  EXPECT_EQ(check(auth, "Basic dDBrZW4=").first, 401);
  EXPECT_EQ(check(auth, "Bearer").first, 401);
  EXPECT_EQ(check(auth, "Bearer t0ke"), std::make_pair(403, std::string("wrong token")));
  EXPECT_EQ(check(auth, "Bearer t0ken ").first, 403);
  EXPECT_EQ(check(auth, "bearer t0ken").first, 401);

  auth.setToken("n3w");  // SIGHUP reload
  EXPECT_EQ(check(auth, "Bearer t0ken").first, 403);
  EXPECT_EQ(check(auth, "Bearer n3w").first, 0);
  auth.setToken("");
  EXPECT_EQ(check(auth, "Bearer n3w").first, 403);
}

}  // namespace
}  // namespace ibfabric::api
