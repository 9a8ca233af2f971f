// The page's storage: gzip members written piece by piece (GzipMemberWriter), the state
// collectors rendered straight into one member each (renderGzip: byte for byte renderState's
// text; a throwing collector's member is dropped), and MetricsBody serving the stored members as
// they are (gzip) or inflated on the fly (plain text), byte for byte.
#include <gtest/gtest.h>

#include <stdexcept>

#include "api/metrics/collectors.h"
#include "api/metrics/gzip.h"
#include "api/metrics/gzip_rendering.h"
#include "api/metrics/metrics.h"
#include "api/metrics/metrics_body.h"
#include "tests/fakes/fake_sources.h"
#include "tests/support/fabrics.h"
#include "tests/support/gzip.h"

namespace ibfabric::api {
namespace {

std::string joined(const std::vector<std::string>& chunks) {
  std::string s;
  for (const auto& c : chunks) s += c;
  return s;
}

/// `lines` samples of one family, each line different (so deflate cannot make them nothing).
class LinesCollector final : public Collector {
 public:
  LinesCollector(std::string name, int lines) : name_(std::move(name)), lines_(lines) {}
  std::string_view name() const override { return name_; }
  void collect(const CollectContext&, MetricWriter& out) const override {
    const std::string family = "ibfabric_" + name_ + "_thing";
    out.family(family, "Lines of " + name_, "gauge");
    for (int i = 0; i < lines_; ++i)
      out.sampleU(family, Labels("i", std::to_string(i * 7919 % 100003)), i);
  }

