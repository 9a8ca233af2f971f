#include "api/service/expected_topology.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "discovery/net_topology.h"
#include "discovery/topology_json.h"

namespace ibfabric::api {
namespace {

const char* typeName(NodeType t) {
  switch (t) {
    case NodeType::kSwitch:
      return "switch";
    case NodeType::kRouter:
      return "router";
    case NodeType::kCa:
      break;
  }
  return "ca";
}

}  // namespace

ExpectedTopologyPtr loadExpectedTopology(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("expected_topology: cannot read " + path.string());
  std::ostringstream buf;
  buf << in.rdbuf();
  return parseExpectedTopology(buf.str(), path.string());
}

ExpectedTopologyPtr parseExpectedTopology(std::string_view text, const std::string& path) {
  auto out = std::make_shared<ExpectedTopology>();
  out->path = path;
  try {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && text[first] == '{') {
      out->fabric = netFabricFromTopology(*topologyFromJsonText(text));
    } else {
      out->fabric = parseNetText(text, path);
    }
  } catch (const std::exception& e) {
    throw std::runtime_error("expected_topology: " + path + ": " + e.what());
  }
  if (out->fabric.nodes.empty())
    throw std::runtime_error("expected_topology: " + path + ": no nodes");
  return out;
}

TopologyComparisonPtr compareWithExpected(const ExpectedTopology& expected, const Topology& live) {
  CompareOptions options;
  options.linkHealth = false;
  options.expectedName = expected.path;
  auto out = std::make_shared<TopologyComparison>();
  out->result = compareTopology(expected.fabric, live, options);
  out->at = std::chrono::system_clock::now();
  std::set<std::string> missing;
  for (const auto& f : out->result.findings)
    if (f.kind == CompareKind::kMissingNode && f.plannedA) missing.insert(f.plannedA->id);
  std::map<std::string, Guid> liveByName;
  for (const Node& n : live.nodes()) liveByName.emplace(n.description, n.guid);
  for (const NetNode& n : expected.fabric.nodes) {
    ExpectedNodePresence p;
    p.name = n.name();
    p.type = typeName(n.type);
    p.present = !missing.count(n.id);
    if (n.guid) {
      p.guid = toString(*n.guid);
    } else if (auto it = liveByName.find(p.name); p.present && it != liveByName.end()) {
      p.guid = toString(it->second);
    }
    if (!p.present) {
      if (n.type == NodeType::kSwitch)
        ++out->missingSwitches;
      else if (n.type == NodeType::kRouter)
        ++out->missingRouters;
      else
        ++out->missingCas;
    }
    out->nodes.push_back(std::move(p));
  }
  return out;
}

void appendPresenceEvents(telemetry::EventLog& log, const TopologyComparison* before,
                          const TopologyComparison& after) {
  std::map<std::string, bool> was;
  if (before)
    for (const auto& n : before->nodes) was[n.name + "\n" + n.type] = n.present;
  for (const auto& n : after.nodes) {
    auto it = was.find(n.name + "\n" + n.type);
    const bool wasPresent = it == was.end() ? true : it->second;
    if (wasPresent == n.present) continue;
    telemetry::EventEnd end{parseGuid(n.guid).value_or(Guid{}), n.name, PortNum{}};
    if (n.present) {
      log.append(telemetry::EventType::kNodeReturned, end, std::nullopt,
                 "expected " + n.type + " is back in the crawl");
    } else {
      log.append(telemetry::EventType::kNodeMissing, end, std::nullopt,
                 "expected " + n.type + " is missing from the crawl");
    }
  }
}

}  // namespace ibfabric::api
