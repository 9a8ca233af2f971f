// POST /api/v1/whatif: what draining a set of switches and cables would break, on the current
// model and forwarding tables (routing/drain_impact.h), and the jobs it hits (pool allocations and
// reported jobs) with their predicted bottleneck now and after the drain and the placement
// engine's alternatives (routing/job_drain_impact.h). Open to anyone: it only reads. Body:
//   {"drain": {"switches": [GUID or description, ...],
//              "cables": [{"node": GUID or description, "port": N}, ...]}}
// 400 a malformed body, 404 a node or cable the model does not have, 503 no topology yet.
#include <httplib.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "api/http/http_json.h"
#include "api/http/request_params.h"
#include "api/http/router.h"
#include "api/http/routes/routes.h"
#include "api/http/state_guards.h"
#include "api/service/job_service.h"
#include "api/service/pool_service.h"
#include "routing/drain_impact.h"
#include "routing/drained_model.h"
#include "routing/job_drain_impact.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;

/// Destinations listed in the answer (the count is always exact).
constexpr std::size_t kListedDestinations = 1000;

/// A body the route cannot take: the status and one line for the client.
struct BadDrain {
  int status;
  std::string message;
};

/// A node by GUID (node or port) or by its description (as shown, or as the node reported it).
const Node& nodeBySpec(const Topology& t, const json& spec, const std::string& what) {
  if (!spec.is_string()) throw BadDrain{400, what + ": a GUID or a node description (a string)"};
  const std::string text = spec.get<std::string>();
  if (text.empty()) throw BadDrain{400, what + ": an empty name"};
  if (const Node* n = nodeByGuid(t, text)) return *n;
  const Node* found = nullptr;
  for (const Node& n : t.nodes()) {
    if (n.description != text && n.nodeDescription != text) continue;
    if (found) throw BadDrain{400, what + ": several nodes are named " + text + "; give a GUID"};
    found = &n;
  }
  if (!found) throw BadDrain{404, what + ": no node " + text};
  return *found;
}

routing::DrainSet drainSetOf(const Topology& t, const json& body) {
  if (!body.is_object() || !body.contains("drain") || !body["drain"].is_object())
    throw BadDrain{400, R"(the body must be {"drain": {"switches": [...], "cables": [...]}})"};
  const json& drain = body["drain"];
  for (const auto& [key, value] : drain.items())
    if (key != "switches" && key != "cables") throw BadDrain{400, "drain: unknown field " + key};
  routing::DrainSet d;
  const json switches = drain.value("switches", json::array());
  const json cables = drain.value("cables", json::array());
  if (!switches.is_array() || !cables.is_array())
    throw BadDrain{400, "drain.switches and drain.cables must be arrays"};
  if (switches.empty() && cables.empty()) throw BadDrain{400, "nothing to drain"};
  for (const auto& s : switches) {
    const Node& n = nodeBySpec(t, s, "drain.switches");
    if (!n.isSwitch()) throw BadDrain{400, "drain.switches: " + n.description + " is not a switch"};
    d.switches.insert(n.index);
  }
  for (const auto& c : cables) {
    if (!c.is_object() || !c.contains("node") || !c.contains("port") ||
        !c["port"].is_number_unsigned() || c["port"].get<std::uint64_t>() > 254)
      throw BadDrain{400, R"(drain.cables: each {"node": GUID or description, "port": 1..254})"};
    const Node& n = nodeBySpec(t, c["node"], "drain.cables");
    const Port* p = n.port(PortNum(static_cast<std::uint8_t>(c["port"].get<std::uint64_t>())));
    if (!p || !p->link)
      throw BadDrain{404,
                     "drain.cables: no cable at " + n.description + " port " + c["port"].dump()};
    d.links.insert(*p->link);
  }
  return d;
}

