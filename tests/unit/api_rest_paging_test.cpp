// Paging, filters and the cached documents of the REST lists over real HTTP on loopback, on a
// one-SU superpod (256 HCAs, 8 rails) with fake counters: a walk by cursor visits every item once;
// a cursor stays valid across a new snapshot; limits and bad cursors are 400s; the documents
// rendered once per snapshot equal a fresh rendering byte for byte, plain and gzip.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "api/http/json_views.h"
#include "api/http/list_cursor.h"
#include "api/http/list_index.h"
#include "api/http/rest_server.h"
#include "discovery/formats.h"
#include "discovery/net_topology.h"
#include "tests/support/fabrics.h"
#include "tests/support/gzip.h"
#include "tests/support/in_process_daemon.h"
#include "tests/support/net_edits.h"
#include "tests/support/rest_get.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

/// "0x...:port" of a link's `a` end, the key a walk is checked by.
std::string endKey(const json& link) {
  return link["a"]["guid"].get<std::string>() + ":" + link["a"]["port"].dump();
}

class ApiRestPaging : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = testing::generate(testing::superpod(1)).fabric;
    daemon_.topology().push(topologyFromNetFabric(base_));
    RestOptions ro;
    ro.token = "t0ken";
    ASSERT_GT(daemon_.serve(ro), 0);
    ASSERT_TRUE(daemon_.startAndWaitReady());
  }

  /// GET; checks the status and, for errors, the error shape.
  json get(const std::string& path, int status = 200) {
    return testing::getJson(daemon_.client(), path, status);
  }

  /// Every item of `path` (which has a query) page by page of `limit`.
  std::vector<json> walk(const std::string& path, const char* field, int limit, int* pages) {
    std::vector<json> items;
    std::string cursor;
    *pages = 0;
    for (;;) {
      json page = get(path + "&limit=" + std::to_string(limit) +
                      (cursor.empty() ? "" : "&cursor=" + cursor));
      ++*pages;
      EXPECT_LE(page[field].size(), std::size_t(limit));
      for (const auto& i : page[field]) items.push_back(i);
      if (!page.contains("next_cursor")) break;
      EXPECT_EQ(page[field].size(), std::size_t(limit)) << "a page before the last is full";
      cursor = page["next_cursor"];
      if (*pages > 10000) break;
    }
    return items;
  }

  /// Publishes `t` as the newest crawl and waits for it.
  void recrawl(TopologyPtr t) {
    daemon_.topology().push(t);
    daemon_.service().requestCrawl();
    ASSERT_TRUE(testing::waitFor([&] { return daemon_.service().state()->topology == t; }, 10s));
  }

  /// Sweeps every second: a page of /links (rendered once per sweep) must fit between two sweeps
  /// also in the sanitizer build on a loaded machine (at 250 ms, under ASan and ctest -j2, 100
  /// tries in a row met a sweep).
  static testing::InProcessDaemon::Options options() {
    testing::InProcessDaemon::Options o;
    o.service.sweepInterval = std::chrono::milliseconds(1000);
    return o;
  }

  NetFabric base_;
  testing::InProcessDaemon daemon_{options()};
};

TEST_F(ApiRestPaging, AWalkByCursorVisitsEveryItemOnceInTheFullListsOrder) {
  const json all = get("/api/v1/links");
  ASSERT_GT(all["count"].get<int>(), 300);
  int pages = 0;
  auto links = walk("/api/v1/links?", "links", 37, &pages);
  ASSERT_EQ(links.size(), all["links"].size());
  EXPECT_EQ(pages, int((links.size() + 36) / 37));
  std::set<std::string> seen;
  for (std::size_t i = 0; i < links.size(); ++i) {
    EXPECT_EQ(endKey(links[i]), endKey(all["links"][i])) << i;
    EXPECT_TRUE(seen.insert(endKey(links[i])).second) << "twice: " << endKey(links[i]);
  }

  const json nodes = get("/api/v1/nodes")["nodes"];
  auto paged = walk("/api/v1/nodes?", "nodes", 50, &pages);
  ASSERT_EQ(paged.size(), nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) EXPECT_EQ(paged[i], nodes[i]) << i;

  const json switches = get("/api/v1/switches")["switches"];
  EXPECT_EQ(walk("/api/v1/switches?", "switches", 3, &pages), switches.get<std::vector<json>>());
  const json hosts = get("/api/v1/hosts")["hosts"];
  ASSERT_EQ(hosts.size(), 32u);
  auto pagedHosts = walk("/api/v1/hosts?", "hosts", 5, &pages);
  EXPECT_EQ(pagedHosts, hosts.get<std::vector<json>>());
  EXPECT_EQ(pages, 7);
  for (std::size_t i = 1; i < pagedHosts.size(); ++i)
    EXPECT_LT(pagedHosts[i - 1]["name"], pagedHosts[i]["name"]);
  // An exact multiple of the limit ends without a cursor.
  EXPECT_FALSE(get("/api/v1/hosts?limit=32").contains("next_cursor"));
  EXPECT_TRUE(get("/api/v1/hosts?limit=31").contains("next_cursor"));
}

