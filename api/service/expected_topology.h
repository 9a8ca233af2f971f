// The expected topology (config `expected_topology: FILE`): the fabric as it is meant to be,
// compared (discovery/topology_compare.h) with every new crawl. The result feeds
// GET /api/v1/topology/compare, the ibfabric_fabric_missing_* and ibfabric_expected_node_present
// metrics, and node_missing / node_returned events.
//
// Pure functions on values (appendPresenceEvents appends to a thread-safe EventLog).
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "discovery/netfile.h"
#include "discovery/topology.h"
#include "discovery/topology_compare.h"
#include "telemetry/event_log.h"

namespace ibfabric::api {

struct ExpectedTopology {
  std::string path;
  NetFabric fabric;
};
using ExpectedTopologyPtr = std::shared_ptr<const ExpectedTopology>;

/// Reads an ibnetdiscover / ibsim net file, or a discovery JSON document ("ibfabric.topology/1",
/// e.g. from `ibfabric discover --format json`). Throws std::runtime_error with one line.
ExpectedTopologyPtr loadExpectedTopology(const std::filesystem::path& path);
/// The same from the file's text; `path` names it in messages and in ExpectedTopology::path.
ExpectedTopologyPtr parseExpectedTopology(std::string_view text, const std::string& path);

/// One node of the expected topology and whether the last crawl has it.
struct ExpectedNodePresence {
  std::string guid;  ///< Planned GUID, else the matched live node's, else "".
  std::string name;  ///< Description (or id) in the expected file.
  std::string type;  ///< "switch", "ca", "router".
  bool present = false;
};

struct TopologyComparison {
  CompareResult result;
  std::vector<ExpectedNodePresence> nodes;  ///< In file order.
  std::size_t missingSwitches = 0, missingCas = 0, missingRouters = 0;
  std::chrono::system_clock::time_point at{};
};
using TopologyComparisonPtr = std::shared_ptr<const TopologyComparison>;

/// Compares (match by description, no link-health findings) and lists node presence.
TopologyComparisonPtr compareWithExpected(const ExpectedTopology& expected, const Topology& live);

/// node_missing for nodes present before (or, first time, for every missing node) and absent
/// now; node_returned for nodes absent before and present now.
void appendPresenceEvents(telemetry::EventLog& log, const TopologyComparison* before,
                          const TopologyComparison& after);

}  // namespace ibfabric::api
