#include "api/http/pool_endpoints.h"

#include <httplib.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "api/http/http_json.h"
#include "api/http/placement_endpoint.h"
#include "scheduler_hooks/pool_placer.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;
using scheduler_hooks::Allocation;
using scheduler_hooks::AllocationState;
using scheduler_hooks::JobClass;
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

/// The placer the daemon gives the pool: the placement engine on the live routes and link load
/// (api/http/placement_endpoint.h). Until the first forwarding tables are read (or when the counter
/// source has none), the leaf-packing placer answers instead, so the pool never waits on routing.
routing::Placer makeDaemonPlacer(FabricService& service) {
  auto engine = std::make_shared<PlacementService>(service);
  auto fallback =
      scheduler_hooks::makeLeafPackingPlacer([&service] { return service.state()->topology; });
  return [engine, fallback](const routing::PlacementRequest& request) {
    try {
      return engine->place(request);
    } catch (const routing::PlacementError& e) {
      if (e.kind() != routing::PlacementError::Kind::kNotReady) throw;
      spdlog::debug("pool: placement engine not ready ({}); leaf packing instead", e.what());
      auto answer = fallback(request);
      answer.warnings.push_back(std::string("placed by leaf packing: ") + e.what());
      return answer;
    }
  };
}

}  // namespace

PoolService::PoolService(FabricService& service, const PoolConfig& config, routing::Placer placer,
                         std::function<std::chrono::system_clock::time_point()> clock)
    : service_(service), registry_(std::make_shared<prometheus::Registry>()) {
  scheduler_hooks::PoolOptions o;
  o.placer = placer ? std::move(placer) : makeDaemonPlacer(service);
  o.clock = std::move(clock);
  o.journalDir = config.journal;
  o.compactEvery = config.compactEvery;
  o.quotas = config.quotas;
  o.onEvent = [&service](const scheduler_hooks::PoolEvent& e) {
    service.events().append(telemetry::EventType::kPoolAllocationDegraded,
                            telemetry::EventEnd{Guid(0), e.host, PortNum(0)}, std::nullopt,
                            e.message);
  };
  pool_ = std::make_unique<scheduler_hooks::Pool>(std::move(o));
  if (!config.inventory.empty()) {
    auto hosts = scheduler_hooks::loadInventoryFile(config.inventory);
    int added = 0;
    for (auto& h : hosts) {
      try {
        added += pool_->putHost(std::move(h)) ? 1 : 0;
      } catch (const PoolError& e) {
        spdlog::warn("pool: inventory: {}", e.what());
      }
    }
    spdlog::info("pool: inventory {}: {} hosts ({} new)", config.inventory, hosts.size(), added);
  }
  duration_ =
      &prometheus::BuildHistogram()
           .Name("ibfabric_pool_allocation_duration_seconds")
           .Help("Time to decide and journal one allocation request (incl. preemption)")
           .Register(*registry_)
           .Add({}, prometheus::Histogram::BucketBoundaries{0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                            0.025, 0.05, 0.1, 0.25, 0.5, 1.0});
}

PoolService::~PoolService() { stop(); }

void PoolService::start() {
  stop_ = false;
  follower_ = std::thread([this] { follow(); });
}

void PoolService::stop() {
  stop_ = true;
  if (follower_.joinable()) follower_.join();
}

void PoolService::follow() {
  TopologyPtr seen;
  std::uint64_t last = 0;
  while (!stop_) {
    auto state = service_.state();
    if (state->topology && state->topology != seen) {
      seen = state->topology;
      pool_->setTopology(seen);
    }
    telemetry::EventQuery q;
    q.sinceId = last;
    for (const auto& e : service_.events().query(q)) {
      last = e.id;
      if (e.type != telemetry::EventType::kPoolAllocationDegraded) pool_->observeEvent(e);
    }
    service_.events().waitForNewer(last, std::chrono::milliseconds(200));
  }
}

void PoolService::attach(RestServer& server) {
  server.addRoutes([this](httplib::Server& svr, const RestServer::Authorizer& authorize) {
    routes(svr, authorize);
  });
  server.addMetrics([this] { return renderMetrics(); });
}