TEST_F(ApiRestPaging, ACursorStaysValidAcrossANewSnapshot) {
  auto t0 = daemon_.service().state()->topology;
  // Three cables by their position in the link order: one early (in the first page), two late.
  const auto order = orderOf(*t0).links;
  ASSERT_GT(order.size(), 200u);
  const auto cable = [&](std::size_t pos) {
    const PortRef a = t0->links()[order[pos]].a;
    const Guid g = t0->node(a.node).guid;
    for (const auto& n : base_.nodes)
      if (n.guid == g) return std::pair(n.id, int(a.port.value()));
    ADD_FAILURE() << "no net node for " << toString(g);
    return std::pair(std::string(), 0);
  };
  const auto early = cable(10), removed = cable(order.size() - 20),
             added = cable(order.size() - 10);
  const auto keyOf = [&](std::size_t pos) {
    const PortRef a = t0->links()[order[pos]].a;
    return toString(t0->node(a.node).guid) + ":" + std::to_string(a.port.value());
  };
  const std::string removedKey = keyOf(order.size() - 20), addedKey = keyOf(order.size() - 10),
                    earlyKey = keyOf(10);

  NetFabric before = base_;  // without `added`
  testing::unlink(before, added.first, added.second);
  recrawl(topologyFromNetFabric(before));
  json first = get("/api/v1/links?limit=50");
  ASSERT_TRUE(first.contains("next_cursor"));
  std::vector<std::string> keys;
  for (const auto& l : first["links"]) keys.push_back(endKey(l));
  ASSERT_EQ(keys[10], earlyKey);

  NetFabric after = base_;  // `added` back, `removed` and `early` gone
  testing::unlink(after, removed.first, removed.second);
  testing::unlink(after, early.first, early.second);
  auto t2 = topologyFromNetFabric(after);
  recrawl(t2);
  std::string cursor = first["next_cursor"];
  for (;;) {
    json page = get("/api/v1/links?limit=50&cursor=" + cursor);
    for (const auto& l : page["links"]) keys.push_back(endKey(l));
    if (!page.contains("next_cursor")) break;
    cursor = page["next_cursor"];
  }
  // The first page from the old snapshot, the rest from the new one: nothing twice, nothing
  // skipped but what was removed, what was added after the cursor is there.
  std::set<std::string> unique(keys.begin(), keys.end());
  EXPECT_EQ(unique.size(), keys.size());
  EXPECT_EQ(unique.count(removedKey), 0u);
  EXPECT_EQ(unique.count(addedKey), 1u);
  EXPECT_EQ(unique.count(earlyKey), 1u);  // seen before it was removed
  std::set<std::string> expected;
  for (std::uint32_t i = 0; i < t2->links().size(); ++i) {
    const PortRef a = t2->links()[i].a;
    expected.insert(toString(t2->node(a.node).guid) + ":" + std::to_string(a.port.value()));
  }
  expected.insert(earlyKey);
  EXPECT_EQ(unique, expected);
}

TEST_F(ApiRestPaging, LimitsAndBadCursorsAre400s) {
  for (const char* bad : {"0", "10001", "-1", "x", ""})
    get(std::string("/api/v1/links?limit=") + bad, 400);
  EXPECT_EQ(get("/api/v1/links?limit=10000")["count"], get("/api/v1/links")["count"]);
  EXPECT_EQ(get("/api/v1/nodes?limit=1")["nodes"].size(), 1u);
  get("/api/v1/nodes?limit=0", 400);
  get("/api/v1/hosts?limit=10001", 400);

  const std::string good = get("/api/v1/links?limit=5")["next_cursor"];
  const auto message = [&](const std::string& path) {
    return get(path, 400)["error"]["message"].get<std::string>();
  };
  EXPECT_NE(message("/api/v1/links?cursor=!!!").find("not base64url"), std::string::npos);
  EXPECT_NE(message("/api/v1/links?cursor=" + base64UrlEncode("hello")).find("not a cursor"),
            std::string::npos);
  EXPECT_NE(message("/api/v1/links?cursor=" + good.substr(0, good.size() - 6)).find("bad cursor"),
            std::string::npos);
  // Edited: another key under the old checksum.
  json c = json::parse(*base64UrlDecode(good));
  c["k"][2] = c["k"][2].get<int>() + 1;
  EXPECT_NE(message("/api/v1/links?cursor=" + base64UrlEncode(c.dump())).find("checksum"),
            std::string::npos);
  // Another endpoint's cursor.
  const std::string nodes = get("/api/v1/nodes?limit=5")["next_cursor"];
  EXPECT_NE(message("/api/v1/links?cursor=" + nodes).find("a cursor of /api/v1/nodes"),
            std::string::npos);
  get("/api/v1/switches?cursor=" + nodes, 400);
  // A checksummed key of the wrong shape.
  get("/api/v1/links?cursor=" + encodeCursor("/api/v1/links", "x"), 400);
  get("/api/v1/hosts?cursor=" + encodeCursor("/api/v1/hosts", json::array({1})), 400);
  // Sorted lists are rankings, not pages.
  get("/api/v1/links?sort=utilization&cursor=" + good, 400);
  EXPECT_FALSE(get("/api/v1/links?sort=utilization&limit=5").contains("next_cursor"));
}