json hostsJson(const Topology& t, const routing::DrainImpact& impact) {
  json out = json::array();
  for (const auto& h : impact.hosts) {
    json lost = json::array();
    for (const auto& l : h.lost)
      lost.push_back({{"hca", t.node(l.hca).description},
                      {"guid", toString(t.node(l.hca).guid)},
                      {"rail", l.rail},
                      {"why", l.why}});
    out.push_back({{"host", t.hosts()[h.host].name},
                   {"hcas", h.hcas},
                   {"hcas_lost", h.lost.size()},
                   {"cut_off", h.cutOff()},
                   {"lost", lost}});
  }
  return out;
}

json uplinksJson(const Topology& t, const std::vector<routing::UplinkLoss>& losses) {
  json out = json::array();
  for (const auto& u : losses) {
    json j = {{"group", u.group}, {"up_links", u.upLinks},   {"drained", u.drained},
              {"gbps", u.gbps},   {"gbps_lost", u.gbpsLost}, {"fraction_lost", u.fractionLost()}};
    if (u.leaf != kNoNode) {
      j["leaf"] = t.node(u.leaf).description;
      j["guid"] = toString(t.node(u.leaf).guid);
    }
    out.push_back(std::move(j));
  }
  return out;
}

json rerouteJson(const Topology& t, const routing::DrainImpact& impact) {
  if (!impact.routesKnown) return nullptr;
  json list = json::array();
  for (std::size_t i = 0; i < impact.reroute.size() && i < kListedDestinations; ++i) {
    const Lid lid = impact.reroute[i];
    const auto ref = t.findLid(lid);
    list.push_back(
        {{"lid", lid.value()}, {"node", ref ? json(t.node(ref->node).description) : json()}});
  }
  return {{"destinations", impact.reroute.size()},
          {"entries", impact.rerouteEntries},
          {"listed", list},
          {"truncated", impact.reroute.size() > kListedDestinations}};
}

