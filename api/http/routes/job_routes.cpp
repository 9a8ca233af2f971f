// Jobs and the links they load (api/service/job_service.h, docs/api.md "Jobs"):
//   GET    /api/v1/jobs                     the pool's allocations and the reported jobs
//   PUT    /api/v1/jobs/{id}                (token) report a job: {"hosts": [...], "pattern": ...}
//   DELETE /api/v1/jobs/{id}                (token) forget a reported job
//   GET    /api/v1/jobs/{id}                one job
//   GET    /api/v1/jobs/{id}/fabric         its links now, bottleneck now vs at start, neighbours
//   GET    /api/v1/links/{guid}/{port}/jobs the jobs on the port's two directions and their shares
// Without a JobService (set-ups that do not track jobs) they answer 503.
#include <httplib.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "api/http/http_json.h"
#include "api/http/json_views.h"
#include "api/http/request_params.h"
#include "api/http/router.h"
#include "api/http/routes/routes.h"
#include "routing/predicted_bottleneck.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;
using Request = httplib::Request;
using Response = httplib::Response;
using routing::DirectedLinkId;

/// Bodies of PUT /api/v1/jobs/{id}: room for a job on every host of a large fabric.
constexpr std::size_t kJobBodyBytes = 1024 * 1024;
/// Neighbours listed per hottest link.
constexpr std::size_t kNeighboursListed = 20;

JobService* jobsOr503(Router& r, Response& res) {
  if (!r.services().jobs) sendError(res, 503, "jobs are not tracked by this server");
  return r.services().jobs;
}

json endJson(const Topology& t, PortRef p) {
  const Node& n = t.node(p.node);
  return {{"node", n.description}, {"guid", toString(n.guid)}, {"port", p.port.value()}};
}

/// A directed link as the view's engine sees it now.
json directedJson(const JobsView& v, DirectedLinkId d) {
  const Topology& t = v.engine->index().topology();
  const auto& load = v.engine->load();
  const auto& l = load.at(d);
  return {{"from", endJson(t, load.sender(d))},
          {"to", endJson(t, load.receiver(d))},
          {"utilization", l.utilization},
          {"congestion", l.congestion},
          {"capacity_bytes_per_second", l.capacityBytesPerSecond},
          {"health", std::string(telemetry::toString(l.health))}};
}

/// The jobs on `d` (all, highest share first).
json jobsOnJson(const JobsView& v, DirectedLinkId d, std::size_t limit, std::size_t skip) {
  json out = json::array();
  for (const auto& u : v.attribution->jobsOn(d)) {
    if (u.job == skip) continue;
    if (out.size() >= limit) break;
    out.push_back({{"job", v.jobs[u.job].id},
                   {"source", std::string(toString(v.jobs[u.job].source))},
                   {"flows", u.flows},
                   {"share", u.share}});
  }
  return out;
}

json optionalNumber(const std::optional<double>& x) { return x ? json(*x) : json(nullptr); }

json jobJson(const JobsView& v, std::size_t i) {
  const JobEntry& j = v.jobs[i];
  json out = {{"id", j.id},
              {"source", std::string(toString(j.source))},
              {"pattern", std::string(routing::toString(j.pattern))},
              {"hosts", j.hosts},
              {"since_unix", epochSeconds(j.since)},
              {"bottleneck_at_start_bytes_per_second", optionalNumber(j.bottleneckAtStart)}};
  if (v.attribution) {
    out["links_used"] = v.attribution->jobs()[i].links.size();
    const auto& hot = v.hottest[i];
    out["hottest_link"] = hot.empty() ? json(nullptr) : directedJson(v, hot[0].use.link);
  }
  return out;
}

json listJson(const JobsView& v) {
  json jobs = json::array();
  for (std::size_t i = 0; i < v.jobs.size(); ++i) jobs.push_back(jobJson(v, i));
  json out = {{"jobs", jobs}, {"attributed", v.attribution != nullptr}};
  if (!v.notReady.empty()) out["not_ready"] = v.notReady;
  return out;
}

/// The other jobs on the job's hottest links: per job, on how many of them and its largest share.
json neighboursJson(const JobsView& v, std::size_t i) {
  struct Seen {
    int links = 0;
    double maxShare = 0.0;
  };
  std::map<std::uint32_t, Seen> seen;
  for (const auto& h : v.hottest[i])
    for (const auto& u : v.attribution->jobsOn(h.use.link)) {
      if (u.job == i) continue;
      auto& s = seen[u.job];
      ++s.links;
      s.maxShare = std::max(s.maxShare, u.share);
    }
  json out = json::array();
  for (const auto& [job, s] : seen)
    out.push_back({{"job", v.jobs[job].id},
                   {"source", std::string(toString(v.jobs[job].source))},
                   {"hottest_links_shared", s.links},
                   {"max_share", s.maxShare}});
  return out;
}

json bottleneckJson(const JobsView& v, std::size_t i) {
  const JobEntry& j = v.jobs[i];
  const std::optional<double> now = routing::predictedBottleneck(*v.engine, j.hosts, j.pattern);
  json out = {{"now_bytes_per_second", optionalNumber(now)},
              {"at_start_bytes_per_second", optionalNumber(j.bottleneckAtStart)}};
  out["ratio"] = now && j.bottleneckAtStart && *j.bottleneckAtStart > 0
                     ? json(*now / *j.bottleneckAtStart)
                     : json(nullptr);
  return out;
}