TEST_F(ApiRestPaging, Filters) {
  auto s = daemon_.service().state();
  const Topology& t = *s->topology;
  const Node& leaf = t.node(t.nodesAtLevel(1).front());
  // A leaf's links: its HCAs and its uplinks.
  std::size_t leafLinks = 0;
  for (const auto& p : leaf.ports)
    if (p && p->remote) ++leafLinks;
  const json mine = get("/api/v1/links?node=" + toString(leaf.guid));
  EXPECT_EQ(mine["count"], leafLinks);
  for (const auto& l : mine["links"])
    EXPECT_TRUE(l["a"]["guid"] == toString(leaf.guid) || l["b"]["guid"] == toString(leaf.guid));
  get("/api/v1/links?node=xyz", 400);
  get("/api/v1/links?node=0x00000000deadbeef", 404);

  // A host: its 8 HCA links; on one rail: one of them.
  EXPECT_EQ(get("/api/v1/links?host=dgx0001")["count"], 8);
  EXPECT_EQ(get("/api/v1/links?host=dgx0001&rail=3")["count"], 1);
  get("/api/v1/links?host=nosuch", 404);
  get("/api/v1/links?rail=8", 400);
  get("/api/v1/links?rail=x", 400);
  EXPECT_EQ(get("/api/v1/links?level=leaf&state=ok")["count"], 256);
  // Paging keeps the filter: two pages of the host's links.
  int pages = 0;
  EXPECT_EQ(walk("/api/v1/links?host=dgx0001", "links", 4, &pages).size(), 8u);
  EXPECT_EQ(pages, 2);

  EXPECT_EQ(get("/api/v1/nodes?type=switch")["nodes"].size(), t.switchCount());
  EXPECT_EQ(get("/api/v1/nodes?type=ca")["nodes"].size(), 256u);
  EXPECT_EQ(get("/api/v1/nodes?type=ca&rail=2")["nodes"].size(), 32u);
  EXPECT_EQ(get("/api/v1/nodes?host=dgx0002")["nodes"].size(), 8u);
  EXPECT_EQ(get("/api/v1/nodes?level=leaf")["nodes"].size(), 8u);
  get("/api/v1/nodes?type=sideways", 400);
  get("/api/v1/nodes?level=roof", 400);
  EXPECT_EQ(get("/api/v1/switches?level=leaf&rail=5")["switches"].size(), 1u);

  EXPECT_EQ(get("/api/v1/hosts?health=ok")["hosts"].size(), 32u);
  EXPECT_EQ(get("/api/v1/hosts?health=down")["hosts"].size(), 0u);
  EXPECT_EQ(get("/api/v1/hosts?rail=7")["hosts"].size(), 32u);
  get("/api/v1/hosts?health=sideways", 400);
}

TEST_F(ApiRestPaging, AHostWithoutItsCablesIsFilteredAsDown) {
  NetFabric f = base_;
  for (int hca = 0; hca < 8; ++hca) testing::unlink(f, "dgx0005-mlx5_" + std::to_string(hca), 1);
  recrawl(topologyFromNetFabric(f));
  const json down = get("/api/v1/hosts?health=down")["hosts"];
  ASSERT_EQ(down.size(), 1u) << down.dump();
  EXPECT_EQ(down[0]["name"], "dgx0005");
  EXPECT_EQ(get("/api/v1/hosts?health=ok")["hosts"].size(), 31u);
}

/// The body as a client without gzip gets it, and with gzip (inflated here).
std::pair<std::string, std::string> bothBodies(httplib::Client& c, const std::string& path) {
  auto plain = c.Get(path.c_str(), {{"Accept-Encoding", "identity"}});
  c.set_decompress(false);
  auto gz = c.Get(path.c_str(), {{"Accept-Encoding", "gzip"}});
  c.set_decompress(true);
  EXPECT_TRUE(plain && gz);
  if (!plain || !gz) return {};
  EXPECT_EQ(plain->status, 200);
  EXPECT_EQ(plain->get_header_value("Content-Encoding"), "");
  EXPECT_EQ(gz->get_header_value("Content-Encoding"), "gzip");
  EXPECT_LT(gz->body.size(), plain->body.size() / 3) << path;
  return {plain->body, testing::gunzip(gz->body)};
}

