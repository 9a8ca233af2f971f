#include "api/http/rest_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

#include "api/http/http_json.h"
#include "api/http/router.h"
#include "api/http/routes/routes.h"
#include "api/metrics/collectors.h"
#include "api/metrics/metrics_page.h"

namespace ibfabric::api {

using Request = httplib::Request;
using Response = httplib::Response;

std::unique_ptr<httplib::Server> makeHttpServer(const std::string& cert, const std::string& key,
                                                const HttpLimits& limits) {
  if (cert.empty() && key.empty()) return std::make_unique<FrontedServer>(limits);
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
  auto server = std::make_unique<httplib::SSLServer>(cert.c_str(), key.c_str());
  if (!server->is_valid())
    throw std::runtime_error("tls: cannot load the certificate " + cert + " or the key " + key);
  const auto secs = [](std::chrono::milliseconds d) {
    return std::max<time_t>(1, static_cast<time_t>((d.count() + 999) / 1000));
  };
  const auto threads = limits.workers;
  server->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server->set_read_timeout(secs(limits.readTimeout), 0);
  server->set_write_timeout(secs(limits.writeTimeout), 0);
  server->set_keep_alive_max_count(std::max<std::size_t>(1, limits.keepAliveMax));
  server->set_keep_alive_timeout(secs(limits.idleTimeout));
  return server;
#else
  throw std::runtime_error("tls: this build of cpp-httplib has no OpenSSL support");
#endif
}

namespace {

HttpLimits limitsOf(const RestOptions& options) {
  HttpLimits limits = options.http;
  limits.workers = options.threads;
  return limits;
}

}  // namespace

RestServer::RestServer(DaemonServices services, RestOptions options)
    : RestServer(services, options,
                 makeHttpServer(options.tlsCert, options.tlsKey, limitsOf(options))) {}

RestServer::RestServer(DaemonServices services, RestOptions options,
                       std::unique_ptr<httplib::Server> server)
    : services_(services),
      options_(std::move(options)),
      auth_(options_.token),
      server_(std::move(server)) {
  metrics_ =
      std::make_unique<MetricsPage>(services_.fabric, options_.metrics, liveCollectors(services_));
  router_ = std::make_unique<Router>(*server_, services_, options_, auth_, *metrics_);
  errorHandlers();
  routes();
}

RestServer::~RestServer() { stop(); }

int RestServer::bind(const std::string& host, int port) {
  const int bound =
      port == 0 ? server_->bind_to_any_port(host) : (server_->bind_to_port(host, port) ? port : -1);
  if (auto* fronted = dynamic_cast<FrontedServer*>(server_.get()); fronted && bound > 0)
    fronted->setListenBacklog(options_.http.listenBacklog);
  return bound;
}

bool RestServer::run() {
  // running_ is set before stopRequested_ is read, and stop() does the reverse: one of the two
  // sees the other, so a stop() never slips between the check and httplib's accept loop.
  running_ = true;
  if (stopRequested_) {
    running_ = false;
    return true;
  }
  const bool ok = server_->listen_after_bind();
  running_ = false;
  return ok;
}

void RestServer::stop() {
  stopRequested_ = true;
  // run() may be between its check and httplib's accept loop: wait until it listens (httplib's
  // stop() does nothing before that) or has returned.
  while (running_ && !server_->is_running())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (server_->is_running()) server_->stop();
}

void RestServer::setToken(std::string token) { auth_.setToken(std::move(token)); }

void RestServer::errorHandlers() {
  server_->set_exception_handler([](const Request&, Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = std::string("internal error: ") + e.what();
    } catch (...) {
    }
    spdlog::error("http: {}", what);
    sendError(res, 500, what);
  });
  server_->set_error_handler([](const Request& req, Response& res) {
    // A body cut at the route's limit on the wire (chunked or not): httplib saw a read error.
    if (currentRequestTooLarge()) return sendError(res, 413, "request body too large");
    // Handlers that already produced a JSON body keep it.
    if (!res.body.empty()) return;
    if (res.status == 404) return sendError(res, 404, "no such resource: " + req.path);
    if (res.status == 413) return sendError(res, 413, "request body too large");
    sendError(res, res.status, "request failed");
  });
  server_->set_logger([](const Request& req, const Response& res) {
    spdlog::debug("http {} {} -> {}", req.method, req.path, res.status);
  });
}

void RestServer::routes() {
  Router& r = *router_;
  addHealthRoutes(r);
  addOpenApiRoutes(r);
  addMetricsRoutes(r);
  addTopologyRoutes(r);
  addLinkRoutes(r);
  addEventRoutes(r);
  addOpsRoutes(r);
  addRoutingRoutes(r);
  addRoutingTableRoutes(r);
  addExportRoutes(r);
  addExtenderRoutes(r);
  addPlacementRoutes(r);
  addPoolRoutes(r);
  addWhatIfRoutes(r);
  addJobRoutes(r);
  addMapRoutes(r);
  addUiRoutes(r);
}

}  // namespace ibfabric::api