void fabricOfJob(JobService& jobs, const Request& req, Response& res) {
  auto limit = limitParam(req, res, 100);
  if (!limit) return;
  const JobsViewPtr v = jobs.view();
  const std::string id = req.matches[1];
  const auto i = v->find(id);
  if (!i) return sendError(res, 404, "no job " + id);
  if (!v->attribution) return sendError(res, 503, "no attribution yet: " + v->notReady);
  const auto& routed = v->attribution->jobs()[*i];
  // Every link used, hottest first (the same order as hottest_links), then cut at `limit`.
  auto all = routing::hottestLinks(routed, v->engine->load(), routed.links.size());
  json links = json::array();
  for (std::size_t k = 0; k < all.size() && k < *limit; ++k) {
    json l = directedJson(*v, all[k].use.link);
    l["flows"] = all[k].use.flows;
    l["share"] = all[k].use.share;
    l["jobs_on_link"] = v->attribution->jobsOn(all[k].use.link).size();
    links.push_back(std::move(l));
  }
  json hottest = json::array();
  for (const auto& h : v->hottest[*i]) {
    json l = directedJson(*v, h.use.link);
    l["flows"] = h.use.flows;
    l["share"] = h.use.share;
    l["neighbours"] = jobsOnJson(*v, h.use.link, kNeighboursListed, *i);
    hottest.push_back(std::move(l));
  }
  json out = jobJson(*v, *i);
  out.erase("hottest_link");
  out["flows"] = routed.flows;
  out["unrouted_flows"] = routed.unrouted;
  out["unknown_hosts"] = routed.unknownHosts;
  out["bottleneck"] = bottleneckJson(*v, *i);
  out["hottest_links"] = hottest;
  out["neighbours"] = neighboursJson(*v, *i);
  out["links"] = links;
  out["truncated"] = all.size() > *limit;
  sendJson(res, out);
}

void jobsOfLink(Router& r, JobService& jobs, const Request& req, Response& res) {
  const JobsViewPtr v = jobs.view();
  // The topology the attribution's link ids refer to; the newest crawl while there is none.
  TopologyPtr topo = v->engine ? v->engine->index().topologyPtr() : r.fabric().state()->topology;
  if (!topo) return sendError(res, 503, "no topology yet (first crawl)");
  auto p = portFromPath(*topo, req, res);
  if (!p) return;
  if (!p->port->link)
    return sendError(
        res, 404,
        "no cable at " + p->node->description + " port " + std::to_string(p->ref.port.value()));
  json out = {{"port", endJson(*topo, p->ref)}, {"attributed", v->attribution != nullptr}};
  if (!v->attribution) {
    out["tx"] = out["rx"] = nullptr;
    if (!v->notReady.empty()) out["not_ready"] = v->notReady;
    return sendJson(res, out);
  }
  const auto tx = v->engine->load().transmitting(p->ref);
  if (!tx) return sendError(res, 404, "no cable at " + p->node->description);
  for (const auto& [key, d] : {std::pair{"tx", *tx}, std::pair{"rx", *tx ^ 1u}}) {
    json l = directedJson(*v, d);
    l["jobs"] = jobsOnJson(*v, d, v->jobs.size(), v->jobs.size());
    out[key] = std::move(l);
  }
  sendJson(res, out);
}

}  // namespace

void addJobRoutes(Router& r) {
  r.get("/api/v1/jobs", [&r](const Request&, Response& res) {
    if (JobService* jobs = jobsOr503(r, res)) sendJson(res, listJson(*jobs->view()));
  });
  r.put(R"(/api/v1/jobs/([^/]+))", Access::kToken,
        [&r](const Request& req, Response& res) {
          JobService* jobs = jobsOr503(r, res);
          if (!jobs) return;
          const json body = json::parse(req.body, nullptr, false);
          if (body.is_discarded()) return sendError(res, 400, "the body is not JSON");
          const std::string id = req.matches[1];
          try {
            const bool created = jobs->report(id, body);
            const JobsViewPtr v = jobs->view();
            const auto i = v->find(id);
            sendJson(res, i ? jobJson(*v, *i) : json{{"id", id}}, created ? 201 : 200);
          } catch (const JobError& e) {
            sendError(res, e.status(), e.what());
          }
        },
        kJobBodyBytes);
  r.del(R"(/api/v1/jobs/([^/]+))", Access::kToken, [&r](const Request& req, Response& res) {
    JobService* jobs = jobsOr503(r, res);
    if (!jobs) return;
    const std::string id = req.matches[1];
    try {
      if (!jobs->remove(id)) return sendError(res, 404, "no reported job " + id);
      sendJson(res, {{"removed", id}});
    } catch (const JobError& e) {
      sendError(res, e.status(), e.what());
    }
  });
  r.get(R"(/api/v1/jobs/([^/]+))", [&r](const Request& req, Response& res) {
    JobService* jobs = jobsOr503(r, res);
    if (!jobs) return;
    const JobsViewPtr v = jobs->view();
    const auto i = v->find(req.matches[1].str());
    if (!i) return sendError(res, 404, "no job " + req.matches[1].str());
    sendJson(res, jobJson(*v, *i));
  });
  r.get(R"(/api/v1/jobs/([^/]+)/fabric)", [&r](const Request& req, Response& res) {
    if (JobService* jobs = jobsOr503(r, res)) fabricOfJob(*jobs, req, res);
  });
  r.get(R"(/api/v1/links/([^/]+)/([^/]+)/jobs)", [&r](const Request& req, Response& res) {
    if (JobService* jobs = jobsOr503(r, res)) jobsOfLink(r, *jobs, req, res);
  });
}

}  // namespace ibfabric::api