void PoolService::routes(httplib::Server& svr, const RestServer::Authorizer& authorize) {
  scheduler_hooks::Pool& pool = *pool_;
  svr.Get("/api/v1/pool", [&pool](const Request&, Response& res) {
    guarded(res, [&] { sendJson(res, usageJson(pool.usage())); });
  });
  svr.Get("/api/v1/pool/hosts", [&pool](const Request&, Response& res) {
    json out = json::array();
    for (const auto& v : pool.hosts()) out.push_back(hostViewJson(v));
    sendJson(res, {{"hosts", out}});
  });
  svr.Get(R"(/api/v1/pool/hosts/([^/]+))", [&pool](const Request& req, Response& res) {
    auto v = pool.host(req.matches[1].str());
    if (!v) return sendError(res, 404, "no pool host named " + req.matches[1].str());
    sendJson(res, hostViewJson(*v));
  });
  svr.Put(R"(/api/v1/pool/hosts/([^/]+))", [&pool, authorize](const Request& req, Response& res) {
    if (!authorize(req, res)) return;
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
  svr.Get("/api/v1/pool/allocations", [&pool](const Request&, Response& res) {
    json out = json::array();
    for (const auto& a : pool.list()) out.push_back(toJson(a));
    sendJson(res, {{"allocations", out}});
  });
  svr.Post("/api/v1/pool/allocations", [this, &pool, authorize](const Request& req, Response& res) {
    if (!authorize(req, res)) return;
    guarded(res, [&] {
      const auto request = scheduler_hooks::requestFromJson(parseBody(req));
      const auto t0 = std::chrono::steady_clock::now();
      auto r = pool.allocate(request);
      duration_->Observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      json victims = json::array();
      for (const auto& v : r.victims) victims.push_back(toJson(v));
      sendJson(res,
               {{"allocation", toJson(r.allocation)},
                {"created", r.created},
                {"victims", victims},
                {"warnings", r.warnings}},
               r.created ? 201 : 200);
    });
  });
  svr.Get(R"(/api/v1/pool/allocations/([^/]+))", [&pool](const Request& req, Response& res) {
    auto a = pool.get(req.matches[1].str());
    if (!a) return sendError(res, 404, "no allocation for job " + req.matches[1].str());
    sendJson(res, toJson(*a));
  });
  svr.Delete(R"(/api/v1/pool/allocations/([^/]+))",
             [&pool, authorize](const Request& req, Response& res) {
               if (!authorize(req, res)) return;
               guarded(res, [&] {
                 const std::string job = req.matches[1];
                 if (!pool.release(job)) return sendError(res, 404, "no allocation for job " + job);
                 sendJson(res, {{"released", job}});
               });
             });
}

std::string PoolService::renderMetrics() const {
  prometheus::Registry reg;
  auto& gpus = prometheus::BuildGauge()
                   .Name("ibfabric_pool_gpus")
                   .Help(
                       "GPUs of the pool by state (allocated, degraded, free, unavailable) and "
                       "class (MIG instances count as their share of a GPU)")
                   .Register(reg);
  auto& allocs = prometheus::BuildGauge()
                     .Name("ibfabric_pool_allocations")
                     .Help("Allocations of the pool by class and state (active, degraded)")
                     .Register(reg);
  auto& preempt = prometheus::BuildCounter()
                      .Name("ibfabric_pool_preemptions_total")
                      .Help("Allocations preempted by higher-priority requests since start")
                      .Register(reg);
  const auto usage = pool_->usage();
  std::map<std::pair<std::string, std::string>, double> g;  // (state, class)
  std::map<std::pair<std::string, std::string>, double> a;  // (class, state)
  for (const char* c : {"training", "inference"})
    for (const char* s : {"active", "degraded"}) {
      a[{c, s}] = 0;
      g[{s == std::string("active") ? "allocated" : "degraded", c}] = 0;
    }
  for (const auto& al : pool_->list()) {
    const std::string c(toString(al.request.jobClass)), s(toString(al.state));
    a[{c, s}] += 1;
    g[{al.state == AllocationState::kActive ? "allocated" : "degraded", c}] += al.gpuEquivalents;
  }
  g[{"free", "none"}] = std::max(0.0, usage.usableGpus - usage.usedGpus);
  g[{"unavailable", "none"}] = usage.totalGpus - usage.usableGpus;
  for (const auto& [k, v] : g) gpus.Add({{"state", k.first}, {"class", k.second}}).Set(v);
  for (const auto& [k, v] : a) allocs.Add({{"class", k.first}, {"state", k.second}}).Set(v);
  preempt.Add({}).Increment(static_cast<double>(usage.preemptions));
  prometheus::TextSerializer ser;
  return ser.Serialize(reg.Collect()) + ser.Serialize(registry_->Collect());
}

}  // namespace ibfabric::api
