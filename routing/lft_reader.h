// LftReader: reads every switch's LinearForwardingTable through the asynchronous MAD engine, and
// OpenSM's LFT dump file as a second source.
//
// A full read is two batches of LID-routed SMPs to each switch's LID: SwitchInfo (for
// LinearFDBTop), then LFT blocks 0 .. LinearFDBTop/64. A switch that does not answer, answers
// with a MAD error or has no LID gets no table and one line in ForwardingTables::failures; the
// read itself never throws.
//
// Refresh (refresh()): the tables are re-read in full when the topology snapshot changed (the
// SM may have rerouted around a link change), when the previous read had failures, or when a
// cheap probe finds a change: per switch, SwitchInfo (LinearFDBTop) plus one LFT block chosen
// round-robin across calls (2 SMPs per switch), compared with the tables held. A reroute by the
// SM touches many LIDs on most switches, so one block per switch catches it within a probe or
// two; a full re-read also happens every `fullReadEvery` refreshes to bound the age.
//
// Not thread-safe: one reader on one thread (the daemon's sweep thread, which owns the engine).
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include "routing/forwarding.h"
#include "telemetry/clock.h"
#include "telemetry/mad_engine.h"

namespace ibfabric::routing {

struct LftRefreshStats {
  bool fullRead = false;
  std::string reason;  ///< "first read", "topology changed", "probe: <switch>", "age", "unchanged"
  std::uint64_t probeMads = 0;
};

class LftReader {
 public:
  LftReader(mad::MadEngine& engine, const mad::Clock& clock);

  /// Reads every switch of `topology` in full.
  ForwardingTablesPtr read(TopologyPtr topology);

  /// The tables for `topology`: `previous` when still valid (probe found nothing), else a full
  /// read. `previous` may be null. See the class comment.
  ForwardingTablesPtr refresh(TopologyPtr topology, const ForwardingTablesPtr& previous,
                              LftRefreshStats* stats = nullptr);

  int fullReadEvery = 30;

 private:
  mad::MadEngine& engine_;
  const mad::Clock& clock_;
  std::uint64_t probeRound_ = 0;
  int refreshesSinceFull_ = 0;
};

/// Thrown by the dump parser on a file it cannot read or understand; what() names file and line.
class LftDumpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses OpenSM's `opensm-lfts.dump` ("Unicast lids [0-N] of switch Lid L guid 0x... ('d'):"
/// headers, then "0xLID PORT # ..." lines) against `topology` (switches matched by GUID;
/// switches of the file not in the topology are listed in failures). Source
/// "opensm-dump <path>".
ForwardingTablesPtr parseOpensmLftDump(const std::filesystem::path& path, TopologyPtr topology);
ForwardingTablesPtr parseOpensmLftDumpText(std::string_view text, TopologyPtr topology,
                                           const std::string& source = "opensm-dump");

}  // namespace ibfabric::routing
