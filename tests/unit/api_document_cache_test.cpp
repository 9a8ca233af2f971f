// The pieces under the REST lists and documents, without a server: streaming gzip and its
// inflation, the document slot (one render per source, shared by concurrent callers, only the
// newest kept), Accept-Encoding, the cursor codec and the list orders.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "api/http/document_cache.h"
#include "api/http/gzip_stream.h"
#include "api/http/json_views.h"
#include "api/http/list_cursor.h"
#include "api/http/list_index.h"
#include "tests/support/fabrics.h"
#include "tests/support/gzip.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;

std::string sampleText(std::size_t bytes) {
  std::string s;
  for (std::size_t i = 0; s.size() < bytes; ++i)
    s += "{\"guid\":\"0x" + std::to_string(i * 7919 % 100003) +
         "\",\"port\":" + std::to_string(i % 37) + "},";
  s.resize(bytes);
  return s;
}

std::string inflateAll(const std::string& gz, std::size_t chunk) {
  GunzipReader r(gz);
  std::string out, buf(chunk, '\0');
  while (std::size_t n = r.read(buf.data(), buf.size())) out.append(buf.data(), n);
  EXPECT_EQ(r.position(), out.size());
  return out;
}

TEST(GzipStream, WritesPieceByPieceAndInflatesChunkByChunk) {
  const std::string text = sampleText(3'000'000);
  GzipWriter w;
  for (std::size_t at = 0; at < text.size(); at += 1000) w.append(text.substr(at, 1000));
  EXPECT_EQ(w.plainSize(), text.size());
  const std::string gz = w.finish();
  EXPECT_LT(gz.size(), text.size() / 3);
  EXPECT_EQ(testing::gunzip(gz), text);
  EXPECT_EQ(inflateAll(gz, 7), text);  // odd sizes work
  EXPECT_EQ(inflateAll(gz, 4096), text);
  EXPECT_EQ(inflateAll(gz, 1 << 20), text);
  GunzipReader r(gz);
  char c[10];
  ASSERT_EQ(r.read(c, 10), 10u);
  r.rewind();
  std::string again(text.size(), '\0');
  std::size_t got = 0;
  while (std::size_t n = r.read(again.data() + got, again.size() - got)) got += n;
  EXPECT_EQ(got, text.size());
  EXPECT_TRUE(again == text);
}

TEST(GzipStream, AnOstreamWritesJsonAsDumpDoes) {
  json j = {{"a", json::array({1, 2, "x"})}, {"b", std::string(50000, 'y')}};
  GzipWriter w;
  {
    GzipWriter::Stream os(w);
    os << j << '\n';
  }
  EXPECT_EQ(testing::gunzip(w.finish()), j.dump() + "\n");
  GzipWriter empty;
  EXPECT_EQ(inflateAll(empty.finish(), 100), "");
}

