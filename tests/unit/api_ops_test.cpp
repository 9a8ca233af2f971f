// The operational REST endpoints over real HTTP on loopback with faked sources: liveness and
// readiness probes while sweeps fail and recover, POST .../clear-counters (every status, the
// counters_cleared event, rates that re-baseline), the long-poll waiter cap, and the sweep
// thread re-creating a counter source that answers nothing.
#include <gtest/gtest.h>
#include <httplib.h>

#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "api/http/rest_server.h"
#include "tests/fakes/fake_sources.h"
#include "tests/support/fabrics.h"
#include "tests/support/in_process_daemon.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

class ApiOps : public ::testing::Test {
 protected:
  void start(RestOptions ro = {}, bool startService = true) {
    testing::InProcessDaemon::Options o;
    o.service.sweepInterval = 50ms;
    o.service.retryBase = 10ms;
    control_ = o.counters;
    o.counterSources = [control = control_, created = created_] {
      ++*created;
      return std::make_unique<FakeCounterSource>(control);
    };
    daemon_ = std::make_unique<testing::InProcessDaemon>(o);
    daemon_->topology().push(testing::crawledFatTreeTopology("", 2, 2, 2));
    if (ro.token.empty()) ro.token = "t0ken";
    port_ = daemon_->serve(ro);
    ASSERT_GT(port_, 0);
    if (!startService) return;
    ASSERT_TRUE(daemon_->startAndWaitReady());
  }
  FabricService& service() { return daemon_->service(); }
  json call(const std::string& method, const std::string& path, int status,
            const std::string& token = "t0ken") {
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    auto res = method == "POST" ? daemon_->client().Post(path.c_str(), h, "", "application/json")
                                : daemon_->client().Get(path.c_str(), h);
    EXPECT_TRUE(res) << path;
    if (!res) return {};
    EXPECT_EQ(res->status, status) << method << " " << path << ": " << res->body;
    json j = json::parse(res->body, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << res->body;
    if (status >= 400 && path.find("/health") == std::string::npos) {
      EXPECT_EQ(j["error"]["code"], status) << res->body;
    }
    return j;
  }
  /// GUID of the HCA "host1-1" (port 1 linked to leaf1).
  std::string hostGuid() {
    const auto nodes = call("GET", "/api/v1/nodes", 200)["nodes"];
    for (const auto& n : nodes)
      if (n["description"] == "host1-1") return n["guid"];
    ADD_FAILURE() << "no host1-1 in " << nodes.dump();
    return "";
  }

  std::shared_ptr<FakeCounterControl> control_;
  std::shared_ptr<std::atomic<int>> created_ = std::make_shared<std::atomic<int>>(0);
  std::unique_ptr<testing::InProcessDaemon> daemon_;
  int port_ = 0;
};

TEST_F(ApiOps, LivenessAndReadinessFollowTheSweeps) {
  start({}, false);
  EXPECT_EQ(call("GET", "/api/v1/health/live", 200)["live"], true);
  EXPECT_EQ(call("GET", "/api/v1/health/ready", 503)["ready"], false);
  service().start();
  ASSERT_TRUE(testing::waitFor([&] { return service().state()->sweep.runs >= 2; }, 10s));
  EXPECT_EQ(call("GET", "/api/v1/health/ready", 200)["status"], "ready");

  // Sweeps fail: not ready (503), but the last snapshot is still served, with its age.
  control_->failSweeps = true;
  ASSERT_TRUE(
      testing::waitFor([&] { return service().state()->sweep.consecutiveFailures >= 2; }, 10s));
  auto ready = call("GET", "/api/v1/health/ready", 503);
  EXPECT_EQ(ready["status"], "degraded");
  EXPECT_NE(ready["sweep"]["last_error"], nullptr);
  auto health = call("GET", "/api/v1/health", 200);
  EXPECT_EQ(health["status"], "degraded");
  EXPECT_GT(health["sweep"]["age_seconds"].get<double>(), 0.0);
  EXPECT_EQ(call("GET", "/api/v1/topology", 200)["links"], 8);
  EXPECT_EQ(call("GET", "/api/v1/health/live", 200)["live"], true);

  control_->failSweeps = false;
  ASSERT_TRUE(testing::waitFor(
      [&] {
        auto r = daemon_->client().Get("/api/v1/health/ready");
        return r && r->status == 200;
      },
      10s));
}

TEST_F(ApiOps, ASourceThatAnswersNothingIsRecreated) {
  start();
  const int before = created_->load();
  EXPECT_EQ(before, 1);
  control_->answerNothing = true;
  // recreateSourceAfter = 3 consecutive failed sweeps.
  ASSERT_TRUE(testing::waitFor([&] { return created_->load() > before; }, 10s));
  EXPECT_GE(service().state()->sweep.consecutiveFailures, 3u);
  control_->answerNothing = false;
  ASSERT_TRUE(
      testing::waitFor([&] { return service().state()->sweep.consecutiveFailures == 0; }, 10s));
}

TEST_F(ApiOps, ClearCountersStatuses) {
  start({}, false);
  const std::string anyPort = "/api/v1/ports/0x0000000000100000/1/clear-counters";
  call("POST", anyPort, 503);  // no crawl yet
  service().start();
  ASSERT_TRUE(testing::waitFor([&] { return service().state()->sweep.runs >= 2; }, 10s));
  const std::string g = hostGuid();
  const std::string path = "/api/v1/ports/" + g + "/1/clear-counters";
  call("POST", path, 401, "");
  call("POST", path, 403, "wrong");
  call("POST", "/api/v1/ports/nope/1/clear-counters", 400);
  call("POST", "/api/v1/ports/" + g + "/x/clear-counters", 400);
  call("POST", "/api/v1/ports/" + g + "/300/clear-counters", 400);
  call("POST", "/api/v1/ports/0x00000000deadbeef/1/clear-counters", 404);
  call("POST", "/api/v1/ports/" + g + "/7/clear-counters", 404);
  call("GET", path, 404);  // POST only

  control_->clearStatus = ClearCountersResult::Status::kRejected;
  call("POST", path, 502);
  control_->clearStatus = ClearCountersResult::Status::kOk;
  auto ok = call("POST", path, 200);
  EXPECT_EQ(ok["status"], "cleared");
  EXPECT_EQ(ok["guid"], g);
  EXPECT_EQ(ok["port"], 1);
  auto events = call("GET", "/api/v1/events?type=counters_cleared", 200)["events"];
  ASSERT_EQ(events.size(), 1u) << events.dump();
  EXPECT_EQ(events[0]["node"], "host1-1");
}

TEST_F(ApiOps, ClearCountersTimesOutWith504) {
  RestOptions ro;
  ro.clearTimeout = 200ms;
  start(ro);
  control_->clearDelayMs = 1000;
  const auto t0 = Clock::now();
  call("POST", "/api/v1/ports/" + hostGuid() + "/1/clear-counters", 504);
  EXPECT_LT(Clock::now() - t0, 900ms);
}

TEST_F(ApiOps, RatesRebaselineAfterAClear) {
  start();
  const std::string g = hostGuid();
  const std::string port = "/api/v1/ports/" + g + "/1";
  const auto resetsBefore = call("GET", "/api/v1/events?type=counter_reset", 200)["events"].size();
  const int sweepsAtClear = control_->sweeps;
  call("POST", port + "/clear-counters", 200);
  // Two sweeps later the counters count from the clear and the rate is the normal one.
  ASSERT_TRUE(testing::waitFor([&] { return control_->sweeps >= sweepsAtClear + 3; }, 10s));
  ASSERT_TRUE(testing::waitFor(
      [&] {
        auto p = call("GET", port, 200);
        return p["rates"].is_object() && p["sample"]["sequence"].get<int>() > sweepsAtClear + 1;
      },
      10s));
  auto p = call("GET", port, 200);
  const auto xmit = p["sample"]["counters"]["xmit_data"].get<std::uint64_t>();
  EXPECT_LE(xmit, 1000u * static_cast<std::uint64_t>(control_->sweeps - sweepsAtClear)) << p.dump();
  const double bps = p["rates"]["tx_bytes_per_second"].get<double>();
  EXPECT_GT(bps, 0.0) << p["rates"].dump();
  EXPECT_EQ(call("GET", "/api/v1/events?type=counter_reset", 200)["events"].size(), resetsBefore);
}

TEST_F(ApiOps, LongPollWaitersAreCapped) {
  RestOptions ro;
  ro.maxWaiters = 2;
  ro.threads = 6;
  start(ro);
  const std::uint64_t last = call("GET", "/api/v1/events", 200)["last_id"];
  const std::string poll = "/api/v1/events?wait=3&since=" + std::to_string(last + 1000);
  std::vector<std::future<double>> polls;
  for (int i = 0; i < 5; ++i) {
    polls.push_back(std::async(std::launch::async, [&] {
      httplib::Client c("127.0.0.1", port_);
      c.set_read_timeout(20, 0);
      const auto t0 = Clock::now();
      auto res = c.Get(poll.c_str());
      EXPECT_TRUE(res && res->status == 200);
      return std::chrono::duration<double>(Clock::now() - t0).count();
    }));
  }
  // Other requests are still served at once while two clients wait.
  const auto t0 = Clock::now();
  call("GET", "/api/v1/health", 200);
  EXPECT_LT(Clock::now() - t0, 1s);
  int quick = 0, waited = 0;
  for (auto& f : polls) {
    const double took = f.get();
    (took < 1.5 ? quick : waited)++;
  }
  EXPECT_EQ(waited, 2);
  EXPECT_EQ(quick, 3);
}

TEST(ApiTls, ServesHttpsWithAGeneratedCertificate) {
#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
  GTEST_SKIP() << "cpp-httplib without OpenSSL";
#else
  const auto dir = testing::scratchDir();
  const auto cert = dir / "tls.crt", key = dir / "tls.key";
  auto gen =
      testing::runProcess({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                           key.string(), "-out", cert.string(), "-days", "1", "-subj",
                           "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"},
                          60s);
  if (gen.exitCode == 127) GTEST_SKIP() << "no openssl CLI";
  ASSERT_EQ(gen.exitCode, 0) << gen.describe();

  testing::InProcessDaemon::Options o;
  o.service = {};
  o.counterSources = [] { return CounterSourcePtr(); };
  testing::InProcessDaemon daemon(o);  // stops serving however the test ends
  daemon.topology().pushFailure("no fabric");
  RestOptions ro;
  ro.tlsCert = cert.string();
  ro.tlsKey = key.string();
  const int port = daemon.serve(ro);
  ASSERT_GT(port, 0);
  httplib::SSLClient c("127.0.0.1", port);
  c.enable_server_certificate_verification(false);
  c.set_read_timeout(10, 0);
  auto res = c.Get("/api/v1/health/live");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  // With verification against the generated certificate as CA.
  httplib::SSLClient verified("127.0.0.1", port);
  verified.set_ca_cert_path(cert.c_str());
  verified.enable_server_certificate_verification(true);
  auto res2 = verified.Get("/api/v1/health/live");
  ASSERT_TRUE(res2) << httplib::to_string(res2.error());
  EXPECT_EQ(res2->status, 200);
  // Plain HTTP to the TLS port fails.
  httplib::Client plain("127.0.0.1", port);
  plain.set_read_timeout(3, 0);
  auto res3 = plain.Get("/api/v1/health/live");
  EXPECT_TRUE(!res3 || res3->status != 200);
  daemon.stopServing();

  RestOptions bad;
  bad.tlsCert = (dir / "missing.crt").string();
  bad.tlsKey = key.string();
  EXPECT_THROW(RestServer(daemon.services(), bad), std::runtime_error);
#endif
}

}  // namespace
}  // namespace ibfabric::api
