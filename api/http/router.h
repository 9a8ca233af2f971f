// Router: how every HTTP route of the daemon is registered (api/http/routes/*.cpp). It wraps the
// cpp-httplib server together with what the handlers read (DaemonServices, RestOptions, the
// /metrics cache, the host-health/layout cache of the scheduler exports) and applies the per-route
// rules before a handler runs (and holds the per-snapshot caches of the list and document routes:
// api/http/list_index.h, api/http/document_cache.h):
//   - the body limit of the route (RestOptions::maxBodyBytes unless the route declares its own):
//     a larger Content-Length is refused with 413 before the body is read; a chunked body is
//     cut with 413 once that many bytes arrived (HttpFront counts them on the wire); a body in a
//     Content-Encoding (which httplib would inflate without bound) is refused with 415; a write
//     that declares no body (neither Content-Length nor Transfer-Encoding) has an empty one;
//   - Access::kToken: BearerAuth (api/http/auth.h) answers 401/403 unless the request carries the
//     token. Every write verb names its Access, so no write route can leave the check out.
//
// Owned by RestServer (it outlives the server's handlers). Registration happens on one thread
// before the server runs; the handlers it installs run on any server thread.
#pragma once

#include <cstddef>
#include <functional>
#include <regex>
#include <string>
#include <vector>

#include "api/http/auth.h"
#include "api/http/document_cache.h"
#include "api/http/host_layout_cache.h"
#include "api/http/list_index.h"
#include "api/service/daemon_services.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace ibfabric::api {

struct RestOptions;
class MetricsPage;

/// Who may call a route.
enum class Access {
  kOpen,   ///< anyone (reads, and writes that change nothing: placement, the extender verbs)
  kToken,  ///< only with "Authorization: Bearer <token>" (every route that changes something)
};

class Router {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  /// Means "RestOptions::maxBodyBytes" as a route's body limit.
  static constexpr std::size_t kDefaultBodyLimit = 0;

  Router(httplib::Server& server, DaemonServices services, const RestOptions& options,
         const BearerAuth& auth, MetricsPage& metrics);

  void get(const std::string& pattern, Handler handler);
  void post(const std::string& pattern, Access access, Handler handler,
            std::size_t maxBodyBytes = kDefaultBodyLimit);
  void put(const std::string& pattern, Access access, Handler handler,
           std::size_t maxBodyBytes = kDefaultBodyLimit);
  void del(const std::string& pattern, Access access, Handler handler,
           std::size_t maxBodyBytes = kDefaultBodyLimit);

  const DaemonServices& services() const { return services_; }
  FabricService& fabric() const { return services_.fabric; }
  const RestOptions& options() const { return options_; }
  MetricsPage& metrics() const { return metrics_; }
  /// Host health and export layout per state, shared by the export and extender routes.
  HostLayoutCache& hostLayouts() const { return *hostLayouts_; }
  /// The large documents, rendered once per snapshot (topology, node and link routes).
  DocumentCache& documents() const { return *documents_; }
  /// The list orders and health lookups of the newest snapshot (list routes).
  ListIndexCache& listIndex() const { return *listIndex_; }

 private:
  struct Limit {
    std::string method;
    std::regex pattern;
    std::size_t maxBodyBytes;
  };
  Handler wrap(Access access, std::size_t maxBodyBytes, Handler handler) const;
  /// With ha.mode other than always: X-Ibfabric-Role and X-Ibfabric-Snapshot-Age (seconds since
  /// the served topology was crawled) on every answer.
  void addRoleHeaders(httplib::Response& res) const;
  /// The pre-routing check: encoding, declared length against the route's limit (413), the
  /// wire limit of the body, and "no body declared" (an empty body, not waited for). true: the
  /// request is answered (`res` holds the error).
  bool beforeBody(const httplib::Request& req, httplib::Response& res) const;
  std::size_t limitFor(const std::string& method, const std::string& pattern,
                       std::size_t maxBodyBytes);
  /// The body limit of a request's route (the default one when no route declared its own).
  std::size_t limitOf(const httplib::Request& req) const;

  httplib::Server& server_;
  DaemonServices services_;
  const RestOptions& options_;
  const BearerAuth& auth_;
  MetricsPage& metrics_;
  std::shared_ptr<HostLayoutCache> hostLayouts_;
  std::shared_ptr<DocumentCache> documents_;
  std::shared_ptr<ListIndexCache> listIndex_;
  std::vector<Limit> limits_;  // routes with a limit other than the default
};

}  // namespace ibfabric::api