TEST(GzipStream, ACorruptOrTruncatedStreamThrows) {
  GzipWriter w;
  w.append(sampleText(100'000));
  std::string gz = w.finish();
  std::string cut = gz.substr(0, gz.size() / 2);
  EXPECT_THROW(inflateAll(cut, 4096), std::runtime_error);
  std::string bad = gz;
  bad[bad.size() / 2] ^= 0x55;
  bad[bad.size() / 2 + 1] ^= 0x55;
  EXPECT_THROW(inflateAll(bad, 4096), std::runtime_error);
}

TEST(DocumentSlot, RendersOncePerSourceSharedByConcurrentCallersAndKeepsTheNewestOnly) {
  DocumentSlot slot;
  auto a = std::make_shared<int>(1);
  std::atomic<int> renders{0};
  const auto render = [&](GzipWriter& w) {
    ++renders;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // latecomers arrive meanwhile
    w.append(sampleText(200'000));
  };
  std::vector<CachedDocumentPtr> docs(8);
  {
    std::vector<std::jthread> threads;
    for (auto& d : docs) threads.emplace_back([&] { d = slot.get(a, "application/json", render); });
  }
  EXPECT_EQ(renders, 1);
  EXPECT_EQ(slot.renders(), 1u);
  for (const auto& d : docs) EXPECT_EQ(d, docs[0]);
  EXPECT_EQ(docs[0]->plainSize, 200'000u);
  EXPECT_EQ(docs[0]->contentType, "application/json");
  EXPECT_EQ(slot.bytes(), docs[0]->gzip.size());
  EXPECT_EQ(slot.get(a, "application/json", render), docs[0]);
  EXPECT_EQ(renders, 1);

  auto b = std::make_shared<int>(2);
  auto second = slot.get(b, "application/json", render);
  EXPECT_EQ(renders, 2);
  EXPECT_NE(second, docs[0]);
  EXPECT_EQ(slot.bytes(), second->gzip.size());  // only the newest is kept
  // A source that is gone is never matched, even by an object at the same address.
  b.reset();
  auto c = std::make_shared<int>(3);
  slot.get(c, "application/json", render);
  EXPECT_EQ(renders, 3);
  // A render that throws keeps nothing and lets the next caller try again.
  auto d = std::make_shared<int>(4);
  EXPECT_THROW(slot.get(d, "x", [](GzipWriter&) { throw std::runtime_error("boom"); }),
               std::runtime_error);
  slot.get(d, "x", render);
  EXPECT_EQ(renders, 4);
  // The same source with another variant (the subnet's name learnt after the crawl) renders anew;
  // the same variant again does not.
  slot.get(d, "x", render, "\"plane-a\"");
  EXPECT_EQ(renders, 5);
  slot.get(d, "x", render, "\"plane-a\"");
  EXPECT_EQ(renders, 5);
}

TEST(DocumentCache, AcceptEncoding) {
  const auto accepts = [](const std::string& v) {
    httplib::Request req;
    if (!v.empty()) req.headers.emplace("Accept-Encoding", v);
    return acceptsGzip(req);
  };
  EXPECT_TRUE(accepts("gzip"));
  EXPECT_TRUE(accepts("br, gzip;q=0.5, deflate"));
  EXPECT_TRUE(accepts("GZIP"));
  EXPECT_TRUE(accepts("x-gzip"));
  EXPECT_FALSE(accepts(""));
  EXPECT_FALSE(accepts("identity"));
  EXPECT_FALSE(accepts("br"));
  EXPECT_FALSE(accepts("gzip;q=0"));
  EXPECT_FALSE(accepts("gzip; q=0.000"));
}

TEST(ListCursor, RoundTripsAndRefusesWhatItDidNotWrite) {
  for (std::string s : {"", "a", "ab", "abc", "abcd", "\xff\x00\x10"})
    EXPECT_EQ(base64UrlDecode(base64UrlEncode(s)), s);
  EXPECT_EQ(base64UrlEncode("\xfb\xff"), "-_8");
  EXPECT_EQ(base64UrlDecode("-_8="), "\xfb\xff");
  EXPECT_FALSE(base64UrlDecode("a+b/"));
  EXPECT_FALSE(base64UrlDecode("abcde"));

  const json key = json::array({1, "0x0000000000001234", 1});
  const std::string c = encodeCursor("/api/v1/links", key);
  std::string why;
  EXPECT_EQ(decodeCursor("/api/v1/links", c, why), key);
  EXPECT_FALSE(decodeCursor("/api/v1/nodes", c, why));
  EXPECT_NE(why.find("a cursor of /api/v1/links"), std::string::npos) << why;
  EXPECT_FALSE(decodeCursor("/api/v1/links", "", why));
  EXPECT_FALSE(decodeCursor("/api/v1/links", c.substr(1), why));
  EXPECT_FALSE(decodeCursor("/api/v1/links", base64UrlEncode("[1,2]"), why));
  EXPECT_EQ(why, "not a cursor of this API");

  EXPECT_EQ(linkKeyFromJson(key), (LinkKey{{1, Guid{0x1234}}, PortNum(1)}));
  EXPECT_FALSE(linkKeyFromJson(json::array({1, "0x1234"})));
  EXPECT_FALSE(linkKeyFromJson(json::array({3, "0x1234", 1})));
  EXPECT_FALSE(linkKeyFromJson(json::array({1, "zz", 1})));
  EXPECT_FALSE(linkKeyFromJson(json::array({1, "0x1234", 256})));
  EXPECT_FALSE(nodeKeyFromJson(json::array({-1, "0x1234"})));
  EXPECT_EQ(nodeKeyFromJson(toJson(NodeKey{2, Guid{7}})), (NodeKey{2, Guid{7}}));
}

TEST(ListIndex, OrdersLinksByTheirAEndAndHostsByNameAndFindsHealthAsTheLinearSearchDoes) {
  auto t = testing::netfileTopology(testing::superpod(1));
  const TopologyOrder o = orderOf(*t);
  ASSERT_EQ(o.links.size(), t->links().size());
  for (std::size_t i = 1; i < o.links.size(); ++i)
    EXPECT_LT(linkKey(*t, o.links[i - 1]), linkKey(*t, o.links[i]));
  for (std::size_t i = 1; i < o.hosts.size(); ++i)
    EXPECT_LT(t->hosts()[o.hosts[i - 1]].name, t->hosts()[o.hosts[i]].name);
  for (std::size_t i = 1; i < t->nodes().size(); ++i)
    EXPECT_LT(nodeKey(t->nodes()[i - 1]), nodeKey(t->nodes()[i]));

  ServiceState s;
  s.topology = t;
  std::vector<telemetry::LinkHealthReport> reports;
  for (std::uint32_t i = 0; i < t->links().size(); i += 3) {
    const Link& l = t->links()[i];
    telemetry::LinkHealthReport r;
    r.link = i;
    r.a = {t->node(l.a.node).guid, l.a.port};
    r.b = {t->node(l.b.node).guid, l.b.port};
    r.state = i % 2 ? telemetry::LinkState::kDegraded : telemetry::LinkState::kOk;
    reports.push_back(r);
  }
  reports.push_back(reports.front());  // a duplicate: the first one wins, as in findHealth
  reports.back().state = telemetry::LinkState::kFaulty;
  s.health = std::make_shared<const std::vector<telemetry::LinkHealthReport>>(reports);
  ListIndexCache cache;
  const ListIndex index = cache.get(s);
  EXPECT_EQ(cache.builds(), 2u);  // the order and the health lookup
  cache.get(s);
  EXPECT_EQ(cache.builds(), 2u);
  // Reports of the state's own topology are indexed by link, else by port: both find what the
  // linear search finds.
  ServiceState swept = s;
  auto snapshot = std::make_shared<telemetry::CounterSnapshot>();
  snapshot->topology = t;
  swept.counters = snapshot;
  ListIndexCache sweptCache;
  const ListIndex byLink = sweptCache.get(swept);
  for (const auto* st : {&s, &swept}) {
    const ListIndex& ix = st == &s ? index : byLink;
    for (const Node& n : t->nodes())
      for (const auto& p : n.ports) {
        if (!p) continue;
        EXPECT_EQ(ix.healthOf(*st, n.guid, p->num), findHealth(*st, n.guid, p->num));
      }
    for (std::uint32_t i = 0; i < t->links().size(); ++i) {
      const LinkFacts f = ix.linkFacts(*st, i);
      EXPECT_EQ(f.state, i % 3 ? "ok" : (i % 2 ? "degraded" : "ok")) << i;
      EXPECT_EQ(f.activity, LinkActivity::kActive);
      const Link& l = t->links()[i];
      EXPECT_EQ(ix.healthOfLink(*st, i), findHealth(*st, t->node(l.a.node).guid, l.a.port));
    }
  }
  // A new sweep's health: a new lookup, the same order.
  ServiceState s2 = s;
  s2.health = std::make_shared<const std::vector<telemetry::LinkHealthReport>>();
  const ListIndex index2 = cache.get(s2);
  EXPECT_EQ(cache.builds(), 3u);
  EXPECT_EQ(index2.order, index.order);
  EXPECT_EQ(index2.healthOf(s2, t->nodes()[0].guid, PortNum(1)), nullptr);
}

}  // namespace
}  // namespace ibfabric::api
