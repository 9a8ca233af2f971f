// FabricService: the remembered fabric (discovery/fabric_memory.h) — what a crawl lacks is kept
// as missing, restored from the state store at start, forgotten on an operator's request.
#include <spdlog/spdlog.h>

#include <stdexcept>
#include <string>

#include "api/service/fabric_service.h"
#include "discovery/formats.h"

namespace ibfabric::api {
namespace {

using SysClock = std::chrono::system_clock;

telemetry::EventEnd nodeEnd(const Node& n) { return {n.guid, n.description, PortNum{0}}; }

/// node_missing for nodes that turned missing, node_returned for missing nodes seen again.
void appendMemoryEvents(telemetry::EventLog& log, const Topology& before, const Topology& after) {
  for (const Node& n : after.nodes()) {
    const Node* was = before.findNode(n.guid);
    if (!was) continue;
    if (n.missing && !was->missing) {
      log.append(telemetry::EventType::kNodeMissing, nodeEnd(n), std::nullopt,
                 std::string(nodeTypeName(n.type)) +
                     " not seen by the crawl: kept as missing (its links are down)");
    } else if (!n.missing && was->missing) {
      log.append(telemetry::EventType::kNodeReturned, nodeEnd(n), std::nullopt,
                 std::string(nodeTypeName(n.type)) + " seen again");
    }
  }
}

}  // namespace

void FabricService::setRemembered(TopologyPtr remembered, SysClock::time_point seenAt) {
  std::lock_guard lock(topologyEditMu_);
  remembered_ = std::move(remembered);
  modelSeenAt_ = seenAt;
}

TopologyPtr FabricService::remember(const TopologyPtr& before, TopologyPtr crawled,
                                    SysClock::time_point now) {
  const TopologyPtr previous = before ? before : remembered_;
  TopologyPtr next = crawled;
  if (previous) {
    try {
      next = rememberMissing(*previous, modelSeenAt_, crawled, now, options_.remember);
    } catch (const std::exception& e) {  // a model the builder refuses: the crawl alone (`next`)
      spdlog::error("remembering missing hardware failed, serving the crawl alone: {}", e.what());
    }
    if (!options_.expected) appendMemoryEvents(events_, *previous, *next);
    const MissingCounts missing = countMissing(*next);
    if (missing.nodes() + missing.links > 0)
      spdlog::info("fabric model: {} node(s) and {} cable(s) missing (kept, reported as down)",
                   missing.nodes(), missing.links);
  }
  remembered_.reset();
  modelSeenAt_ = now;
  return next;
}

void FabricService::publishEditedTopology(TopologyPtr next) {
  publishChange([&](ServiceState& s) { s.topology = next; });
  {
    std::lock_guard lock(mu_);
    latestTopology_ = std::move(next);
  }
  cv_.notify_all();
}

TopologyPtr FabricService::forget(Guid node, std::optional<PortNum> port) {
  std::lock_guard editLock(topologyEditMu_);
  const TopologyPtr current = state()->topology;
  if (!current) throw std::logic_error("no fabric model yet (the first crawl has not finished)");
  TopologyPtr next = forgetMissing(*current, node, port);  // throws std::invalid_argument
  const Node& n = *current->findNode(node);
  std::string what = port ? "missing cable at port " + toString(*port) + " of " + n.description
                          : "missing " + std::string(nodeTypeName(n.type)) + " " + n.description;
  spdlog::info("forgot the {} (removed on purpose)", what);
  publishEditedTopology(next);
  events_.append(telemetry::EventType::kHardwareForgotten,
                 {n.guid, n.description, port.value_or(PortNum{0})}, std::nullopt,
                 "forgotten: " + what + " (removed on purpose)");
  publishChange([](ServiceState&) {});  // counts the event
  return next;
}

}  // namespace ibfabric::api
