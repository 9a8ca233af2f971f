// The web view's routes over real HTTP (the in-process daemon on the fakes): /ui/ and its files
// come from the binary with their types, a strong ETag (304 on a match), no-cache and a CSP that
// allows this origin only; nothing in them names another origin; /api/v1/fabric/map summarises
// the fabric (switches with level and state, one trunk per switch pair, hosts, counts), is
// rendered once per state and served gzip-compressed to a client that asks.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "api/http/ui_assets.h"
#include "tests/support/fabrics.h"
#include "tests/support/in_process_daemon.h"
#include "tests/support/rest_get.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;

class ApiUi : public ::testing::Test {
 protected:
  void SetUp() override {
    daemon_.topology().push(testing::fatTreeTopology("", 2, 2, 2));
    ASSERT_GT(daemon_.serve(), 0);
  }
  testing::InProcessDaemon daemon_;
};

TEST_F(ApiUi, ServesThePageAndItsFilesWithTypesEtagsAndCsp) {
  auto page = daemon_.client().Get("/ui/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(page->body.find("<svg id=\"map\""), std::string::npos);
  const std::string csp = page->get_header_value("Content-Security-Policy");
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("connect-src 'self'"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("http"), std::string::npos) << "no remote origin allowed: " << csp;
  EXPECT_EQ(page->get_header_value("Cache-Control"), "no-cache");
  const std::string etag = page->get_header_value("ETag");
  ASSERT_FALSE(etag.empty());
  EXPECT_EQ(etag.front(), '"');

  auto again = daemon_.client().Get("/ui/", {{"If-None-Match", etag}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 304);
  EXPECT_TRUE(again->body.empty());

  auto js = daemon_.client().Get("/ui/map.js");
  ASSERT_TRUE(js);
  EXPECT_EQ(js->status, 200);
  EXPECT_EQ(js->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_NE(js->get_header_value("ETag"), etag);
  auto css = daemon_.client().Get("/ui/style.css");
  ASSERT_TRUE(css);
  EXPECT_EQ(css->get_header_value("Content-Type"), "text/css; charset=utf-8");

  auto missing = daemon_.client().Get("/ui/nothing.js");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  auto bare = daemon_.client().Get("/ui");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->status, 301);
  EXPECT_EQ(bare->get_header_value("Location"), "/ui/");
}

TEST(UiAssets, NameNoOtherOriginAndThePageLoadsOnlyEmbeddedFiles) {
  std::set<std::string> names;
  for (const auto& a : uiAssets()) names.insert(std::string(a.name));
  // The SVG namespace is a name, not a fetch; anything else with a scheme would be a remote load.
  static const std::regex kUrl(R"((https?:)?//[A-Za-z0-9.-]+\.[a-z]{2,}/)");
  for (const auto& a : uiAssets()) {
    std::string text(a.body);
    for (std::sregex_iterator it(text.begin(), text.end(), kUrl), end; it != end; ++it)
      EXPECT_EQ(it->str(), "http://www.w3.org/") << a.name << " names another origin";
  }
  const UiAsset* page = findUiAsset("index.html");
  ASSERT_NE(page, nullptr);
  const std::string html(page->body);
  static const std::regex kRef(R"re((?:src|href)="([^"]+)")re");
  int refs = 0;
  for (std::sregex_iterator it(html.begin(), html.end(), kRef), end; it != end; ++it, ++refs) {
    const std::string ref = (*it)[1].str();
    if (ref == "data:,") continue;  // the empty icon: no request at all
    EXPECT_TRUE(names.count(ref)) << ref << " is not embedded";
  }
  EXPECT_GE(refs, 5);
  EXPECT_EQ(html.find("<script>"), std::string::npos) << "no inline script (the CSP forbids it)";
  EXPECT_EQ(html.find("style=\""), std::string::npos) << "no inline style (the CSP forbids it)";
}

TEST_F(ApiUi, FabricMapSummarisesSwitchesTrunksAndHostsOncePerState) {
  testing::getJson(daemon_.client(), "/api/v1/fabric/map", 503);  // before the first crawl
  ASSERT_TRUE(daemon_.startAndWaitReady());
  auto res = daemon_.client().Get("/api/v1/fabric/map");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_FALSE(res->get_header_value("X-Last-Event-Id").empty());
  const json m = json::parse(res->body);
  const auto s = daemon_.service().state();
  const Topology& t = *s->topology;
  ASSERT_EQ(m["switches"].size(), t.switchCount());
  std::set<std::string> levels;
  for (const auto& sw : m["switches"]) {
    const Node* n = t.findNode(*parseGuid(sw["guid"].get<std::string>()));
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(sw["level"], n->level);
    EXPECT_EQ(sw["group"], n->group);
    EXPECT_EQ(sw["name"], n->description);
    EXPECT_EQ(sw["state"], "ok");
    levels.insert(sw["level_name"].get<std::string>());
  }
  EXPECT_EQ(levels, (std::set<std::string>{"leaf", "spine"}));
  // 2 leaves x 2 spines, one cable each; every CA cable under a host.
  ASSERT_EQ(m["trunks"].size(), 4u);
  for (const auto& tr : m["trunks"]) {
    EXPECT_EQ(tr["n"], 1);
    EXPECT_EQ(tr["state"], "ok");
    EXPECT_EQ(m["switches"][tr["a"].get<int>()]["level"], 1);
    EXPECT_EQ(m["switches"][tr["b"].get<int>()]["level"], 2);
    EXPECT_EQ(tr["cables"].size(), 1u);
    EXPECT_TRUE(tr["util"].is_number());
  }
  std::size_t hostCables = 0;
  for (const auto& h : m["hosts"]) hostCables += h["ports"].size();
  EXPECT_EQ(hostCables, t.caCount());
  EXPECT_EQ(m["counts"]["cables"], t.links().size());
  EXPECT_EQ(m["counts"]["cables_by_state"]["ok"], t.links().size());
  EXPECT_EQ(m["counts"]["hosts"], t.hosts().size());
  std::size_t blockHosts = 0;
  for (const auto& b : m["host_blocks"]) blockHosts += b["hosts"].get<std::size_t>();
  EXPECT_EQ(blockHosts, t.hosts().size());

  // Once per state: a second request of the same state gets the same rendering (the same
  // generated_at), compressed when asked (the service is stopped: its last state stays).
  daemon_.service().stop();  // no new state from here on
  const auto first = daemon_.client().Get("/api/v1/fabric/map");
  const auto second = daemon_.client().Get("/api/v1/fabric/map", {{"Accept-Encoding", "gzip"}});
  ASSERT_TRUE(first && second);
  EXPECT_EQ(second->get_header_value("Content-Encoding"), "gzip");
  auto third = daemon_.client().Get("/api/v1/fabric/map");
  ASSERT_TRUE(third);
  EXPECT_EQ(json::parse(first->body)["generated_at"], json::parse(third->body)["generated_at"]);
}

}  // namespace
}  // namespace ibfabric::api
