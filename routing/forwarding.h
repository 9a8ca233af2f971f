// Forwarding tables: every switch's LinearForwardingTable (destination LID -> egress port) as
// the subnet manager programmed it, in one immutable snapshot.
//
// Sources: the switches themselves (SwitchInfo.LinearFDBTop, then LFT blocks of 64 LIDs through
// the asynchronous MAD engine: see lft_reader.h), or OpenSM's dump file (opensm-lfts.dump) when
// the daemon runs beside OpenSM. Published as ForwardingTablesPtr; thread-safe to read.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "discovery/topology.h"
#include "discovery/types.h"

namespace ibfabric::routing {

/// One switch's LFT. `ports[lid]` is the egress port for destination `lid`; kNoPort = none.
struct SwitchTable {
  static constexpr std::uint8_t kNoPort = 0xFF;
  Guid switchGuid;
  Lid switchLid;
  std::uint16_t linearFdbTop = 0;   ///< highest LID with an entry
  std::vector<std::uint8_t> ports;  ///< size linearFdbTop + 1
  std::optional<PortNum> egress(Lid dst) const {
    if (dst.value() >= ports.size() || ports[dst.value()] == kNoPort) return std::nullopt;
    return PortNum(ports[dst.value()]);
  }
};

/// How fresh the table a snapshot holds for one switch is.
enum class TableState : std::uint8_t {
  kOk,       ///< Read (or confirmed by a probe) in the latest refresh.
  kStale,    ///< The latest read failed; an older good table is kept.
  kMissing,  ///< Never read successfully: no table.
};
const char* toString(TableState state);

/// Per-switch read status, kept by LftReader (empty for sources that do not track it).
struct SwitchTableStatus {
  NodeIndex node = kNoNode;
  TableState state = TableState::kOk;
  /// The table held was read with directed-route SMPs (LID-routed reads failed).
  bool directRoute = false;
  /// When the table held was read (epoch 0: none).
  std::chrono::system_clock::time_point tableReadAt{};
  /// Since when reads of this switch fail (epoch 0: they do not).
  std::chrono::system_clock::time_point failingSince{};
  int consecutiveFailures = 0;
  /// When a failing switch is tried again (epoch 0: not failing).
  std::chrono::system_clock::time_point nextRetry{};
  std::string lastError;  ///< The latest failure, empty when not failing.
};

class ForwardingTables {
 public:
  ForwardingTables() = default;
  /// `byNode[i]` is the table of topology node i (empty optional for CAs and unread switches).
  ForwardingTables(TopologyPtr topology, std::vector<std::optional<SwitchTable>> byNode,
                   std::string source)
      : topology_(std::move(topology)), byNode_(std::move(byNode)), source_(std::move(source)) {}

  /// The topology snapshot the tables were read against (node indices refer to it).
  const TopologyPtr& topology() const { return topology_; }
  const SwitchTable* table(NodeIndex sw) const {
    return sw < byNode_.size() && byNode_[sw] ? &*byNode_[sw] : nullptr;
  }
  std::size_t switchesWithTables() const {
    std::size_t n = 0;
    for (const auto& t : byNode_) n += t.has_value();
    return n;
  }
  /// "mad", "opensm-dump <path>", "memory"
  const std::string& source() const { return source_; }

  // Read statistics (set by the reader).
  std::chrono::nanoseconds readTime{0};
  std::uint64_t madsUsed = 0;
  /// Switches whose table could not be read (by description, with the reason).
  std::vector<std::string> failures;
  /// One entry per switch of the topology, in node order (LftReader); empty otherwise.
  std::vector<SwitchTableStatus> switchStatus;
  /// The refresh that produced this snapshot (LftReader::refresh): its duration and MADs, and
  /// whether it was a full read (readTime and madsUsed are those of the last full read).
  std::chrono::nanoseconds refreshTime{0};
  std::uint64_t refreshMads = 0;
  bool fullRead = true;

  /// Switches in `state` according to switchStatus.
  std::size_t switchesIn(TableState state) const {
    std::size_t n = 0;
    for (const auto& s : switchStatus) n += s.state == state;
    return n;
  }
  /// Switches whose table held was read by directed route.
  std::size_t switchesReadByDirectRoute() const {
    std::size_t n = 0;
    for (const auto& s : switchStatus) n += s.state != TableState::kMissing && s.directRoute;
    return n;
  }

 private:
  TopologyPtr topology_;
  std::vector<std::optional<SwitchTable>> byNode_;
  std::string source_;
};
using ForwardingTablesPtr = std::shared_ptr<const ForwardingTables>;

/// The same tables re-indexed onto another topology snapshot (matched by switch GUID; switches
/// not in `tables` get none). Used when the fabric was re-crawled but the tables were not re-read
/// yet: the routes as programmed, judged against the cabling as it is now.
ForwardingTablesPtr rebaseTables(const ForwardingTables& tables, TopologyPtr topology);

/// Switches whose tables differ between `a` and `b` (by GUID; a switch present in only one of
/// them counts), at most `limit` descriptions. Empty when equal.
std::vector<std::string> tableDifferences(const ForwardingTables& a, const ForwardingTables& b,
                                          std::size_t limit = 10);

}  // namespace ibfabric::routing