json optionalNumber(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json bottleneckJson(const routing::JobDrainImpact& hit) {
  return {{"now_bytes_per_second", optionalNumber(hit.bottleneckNow)},
          {"after_bytes_per_second", optionalNumber(hit.bottleneckAfter)},
          {"drop_bytes_per_second", optionalNumber(hit.drop())},
          {"drop_fraction", optionalNumber(hit.dropFraction())}};
}

json alternativesJson(const routing::JobDrainImpact& hit) {
  if (!hit.placed) return nullptr;
  json out = json::array();
  for (const auto& o : hit.alternatives)
    out.push_back({{"hosts", o.hosts},
                   {"bottleneck_bytes_per_second", o.score.bottleneckBytesPerSecond},
                   {"leaf_switches", o.score.leafSwitches},
                   {"max_hops", o.score.maxHops},
                   {"objective", o.score.objective},
                   {"explanation", o.score.explanation}});
  return out;
}

/// The jobs (pool allocations and reported jobs) the drain hits, with their predicted bottleneck
/// now and after the drain and the engine's alternatives (routing/job_drain_impact.h), on the
/// engine's snapshot (the drain moved onto it when the model is newer). `model` says how.
json allocationsJson(Router& r, const Topology& t, const routing::DrainSet& drain,
                     const routing::DrainImpact& impact, json& model) {
  JobService* jobs = r.services().jobs;
  if (!jobs) {
    model = {{"ready", false}, {"reason", "jobs are not tracked by this server"}};
    return nullptr;
  }
  const JobsViewPtr v = jobs->view();
  model = {{"ready", v->engine != nullptr}, {"jobs", v->jobs.size()}};
  std::vector<routing::JobTraffic> traffic;
  for (const auto& j : v->jobs) traffic.push_back({j.id, j.hosts, j.pattern});
  std::vector<routing::JobDrainImpact> hits;
  if (v->engine) {
    try {
      const auto t0 = std::chrono::steady_clock::now();
      const routing::PlacementIndex& ix = v->engine->index();
      const Topology& et = ix.topology();
      const routing::DrainSet onEngine = routing::rebaseDrain(t, drain, et);
      const routing::DrainImpact engineImpact =
          &et == &t ? impact : routing::drainImpact(et, &ix.tables(), onEngine);
      const routing::DrainedModel drained =
          routing::drainedModel(*v->engine, onEngine, engineImpact);
      hits =
          routing::jobDrainImpact(*v->engine, drained, v->attribution.get(), traffic, engineImpact);
      model["destinations_rerouted"] = drained.destinationsRerouted;
      model["seconds"] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } catch (const routing::PlacementError& e) {  // the drained model's index (not expected)
      model["ready"] = false;
      model["reason"] = std::string("drained model: ") + e.what();
    }
  } else {
    // No engine yet: the jobs whose hosts lose HCAs, without bottlenecks.
    model["reason"] = v->notReady;
    std::map<std::string, const routing::HostDrainImpact*, std::less<>> lost;
    for (const auto& h : impact.hosts) lost[t.hosts()[h.host].name] = &h;
    for (std::uint32_t i = 0; i < traffic.size(); ++i) {
      routing::JobDrainImpact hit;
      hit.job = i;
      for (const auto& name : traffic[i].hosts)
        if (const auto it = lost.find(name); it != lost.end())
          hit.hostsHit.push_back({name, it->second->lost.size(), it->second->cutOff()});
      if (!hit.hostsHit.empty()) hits.push_back(std::move(hit));
    }
  }
  model["jobs_hit"] = hits.size();
  PoolService* pool = r.services().pool;
  json out = json::array();
  for (const auto& hit : hits) {
    const JobEntry& j = v->jobs[hit.job];
    std::optional<scheduler_hooks::Allocation> allocation;
    if (j.source == JobSource::kPool && pool) allocation = pool->pool().get(j.id);
    json hosts = json::array();
    for (const auto& h : hit.hostsHit) {
      json entry = {{"host", h.host}, {"hcas_lost", h.hcasLost}, {"cut_off", h.cutOff}};
      if (allocation)
        for (const auto& g : allocation->hosts)
          if (g.host == h.host) entry["gpus"] = g.gpus.size();
      hosts.push_back(std::move(entry));
    }
    json a = {{"job_id", j.id},
              {"source", std::string(toString(j.source))},
              {"pattern", std::string(routing::toString(j.pattern))},
              {"hosts", j.hosts.size()},
              {"hosts_hit", hosts},
              {"drained_links_used", hit.drainedLinksUsed},
              {"bottleneck", bottleneckJson(hit)},
              {"alternatives", alternativesJson(hit)},
              {"alternatives_note", hit.note}};
    if (allocation) a["state"] = std::string(scheduler_hooks::toString(allocation->state));
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

void addWhatIfRoutes(Router& r) {
  r.post(
      "/api/v1/whatif", Access::kOpen, [&r](const httplib::Request& req, httplib::Response& res) {
        auto s = requireTopology(r.fabric(), res);
        if (!s) return;
        const Topology& t = *s->topology;
        const json body = json::parse(req.body, nullptr, false);
        if (body.is_discarded()) return sendError(res, 400, "bad JSON body");
        routing::DrainSet drain;
        try {
          drain = drainSetOf(t, body);
        } catch (const BadDrain& e) {
          return sendError(res, e.status, e.message);
        }
        // The tables as read, judged against the model as it is now.
        routing::ForwardingTablesPtr tables = s->forwarding;
        if (tables && tables->topology() != s->topology)
          tables = routing::rebaseTables(*tables, s->topology);
        const auto impact = routing::drainImpact(t, tables.get(), drain);
        json model;
        json allocations = allocationsJson(r, t, drain, impact, model);
        sendJson(res,
                 {{"drain", {{"switches", drain.switches.size()}, {"cables", drain.links.size()}}},
                  {"hosts_cut_off", impact.hostsCutOff()},
                  {"hcas_lost", impact.hcasLost()},
                  {"hosts", hostsJson(t, impact)},
                  {"leaves", uplinksJson(t, impact.leaves)},
                  {"leaf_groups", uplinksJson(t, impact.groups)},
                  {"reroute", rerouteJson(t, impact)},
                  {"allocations", std::move(allocations)},
                  {"allocations_model", std::move(model)}});
      });
}

}  // namespace ibfabric::api
