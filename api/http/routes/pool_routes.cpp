// The GPU pool's REST face under /api/v1/pool (docs/pool.md, api/http/openapi.json): usage,
// hosts (GET, PUT with the token), allocations (GET, POST and DELETE with the token). Pool and
// inventory errors become JSON answers with their HTTP status. Without a `pool:` configuration
// none of these routes exist (404).
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "api/http/http_json.h"
#include "api/http/router.h"
#include "api/http/routes/routes.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;
using scheduler_hooks::Allocation;
using scheduler_hooks::PoolError;
using Request = httplib::Request;
using Response = httplib::Response;

/// Runs a handler body, turning the pool's and the inventory's errors into JSON answers.
template <typename Fn>
void guarded(Response& res, Fn&& fn) {
  try {
    fn();
  } catch (const PoolError& e) {
    sendError(res, e.httpStatus(), e.what());
  } catch (const scheduler_hooks::InventoryError& e) {
    sendError(res, 400, e.what());
  }
}

json parseBody(const Request& req) {
  json j = json::parse(req.body, nullptr, false);
  if (j.is_discarded()) throw PoolError(PoolError::Kind::kInvalid, "the body is not JSON");
  return j;
}

json hostViewJson(const scheduler_hooks::PoolHostView& v) {
  json j = toJson(v.host);
  for (std::size_t i = 0; i < j["gpus"].size() && i < v.rails.size(); ++i)
    j["gpus"][i]["rail"] = v.rails[i] >= 0 ? json(v.rails[i]) : json(nullptr);
  j["in_fabric"] = v.inFabric;
  j["health"] = toString(v.health);
  j["health_reason"] = v.healthReason;
  j["free_gpus"] = v.freeGpus;
  j["allocations"] = v.allocations;
  return j;
}

json usageJson(const scheduler_hooks::PoolUsage& u) {
  json classes = json::object();
  for (const auto& [c, cu] : u.byClass)
    classes[std::string(toString(c))] = {{"gpus", cu.gpus},
                                         {"allocations", cu.allocations},
                                         {"degraded_allocations", cu.degradedAllocations}};
  json quotas = json::array();
  for (const auto& q : u.quotas) {
    json j = toJson(q.rule);
    j["active"] = q.active;
    j["limit_gpus"] = q.limitGpus;
    j["used_gpus"] = q.usedGpus;
    j["exceeded"] = q.exceeded;
    quotas.push_back(j);
  }
  const auto secs =
      std::chrono::duration_cast<std::chrono::seconds>(u.now.time_since_epoch()).count();
  return {
      {"total_gpus", u.totalGpus},
      {"usable_gpus", u.usableGpus},
      {"used_gpus", u.usedGpus},
      {"free_gpus", std::max(0.0, u.usableGpus - u.usedGpus)},
      {"classes", classes},
      {"quotas", quotas},
      {"unknown_hosts", u.unknownHosts},
      {"preemptions", u.preemptions},
      {"journal",
       {{"records_since_snapshot", u.journalRecords}, {"torn_bytes_at_start", u.tornBytesAtStart}}},
      {"now_unix", secs}};
}

}  // namespace

void addPoolRoutes(Router& r) {
  if (!r.services().pool) return;
  PoolService& service = *r.services().pool;
  scheduler_hooks::Pool& pool = service.pool();
  r.get("/api/v1/pool", [&pool](const Request&, Response& res) {
    guarded(res, [&] { sendJson(res, usageJson(pool.usage())); });
  });
  r.get("/api/v1/pool/hosts", [&pool](const Request&, Response& res) {
    json out = json::array();
    for (const auto& v : pool.hosts()) out.push_back(hostViewJson(v));
    sendJson(res, {{"hosts", out}});
  });
  r.get(R"(/api/v1/pool/hosts/([^/]+))", [&pool](const Request& req, Response& res) {
    auto v = pool.host(req.matches[1].str());
    if (!v) return sendError(res, 404, "no pool host named " + req.matches[1].str());
    sendJson(res, hostViewJson(*v));
  });
  r.put(R"(/api/v1/pool/hosts/([^/]+))", Access::kToken,
        [&pool](const Request& req, Response& res) {
          guarded(res, [&] {
            const std::string name = req.matches[1];
            json body = parseBody(req);
            if (body.is_object() && body.contains("name")) {
              if (body["name"] != name)
                throw PoolError(PoolError::Kind::kInvalid, "the body names another host");
              body.erase("name");
            }
            const bool created = pool.putHost(scheduler_hooks::hostFromJson(name, body));
            sendJson(res, hostViewJson(*pool.host(name)), created ? 201 : 200);
          });
        });
  r.get("/api/v1/pool/allocations", [&pool](const Request&, Response& res) {
    json out = json::array();
    for (const auto& a : pool.list()) out.push_back(toJson(a));
    sendJson(res, {{"allocations", out}});
  });
  r.post("/api/v1/pool/allocations", Access::kToken, [&service](const Request& req, Response& res) {
    guarded(res, [&] {
      const auto request = scheduler_hooks::requestFromJson(parseBody(req));
      auto result = service.allocate(request);
      json victims = json::array();
      for (const auto& v : result.victims) victims.push_back(toJson(v));
      sendJson(res,
               {{"allocation", toJson(result.allocation)},
                {"created", result.created},
                {"victims", victims},
                {"warnings", result.warnings}},
               result.created ? 201 : 200);
    });
  });
  r.get(R"(/api/v1/pool/allocations/([^/]+))", [&pool](const Request& req, Response& res) {
    auto a = pool.get(req.matches[1].str());
    if (!a) return sendError(res, 404, "no allocation for job " + req.matches[1].str());
    sendJson(res, toJson(*a));
  });
  r.del(R"(/api/v1/pool/allocations/([^/]+))", Access::kToken,
        [&pool](const Request& req, Response& res) {
          guarded(res, [&] {
            const std::string job = req.matches[1];
            if (!pool.release(job)) return sendError(res, 404, "no allocation for job " + job);
            sendJson(res, {{"released", job}});
          });
        });
}

}  // namespace ibfabric::api
