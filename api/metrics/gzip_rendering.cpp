#include "api/metrics/gzip_rendering.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>

#include "api/metrics/gzip.h"

namespace ibfabric::api {
namespace {

/// A collector whose last piece of text reaches the sink within its own run (and its timing):
/// a deflate failure then counts as the collector's.
class Flushed final : public Collector {
 public:
  explicit Flushed(const Collector& inner) : inner_(inner) {}
  std::string_view name() const override { return inner_.name(); }
  void collect(const CollectContext& context, MetricWriter& out) const override {
    inner_.collect(context, out);
    out.flush();
  }

 private:
  const Collector& inner_;
};

}  // namespace

GzipRendering renderGzip(const std::vector<CollectorPtr>& collectors, const CollectContext& context,
                         std::size_t pieceBytes) {
  GzipRendering r;
  r.collectors.reserve(collectors.size());
  std::string scratch;  // one piece of text, reused by every collector, freed on return
  scratch.reserve(pieceBytes + pieceBytes / 4);
  for (const auto& c : collectors) {
    std::vector<std::string> member;
    std::size_t text = 0;
    CollectorResult result;
    {
      GzipMemberWriter gz;
      MetricWriter out(scratch, gz, pieceBytes);
      result = runCollector(Flushed(*c), context, out);
      r.scratchBytes = std::max(r.scratchBytes, scratch.capacity());
      if (result.success) {
        try {
          member = gz.finish();
          text = gz.textBytes();
        } catch (const std::exception& e) {
          spdlog::error("metrics: collector {} failed: {}", result.name, e.what());
          result.success = false;
        }
      }
    }
    scratch.clear();  // a failed collector's unflushed text goes with its member
    r.collectors.push_back(std::move(result));
    if (!r.collectors.back().success) continue;
    r.textBytes += text;
    for (auto& chunk : member) {
      r.bytes += chunk.size();
      r.chunks.push_back(std::move(chunk));
    }
  }
  return r;
}

}  // namespace ibfabric::api
