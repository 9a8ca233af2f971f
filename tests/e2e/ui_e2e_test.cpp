// End to end: the web view (/ui/) in Debian's headless Chromium, driven through chromedriver
// (tests/support/webdriver.h), against the real ibfabricd on a simulated two-level fat tree
// (4 leaves, 2 spines, 16 hosts; ibsim + OpenSM ftree):
//
//  - the page loads and draws the map without a console error (window.ibfErrors, which the
//    page fills from window errors and console.error, and the browser log);
//  - every switch of the fabric is drawn with its GUID and state "ok";
//  - a search by host name and one by an HCA's GUID find the host (marked, details shown);
//  - the placement form draws the placement's hosts on the map, and a pool allocation (the
//    daemon has a GPU pool over the 16 hosts) is listed and drawn when clicked;
//  - after `Unlink "leaf-01"[5]` in the simulator, the element of that cable's trunk turns
//    "down" within 2 s of ibsim's answer (polled with that bound; the daemon, at debug level,
//    has its log's tail in the failure message).
// Screenshots go to <build>/artifacts (paths printed). Every wait is bounded; browser,
// daemon and fabric are stopped in TearDown (and destructors).
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/support/background_process.h"
#include "tests/support/rest_get.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"
#include "tests/support/webdriver.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kToken = "ui-token";

/// Script: the page's recorded errors.
constexpr const char* kErrors =
    "return window.ibfErrors || ['no ibfErrors: the page did not load']";

class UiE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(WebDriver::available()) << "Debian packages chromium and chromium-driver";
    const auto net = scratchDir() / "ui-two-level.net";
    auto gen = runCli({"topo", "gen", "--preset", "two-level", "--leaves", "4", "--spines", "2",
                       "--hosts-per-leaf", "4", "-o", net.string()});
    ASSERT_EQ(gen.exitCode, 0) << gen.describe();
    fabric_ = std::make_unique<SimFabric>(net, "ui");
    const auto inventory = writeScratchFile(
        "ui-pool.json", R"({"hosts": [{"name": "dgx[0001-0016]", "gpu_count": 8}]})");
    const auto journal = scratchDir() / "ui-pool-journal";
    std::filesystem::remove_all(journal);
    const auto config =
        writeScratchFile("ui-ibfabricd.yaml", "api_token: \"" + std::string(kToken) +
                                                  "\"\npool: {inventory: \"" + inventory.string() +
                                                  "\", journal: \"" + journal.string() + "\"}\n");
    daemon_ = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{cliPath().string(), "sim", "run", "--name", fabric_->name(), "--",
                                 daemonPath().string(), "--config", config.string(), "--listen",
                                 "127.0.0.1:0", "--crawl-interval", "1", "--sweep-interval", "1",
                                 "--log-level", "debug"},
        scratchDir() / "ui-daemon.log", scratchDir());
    auto listening = daemon_->waitForLog("listening on http://", 60s);
    ASSERT_TRUE(listening) << daemon_->log();
    target_ = *listening;
    const int port = std::stoi(target_.substr(target_.rfind(':') + 1));
    http_ = std::make_unique<JsonClient>(port);
    ASSERT_TRUE(waitFor([&] { return http_->get("/api/v1/health").first == 200; }, 90s))
        << daemon_->log();
    browser_ = std::make_unique<WebDriver>("ui");
  }

  void TearDown() override {
    browser_.reset();
    if (daemon_) {
      expectCleanStop(*daemon_, "ibfabricd");
      daemon_.reset();
    }
    fabric_.reset();
  }

  std::string url(const std::string& path) const { return "http://" + target_ + path; }

  void shot(const std::string& name) {
    const auto path = artifactDir() / name;
    browser_->screenshot(path);
    std::cout << "screenshot: " << path.string() << std::endl;
  }

  /// Browser log entries at level SEVERE (console errors, failed loads).
  json severeLog() {
    json out = json::array();
    for (const auto& e : browser_->browserLog())
      if (e.value("level", "") == "SEVERE") out.push_back(e);
    return out;
  }

  /// Submits the search box with `text`; the number of results (-1: none shown in time).
  int search(const std::string& text) {
    browser_->execute(
        "document.getElementById('search-results').replaceChildren();"
        "document.getElementById('search').value = arguments[0];"
        "document.getElementById('search-form').requestSubmit();",
        json::array({text}));
    const json n = browser_->waitFor(
        "const r = document.querySelector('#search-results ul');"
        "return r ? Number(r.dataset.count) : -1;",
        [](const json& v) { return v.is_number() && v.get<int>() >= 0; }, 5s);
    return n.is_number() ? n.get<int>() : -1;
  }

  std::unique_ptr<SimFabric> fabric_;
  std::unique_ptr<BackgroundProcess> daemon_;
  std::unique_ptr<JsonClient> http_;
  std::unique_ptr<WebDriver> browser_;
  std::string target_;  // HOST:PORT
};