/// The state, and the plain and gzip bodies of `path` both served from it (sweeps run every
/// second: tried until no sweep came between).
struct StateBodies {
  ServiceStatePtr state;
  std::string plain, gzip;
};
StateBodies stableBodies(testing::InProcessDaemon& d, const std::string& path) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto s = d.service().state();
    auto [plain, gz] = bothBodies(d.client(), path);
    if (d.service().state() == s) return {s, plain, gz};
  }
  ADD_FAILURE() << "every request of " << path << " met a sweep";
  return {};
}

std::string freshLinks(const ServiceState& st) {
  json links = json::array();
  for (std::uint32_t i = 0; i < st.topology->links().size(); ++i)
    links.push_back(linkJson(*st.topology, i, st));  // the linear health search of old
  return json{{"count", links.size()}, {"links", links}}.dump() + "\n";
}

TEST_F(ApiRestPaging, CachedDocumentsEqualAFreshRenderingAndFollowTheSnapshot) {
  auto s = daemon_.service().state();
  const Topology& t = *s->topology;
  auto& c = daemon_.client();

  const std::string full = toJson(t).dump() + "\n";
  auto [plainFull, gzFull] = bothBodies(c, "/api/v1/topology/full");
  EXPECT_TRUE(plainFull == full) << plainFull.size() << " vs " << full.size();
  EXPECT_TRUE(gzFull == full);
  auto [ibn, ibnGz] = bothBodies(c, "/api/v1/topology/ibnetdiscover");
  EXPECT_TRUE(ibn == formatIbnetdiscover(t) && ibnGz == ibn);
  auto [dot, dotGz] = bothBodies(c, "/api/v1/topology/dot");
  EXPECT_TRUE(dot == formatDot(t) && dotGz == dot);

  json nodes = json::array();
  for (const Node& n : t.nodes()) nodes.push_back(nodeBriefJson(t, n, *s));
  auto [plainNodes, gzNodes] = bothBodies(c, "/api/v1/nodes");
  const std::string freshNodes = json{{"nodes", nodes}}.dump() + "\n";
  EXPECT_TRUE(plainNodes == freshNodes && gzNodes == plainNodes);

  const StateBodies first = stableBodies(daemon_, "/api/v1/links");
  ASSERT_TRUE(first.state);
  EXPECT_TRUE(first.plain == freshLinks(*first.state)) << first.plain.substr(0, 300);
  EXPECT_TRUE(first.gzip == first.plain);
  EXPECT_NE(first.plain.find("\"tx_bytes_per_second\":"), std::string::npos);

  // A new sweep: new rates, a new document (the topology's stay).
  ASSERT_TRUE(testing::waitFor(
      [&] { return daemon_.service().state()->sweep.runs >= first.state->sweep.runs + 2; }, 10s));
  const StateBodies second = stableBodies(daemon_, "/api/v1/links");
  ASSERT_TRUE(second.state);
  ASSERT_NE(second.state, first.state);
  EXPECT_NE(second.plain, first.plain);
  EXPECT_TRUE(second.plain == freshLinks(*second.state));
  EXPECT_TRUE(second.gzip == second.plain);
  EXPECT_TRUE(bothBodies(c, "/api/v1/topology/full").first == full);

  // A new crawl: a new full topology.
  NetFabric f = base_;
  testing::unlink(f, "dgx0003-mlx5_2", 1);
  recrawl(topologyFromNetFabric(f));
  const std::string full2 = toJson(*daemon_.service().state()->topology).dump() + "\n";
  ASSERT_NE(full2, full);
  EXPECT_TRUE(bothBodies(c, "/api/v1/topology/full").first == full2);
}

TEST_F(ApiRestPaging, ConcurrentRequestsShareTheRendering) {
  daemon_.service().setIntervals(1h, 1h);
  std::this_thread::sleep_for(100ms);
  std::vector<std::string> bodies(6);
  {
    std::vector<std::jthread> clients;
    for (auto& b : bodies)
      clients.emplace_back([&b, port = daemon_.port()] {
        httplib::Client c("127.0.0.1", port);
        auto r = c.Get("/api/v1/links", {{"Accept-Encoding", "identity"}});
        if (r && r->status == 200) b = r->body;
      });
  }
  for (const auto& b : bodies) {
    EXPECT_FALSE(b.empty());
    EXPECT_TRUE(b == bodies[0]);
  }
}

}  // namespace
}  // namespace ibfabric::api