 private:
  std::string name_;
  int lines_;
};

/// Writes a few thousand lines (several pieces reach its member), then throws.
class ThrowingCollector final : public Collector {
 public:
  std::string_view name() const override { return "broken"; }
  void collect(const CollectContext& c, MetricWriter& out) const override {
    LinesCollector("broken", 3000).collect(c, out);
    throw std::runtime_error("source went away");
  }
};

std::vector<CollectorPtr> threeWithABrokenOne() {
  std::vector<CollectorPtr> c;
  c.push_back(std::make_unique<LinesCollector>("first", 2000));
  c.push_back(std::make_unique<ThrowingCollector>());
  c.push_back(std::make_unique<LinesCollector>("last", 5));
  return c;
}

TEST(ApiMetricsGzip, AMemberWrittenInPiecesDecodesToItsText) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "line " + std::to_string(i * 31 % 9973) + "\n";
  GzipMemberWriter gz(1, 4096);  // small chunks: many of them
  for (std::size_t at = 0; at < text.size(); at += 1000) gz.write(text.substr(at, 1000));
  EXPECT_EQ(gz.textBytes(), text.size());
  const auto chunks = gz.finish();
  ASSERT_GT(chunks.size(), 3u);
  for (std::size_t i = 0; i + 1 < chunks.size(); ++i) EXPECT_EQ(chunks[i].size(), 4096u);
  EXPECT_LE(chunks.back().size(), 4096u);
  EXPECT_EQ(testing::gunzip(joined(chunks)), text);
}

TEST(ApiMetricsGzip, ConcatenatedMembersDecodeToTheConcatenatedTexts) {
  GzipMemberWriter a, b, empty;
  a.write("# first\n");
  b.write("# second\n");
  b.write("x 1\n");
  const std::string stream = joined(a.finish()) + joined(empty.finish()) + joined(b.finish());
  EXPECT_EQ(testing::gunzip(stream), "# first\n# second\nx 1\n");

  // The inflater of plain-text scrapes, fed in odd pieces, out in odd pieces.
  GunzipStream in;
  std::string out;
  char buf[5];
  for (std::size_t at = 0; at < stream.size(); at += 3) {
    std::string_view piece = std::string_view(stream).substr(at, 3);
    while (!piece.empty()) out.append(buf, in.inflate(piece, buf, sizeof buf));
  }
  EXPECT_EQ(out, "# first\n# second\nx 1\n");
}

TEST(ApiMetricsGzip, ACorruptStreamIsAnError) {
  GzipMemberWriter a;
  a.write("some text that compresses\n");
  std::string stream = joined(a.finish());
  stream[stream.size() / 2] ^= 0x55;
  stream[stream.size() / 2 + 1] ^= 0x55;
  GunzipStream in;
  std::string_view piece = stream;
  char buf[256];
  EXPECT_THROW(while (!piece.empty()) in.inflate(piece, buf, sizeof buf), std::runtime_error);
}

TEST(ApiMetricsGzipRendering, OneMemberPerCollectorAndAThrowingCollectorsMemberIsDropped) {
  ServiceState s;
  telemetry::EventLog events;
  const MetricsOptions options;
  const StateRendering text = renderState(threeWithABrokenOne(), s, events, options);
  ASSERT_EQ(text.text.find("ibfabric_broken_thing"), std::string::npos);
  for (std::size_t piece : {std::size_t{64}, std::size_t{4096}, kRenderPieceBytes}) {
    SCOPED_TRACE(piece);
    const GzipRendering gz =
        renderGzip(threeWithABrokenOne(), CollectContext{s, events, options}, piece);
    ASSERT_EQ(gz.collectors.size(), 3u);
    EXPECT_TRUE(gz.collectors[0].success);
    EXPECT_FALSE(gz.collectors[1].success) << "the broken collector reports its failure";
    EXPECT_TRUE(gz.collectors[2].success);
    EXPECT_EQ(gz.collectors[1].name, "broken");
    const std::string page = joined(gz.chunks);
    EXPECT_EQ(gz.bytes, page.size());
    EXPECT_EQ(gz.textBytes, text.text.size());
    EXPECT_EQ(testing::gunzip(page), text.text) << "byte for byte the text rendering";
    EXPECT_LT(gz.scratchBytes, piece + piece / 2 + 1024) << "the text buffer stays one piece";
  }
}

ServiceState fabricState(int size = 4) {
  ServiceState s;
  s.topology = testing::crawledFatTreeTopology("s", size, size, size);
  auto control = std::make_shared<FakeCounterControl>();
  FakeCounterSource source(control);
  source.setTopology(s.topology);
  s.counters = source.sweep();
  return s;
}

TEST(ApiMetricsGzipRendering, TheStateCollectorsRenderByteForByteAsText) {
  const ServiceState s = fabricState();
  telemetry::EventLog events;
  for (bool all : {true, false}) {
    MetricsOptions options;
    if (all) {
      options.ports = PortScope::kAll;
      options.counterSets = MetricsOptions::allCounterSets();
    }
    const std::string text = renderState(stateCollectors(), s, events, options).text;
    ASSERT_GT(text.size(), 10000u);
    const GzipRendering gz = renderGzip(stateCollectors(), CollectContext{s, events, options}, 512);
    EXPECT_EQ(testing::gunzip(joined(gz.chunks)), text);
    EXPECT_EQ(gz.textBytes, text.size());
  }
}

std::string readAll(MetricsBody& b, std::size_t step) {
  std::string out;
  for (std::size_t at = 0; at < b.size();) {
    const auto part = b.chunk(at, step);
    if (part.empty()) {
      ADD_FAILURE() << "empty chunk at " << at;
      break;
    }
    out.append(part);
    at += part.size();
  }
  return out;
}

TEST(ApiMetricsBody, PlainTextIsInflatedOnTheFlyByteForByte) {
  const ServiceState s = fabricState(8);
  telemetry::EventLog events;
  MetricsOptions options;  // every port and counter set: a page of several inflated pieces
  options.ports = PortScope::kAll;
  options.counterSets = MetricsOptions::allCounterSets();
  const std::string text = renderState(stateCollectors(), s, events, options).text;
  auto r = std::make_shared<RenderedMetrics>();
  r->page = renderGzip(stateCollectors(), CollectContext{s, events, options}, 4096);
  ASSERT_GT(r->page.textBytes, 3 * MetricsBody::kPlainPieceBytes) << "several inflated pieces";
  const RenderedMetricsPtr rendering = r;

  for (std::size_t step : {std::size_t{1} << 20, std::size_t{777}}) {
    MetricsBody plain(rendering, false, "tail 1\n");
    EXPECT_FALSE(plain.gzip());
    EXPECT_EQ(plain.size(), text.size() + 7);
    EXPECT_EQ(readAll(plain, step), text + "tail 1\n") << step;
  }
  // Out of order (a range request): inflated again from the start, the same bytes.
  MetricsBody plain(rendering, false, "");
  const std::size_t late = text.size() - 100, early = 10;
  EXPECT_EQ(plain.chunk(late, 50), text.substr(late, 50));
  EXPECT_EQ(plain.chunk(early, 50), text.substr(early, 50));

  MetricsBody gz(rendering, true, gzipCompress("tail 1\n"));
  EXPECT_TRUE(gz.gzip());
  EXPECT_EQ(gz.size(), r->page.bytes + gzipCompress("tail 1\n").size());
  const std::string sent = readAll(gz, 1000);  // crosses the stored chunks' boundaries
  EXPECT_EQ(sent.substr(0, r->page.bytes), joined(r->page.chunks)) << "the stored bytes as sent";
  EXPECT_EQ(testing::gunzip(sent), text + "tail 1\n");
  EXPECT_EQ(gz.chunk(5, 10), std::string_view(joined(r->page.chunks)).substr(5, 10));
}

}  // namespace
}  // namespace ibfabric::api