TEST_F(UiE2e, DrawsTheLiveFabricFindsHostsPlacesJobsAndShowsACableGoingDown) {
  browser_->navigate(url("/ui/"));
  const json drawn = browser_->waitFor(
      "return document.body.dataset.mapDrawn || null", [](const json& v) { return v == "1"; }, 15s);
  ASSERT_EQ(drawn, "1") << browser_->execute(kErrors).dump();
  EXPECT_EQ(browser_->execute(kErrors), json::array());
  EXPECT_EQ(severeLog(), json::array());

  // Every switch, with its state.
  const json switches = http_->ok("/api/v1/switches")["switches"];
  ASSERT_EQ(switches.size(), 6u);
  const json shown = browser_->execute(
      "const o = {}; for (const e of document.querySelectorAll('[data-kind=switch]'))"
      " o[e.dataset.guid] = e.dataset.state; return o;");
  EXPECT_EQ(shown.size(), switches.size()) << shown.dump();
  for (const auto& s : switches) {
    const std::string guid = s["guid"];
    ASSERT_TRUE(shown.contains(guid)) << s["description"] << " is not drawn";
    EXPECT_EQ(shown[guid], "ok") << s["description"];
  }
  EXPECT_EQ(browser_->execute("return document.querySelectorAll('[data-kind=host]').length"), 16);
  shot("ui-map.png");

  // Search: a host by name, and by the GUID of its HCA.
  EXPECT_GE(search("dgx0003"), 1);
  EXPECT_EQ(browser_->waitFor(
                "const e = document.querySelector('.found');"
                "return e ? e.dataset.host : null",
                [](const json& v) { return v == "dgx0003"; }, 5s),
            "dgx0003");
  const json host = http_->ok("/api/v1/hosts/dgx0007");
  const std::string hca = host["hcas"][0]["guid"];
  EXPECT_GE(search(hca), 1) << hca;
  EXPECT_EQ(browser_->waitFor(
                "return document.getElementById('details').dataset.host || null",
                [](const json& v) { return v == "dgx0007"; }, 5s),
            "dgx0007");

  // Placement: once the daemon can answer one (forwarding tables read), the form draws it.
  ASSERT_TRUE(waitFor(
      [&] {
        httplib::Result r =
            http_->client.Post("/api/v1/placement", R"({"hosts": 4})", "application/json");
        return r && r->status == 200;
      },
      90s))
      << daemon_->log();
  browser_->execute(
      "document.querySelector('[data-tab=placement]').click();"
      "document.getElementById('pl-hosts').value = '4';"
      "document.getElementById('placement-form').requestSubmit();");
  const json placed = browser_->waitFor(
      "return [...document.querySelectorAll('[data-kind=host][data-placed=\"1\"]')]"
      ".map((e) => e.dataset.host)",
      [](const json& v) { return v.size() == 4; }, 10s);
  EXPECT_EQ(placed.size(), 4u) << placed.dump() << " "
                               << browser_->execute(
                                      "return document.getElementById('placement-result')"
                                      ".textContent");
  shot("ui-placement.png");

  // A pool allocation, listed in the placement tab and drawn when clicked.
  httplib::Result alloc = http_->client.Post(
      "/api/v1/pool/allocations", {{"Authorization", std::string("Bearer ") + kToken}},
      R"({"job_id": "ui-job", "gpus": 16, "gpus_per_host": 8, "class": "training"})",
      "application/json");
  ASSERT_TRUE(alloc);
  ASSERT_EQ(alloc->status, 201) << alloc->body;
  std::set<std::string> allocated;
  const json answer = json::parse(alloc->body);
  for (const auto& h : answer["allocation"]["hosts"])
    allocated.insert(h["host"].get<std::string>());
  ASSERT_EQ(allocated.size(), 2u) << alloc->body;
  browser_->execute(
      "document.querySelector('[data-tab=details]').click();"
      "document.querySelector('[data-tab=placement]').click();");
  ASSERT_EQ(browser_->waitFor(
                "const e = document.querySelector('li[data-job=\"ui-job\"]');"
                "if (e) e.click(); return e ? 1 : 0;",
                [](const json& v) { return v == 1; }, 10s),
            1);
  const json pooled = browser_->waitFor(
      "return [...document.querySelectorAll('[data-kind=host][data-placed=\"1\"]')]"
      ".map((e) => e.dataset.host)",
      [](const json& v) { return v.size() == 2; }, 10s);
  EXPECT_EQ(pooled.get<std::set<std::string>>(), allocated) << pooled.dump();

  // A cable goes down: its trunk's element turns "down" within 2 s.
  std::string leaf;
  for (const auto& s : switches)
    if (s["description"].get<std::string>().find(";leaf-01:") != std::string::npos)
      leaf = s["guid"];
  ASSERT_FALSE(leaf.empty()) << switches.dump();
  const std::string trunkState =
      "const t = [...document.querySelectorAll('[data-kind=trunk]')].find((e) =>"
      " e.dataset.a === arguments[0] && e.dataset.aPorts.split(' ').includes('5'));"
      "return t ? t.dataset.state : null;";
  EXPECT_EQ(browser_->execute(trunkState, json::array({leaf})), "ok");
  // Timed from ibsim's answer (the Unlink is done when the console answers): the CLI that
  // carries the command is a sanitized binary whose start-up is no part of the daemon's latency;
  // both times are printed.
  const auto issued = std::chrono::steady_clock::now();
  ASSERT_EQ(fabric_->cmd(R"(Unlink "leaf-01"[5])").exitCode, 0);
  const auto t0 = std::chrono::steady_clock::now();
  json state;
  const auto deadline = t0 + 2s;
  do {
    state = browser_->execute(trunkState, json::array({leaf}));
  } while (state != "down" && std::chrono::steady_clock::now() < deadline);
  const auto end = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(end - t0).count();
  std::cout << "cable down on the map after " << seconds << " s from ibsim's answer, "
            << std::chrono::duration<double>(end - issued).count()
            << " s from the command's issue (state " << state << ")" << std::endl;
  EXPECT_EQ(state, "down") << "after " << seconds << " s; the daemon's log ends:\n"
                           << daemon_->logTail(12000);
  shot("ui-link-down.png");
  EXPECT_EQ(browser_->execute(kErrors), json::array());
  EXPECT_EQ(severeLog(), json::array());
}

}  // namespace
}  // namespace ibfabric::testing
