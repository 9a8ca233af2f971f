#include "api/http/router.h"

#include <httplib.h>

#include <algorithm>

#include "api/http/http_front.h"
#include "api/http/http_json.h"
#include "api/http/rest_server.h"

namespace ibfabric::api {
namespace {

using Request = httplib::Request;
using Response = httplib::Response;

void refuseTooLarge(Response& res) { sendError(res, 413, "request body too large"); }

}  // namespace

Router::Router(httplib::Server& server, DaemonServices services, const RestOptions& options,
               const BearerAuth& auth, MetricsPage& metrics)
    : server_(server),
      services_(services),
      options_(options),
      auth_(auth),
      metrics_(metrics),
      hostLayouts_(std::make_shared<HostLayoutCache>(options.k8sNodeNames)),
      documents_(std::make_shared<DocumentCache>()),
      listIndex_(std::make_shared<ListIndexCache>()) {
  server_.set_payload_max_length(options_.maxBodyBytes);
  // Before the body is read (api/http/http_front.h counts its bytes on the wire).
  server_.set_pre_routing_handler([this](const Request& req, Response& res) {
    return beforeBody(req, res) ? httplib::Server::HandlerResponse::Handled
                                : httplib::Server::HandlerResponse::Unhandled;
  });
}

bool Router::beforeBody(const Request& req, Response& res) const {
  // A compressed body would be inflated without bound by httplib: refused before it is read.
  const std::string encoding = req.get_header_value("Content-Encoding");
  if (!encoding.empty() && encoding != "identity") {
    closeCurrentConnection();
    sendError(res, 415, "Content-Encoding " + encoding + " is not accepted; send the body as is");
    res.set_header("Connection", "close");
    return true;
  }
  const std::size_t limit = limitOf(req);
  const bool chunked = req.has_header("Transfer-Encoding");
  if (!chunked && !req.has_header("Content-Length")) {
    currentRequestHasNoBody();  // no body declared: an empty one, not waited for
    return false;
  }
  limitCurrentRequestBody(limit);
  if (chunked) return false;
  std::size_t n = 0;
  try {
    n = std::stoull(req.get_header_value("Content-Length"));
  } catch (const std::exception&) {
    return false;  // httplib rejects it itself
  }
  if (n <= limit) return false;
  closeCurrentConnection();  // the body stays unread
  refuseTooLarge(res);
  res.set_header("Connection", "close");
  return true;
}

void Router::get(const std::string& pattern, Handler handler) {
  server_.Get(pattern,
              wrap(Access::kOpen, limitFor("GET", pattern, kDefaultBodyLimit), std::move(handler)));
}

void Router::post(const std::string& pattern, Access access, Handler handler,
                  std::size_t maxBodyBytes) {
  server_.Post(pattern, wrap(access, limitFor("POST", pattern, maxBodyBytes), std::move(handler)));
}

void Router::put(const std::string& pattern, Access access, Handler handler,
                 std::size_t maxBodyBytes) {
  server_.Put(pattern, wrap(access, limitFor("PUT", pattern, maxBodyBytes), std::move(handler)));
}

void Router::del(const std::string& pattern, Access access, Handler handler,
                 std::size_t maxBodyBytes) {
  server_.Delete(pattern,
                 wrap(access, limitFor("DELETE", pattern, maxBodyBytes), std::move(handler)));
}

Router::Handler Router::wrap(Access access, std::size_t maxBodyBytes, Handler handler) const {
  return [this, access, maxBodyBytes, handler = std::move(handler)](const Request& req,
                                                                    Response& res) {
    // A chunked body has no Content-Length: its size is known only now.
    if (req.body.size() > maxBodyBytes) return refuseTooLarge(res);
    if (access == Access::kToken && !auth_.authorize(req, res)) return;
    addRoleHeaders(res);
    handler(req, res);
  };
}

void Router::addRoleHeaders(httplib::Response& res) const {
  // Every answer says whose data it is: an active daemon's, or a standby's snapshot and its age.
  const ServiceStatePtr s = services_.fabric.state();
  if (s->ha.mode == HaMode::kAlways) return;
  res.set_header("X-Ibfabric-Role", std::string(toString(s->ha.role)));
  if (s->crawl.lastSuccess) {
    const double age =
        std::chrono::duration<double>(std::chrono::system_clock::now() - *s->crawl.lastSuccess)
            .count();
    res.set_header("X-Ibfabric-Snapshot-Age", std::to_string(static_cast<long long>(age)));
  }
}

std::size_t Router::limitFor(const std::string& method, const std::string& pattern,
                             std::size_t maxBodyBytes) {
  if (maxBodyBytes == kDefaultBodyLimit || maxBodyBytes == options_.maxBodyBytes)
    return options_.maxBodyBytes;
  limits_.push_back({method, std::regex(pattern), maxBodyBytes});
  // The server reads bodies up to the largest limit; limitOf() holds every route to its own.
  std::size_t largest = options_.maxBodyBytes;
  for (const auto& l : limits_) largest = std::max(largest, l.maxBodyBytes);
  server_.set_payload_max_length(largest);
  return maxBodyBytes;
}

std::size_t Router::limitOf(const Request& req) const {
  for (const auto& l : limits_)
    if (l.method == req.method && std::regex_match(req.path, l.pattern)) return l.maxBodyBytes;
  return options_.maxBodyBytes;
}

}  // namespace ibfabric::api
