// GET /metrics[?shard=I&shards=N]: the page exactly as MetricsPage gives it
// (api/metrics/metrics_page.h) — the latest rendering of the state collectors for the whole
// fabric or one shard, and this scrape's live families — gzip when the scraper accepts it (the
// stored members as they are), plain text otherwise (inflated as it is sent). Bad shard
// parameters answer 400 "bad shard: ..."; one shard variant more than the page keeps, 503.
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <string_view>

#include "api/http/document_cache.h"
#include "api/http/http_json.h"
#include "api/http/router.h"
#include "api/http/routes/routes.h"
#include "api/metrics/metrics_page.h"

namespace ibfabric::api {
void addMetricsRoutes(Router& r) {
  MetricsPage& metrics = r.metrics();
  r.get("/metrics", [&metrics](const httplib::Request& req, httplib::Response& res) {
    std::string error;
    const std::string shardText = req.get_param_value("shard");
    const std::string shardsText = req.get_param_value("shards");
    const auto shard = MetricsShard::parse(
        req.has_param("shard") ? std::optional<std::string_view>(shardText) : std::nullopt,
        req.has_param("shards") ? std::optional<std::string_view>(shardsText) : std::nullopt,
        error);
    if (!shard) {
      sendError(res, 400, "bad shard: " + error);
      return;
    }
    auto made = metrics.body(acceptsGzip(req), *shard, error);
    if (!made) {
      sendError(res, 503, error);
      return;
    }
    auto body = std::make_shared<MetricsBody>(std::move(*made));
    if (body->gzip()) res.set_header("Content-Encoding", "gzip");
    res.set_header("Vary", "Accept-Encoding");
    res.set_content_provider(
        body->size(), "text/plain; version=0.0.4",
        [body](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
          try {
            const auto part = body->chunk(offset, std::min(length, std::size_t{1} << 20));
            return sink.write(part.data(), part.size());
          } catch (const std::exception& e) {  // a stored page that does not inflate
            spdlog::error("metrics: serving the page failed: {}", e.what());
            return false;
          }
        });
  });
}

}  // namespace ibfabric::api
