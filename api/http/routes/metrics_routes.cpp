// The Prometheus page: the MetricsCache's last rendering of the state, followed by the live
// counters of the placement engine and the pool (rendered per scrape).
#include <httplib.h>

#include <algorithm>

#include "api/http/router.h"
#include "api/http/routes/routes.h"
#include "api/metrics/metrics_cache.h"
#include "api/metrics/placement_metrics.h"
#include "api/metrics/pool_metrics.h"

namespace ibfabric::api {

void addMetricsRoutes(Router& r) {
  MetricsCache& metrics = r.metrics();
  const DaemonServices services = r.services();
  r.get("/metrics", [&metrics, services](const httplib::Request& req, httplib::Response& res) {
    // The last rendering, as is (no copy); pre-compressed gzip when the scraper accepts it.
    // The placement (and other modules') counters are live (not part of a state snapshot): rendered
    // per scrape and appended (as a second gzip member when compressed; RFC 1952 allows
    // concatenated members).
    auto m = metrics.latest();
    const bool gzip = !m->gzip.empty() &&
                      req.get_header_value("Accept-Encoding").find("gzip") != std::string::npos;
    const std::string* body = gzip ? &m->gzip : &m->text;
    auto tail = std::make_shared<std::string>(renderPlacementMetrics(services.placement.stats()));
    if (services.pool) *tail += renderPoolMetrics(*services.pool);
    if (gzip) {
      *tail = gzipCompress(*tail);
      res.set_header("Content-Encoding", "gzip");
    }
    res.set_content_provider(
        body->size() + tail->size(), "text/plain; version=0.0.4",
        [m, body, tail](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
          const std::string& part = offset < body->size() ? *body : *tail;
          const std::size_t at = offset < body->size() ? offset : offset - body->size();
          const std::size_t n = std::min({length, part.size() - at, std::size_t{1} << 20});
          return sink.write(part.data() + at, n);
        });
  });
}

}  // namespace ibfabric::api
