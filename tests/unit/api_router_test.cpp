// The Router's per-route rules over real HTTP on loopback: body limits (the default one for every
// route, a larger one for the extender verbs; declared lengths refused before the body
// is read, chunked bodies after) answered with the same 413 JSON, and the token check of the
// write routes running before their handlers.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "tests/support/in_process_daemon.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class ApiRouter : public ::testing::Test {
 protected:
  void SetUp() override {
    daemon_.topology().pushFailure("no fabric");  // never crawled: handlers answer 503
    RestOptions ro;
    ro.token = "t0ken";
    ASSERT_GT(daemon_.serve(ro), 0);
    daemon_.client().set_write_timeout(20, 0);
  }
  static void expectTooLarge(const httplib::Result& res) {
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 413);
    json j = json::parse(res->body, nullptr, false);
    EXPECT_EQ(j["error"]["code"], 413) << res->body;
    EXPECT_EQ(j["error"]["message"], "request body too large") << res->body;
  }

  testing::InProcessDaemon daemon_;
};

/// A valid ExtenderArgs body of at least `bytes` bytes (the pod carries a long annotation).
std::string extenderArgs(std::size_t bytes) {
  json pod = {
      {"metadata", {{"name", "p"}, {"annotations", {{"padding", std::string(bytes, 'x')}}}}}};
  return json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", {"dgx0001"}}}.dump();
}

TEST_F(ApiRouter, DefaultLimitForEveryRouteButTheExtenderVerbs) {
  const std::size_t over = RestOptions{}.maxBodyBytes + 1;
  // A route without a limit of its own keeps the default, whether it needs the token or not.
  expectTooLarge(
      daemon_.client().Post("/api/v1/placement", std::string(over, ' '), "application/json"));
  expectTooLarge(daemon_.client().Post("/api/v1/discover", std::string(over, 'x'), "text/plain"));
  // The extender verbs read 1 MiB (their handler answers: no fabric yet).
  for (const char* verb : {"/scheduler/prioritize", "/scheduler/filter"}) {
    auto res = daemon_.client().Post(verb, extenderArgs(1 << 20), "application/json");
    ASSERT_TRUE(res) << verb;
    EXPECT_EQ(res->status, 503) << verb << ": " << res->body.substr(0, 200);
    json j = json::parse(res->body, nullptr, false);
    EXPECT_EQ(j["Error"], "ibfabric: the fabric has not been discovered yet") << verb;
  }
}

TEST_F(ApiRouter, ChunkedBodiesKeepTheRouteLimit) {
  // No Content-Length: the body is read, then held to the route's own limit.
  const std::string chunk(16 * 1024, ' ');
  auto chunked = [&](std::size_t chunks) {
    return [&chunk, chunks, sent = std::size_t{0}](std::size_t, httplib::DataSink& sink) mutable {
      if (sent++ < chunks) return sink.write(chunk.data(), chunk.size());
      sink.done();
      return true;
    };
  };
  expectTooLarge(daemon_.client().Post("/api/v1/placement", chunked(8), "application/json"));
  auto ok = daemon_.client().Post("/api/v1/placement", chunked(1), "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 400) << ok->body;  // read and parsed: blanks are not JSON
}

TEST_F(ApiRouter, TokenRoutesCheckBeforeTheHandler) {
  // Without the token the handler never runs: no crawl is requested, 401/403 answer.
  auto res = daemon_.client().Post("/api/v1/ports/0x1/1/clear-counters", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401) << res->body;
  res = daemon_.client().Post("/api/v1/ports/0x1/1/clear-counters",
                              httplib::Headers{{"Authorization", "Bearer t0ken"}}, "",
                              "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503) << res->body;  // the handler's own answer: not crawled yet
  // A read route of the same path needs no token.
  res = daemon_.client().Get("/api/v1/ports/0x1/1");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503) << res->body;
}

}  // namespace
}  // namespace ibfabric::api
