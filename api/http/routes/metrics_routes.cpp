// GET /metrics: the page exactly as MetricsPage gives it (api/metrics/metrics_page.h) — the state
// collectors' cached rendering and this scrape's live families — gzip when the scraper accepts
// it, sent without a copy.
#include <httplib.h>

#include <algorithm>

#include "api/http/router.h"
#include "api/http/routes/routes.h"
#include "api/metrics/metrics_page.h"

namespace ibfabric::api {

void addMetricsRoutes(Router& r) {
  MetricsPage& metrics = r.metrics();
  r.get("/metrics", [&metrics](const httplib::Request& req, httplib::Response& res) {
    const bool gzip = req.get_header_value("Accept-Encoding").find("gzip") != std::string::npos;
    auto body = std::make_shared<MetricsBody>(metrics.body(gzip));
    if (body->gzip()) res.set_header("Content-Encoding", "gzip");
    res.set_content_provider(
        body->size(), "text/plain; version=0.0.4",
        [body](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
          const auto part = body->chunk(offset, std::min(length, std::size_t{1} << 20));
          return sink.write(part.data(), part.size());
        });
  });
}

}  // namespace ibfabric::api
