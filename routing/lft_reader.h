// LftReader: reads every switch's LinearForwardingTable through the asynchronous MAD engine, and
// OpenSM's LFT dump file as a second source.
//
// Reading a switch: SwitchInfo (for LinearFDBTop), then LFT blocks 0 .. LinearFDBTop/64, as
// LID-routed SMPs to the switch's LID, batched over all switches being read. A switch that has
// no LID or does not answer (timeout: e.g. its LID path crosses a dead cable the SM has not
// routed around yet) is read again with directed-route SMPs along the shortest path of up
// cables from our own port (routing/directed_paths.h; needs LftReaderOptions::localPort). A
// switch that answers with a MAD error, or that no route reaches, gets no fresh table: one line
// in ForwardingTables::failures, never an exception and never a partial table.
//
// The reader remembers, per switch GUID, the last good table, whether it came by directed
// route, and the failure streak. Every snapshot it returns holds the last good table of every
// switch (a switch whose latest read failed keeps its older table, marked stale) and a
// SwitchTableStatus per switch (ok / stale / missing, since when, next retry).
//
// refresh(): a full read of every switch on the first call, when the topology changed shape
// (switches, cables, port states or LIDs differ: the SM will reroute), or every `fullReadEvery`
// refreshes. Otherwise incremental: a cheap probe of every switch whose table is fresh
// (SwitchInfo plus one LFT block chosen round-robin across calls: 2 SMPs, by directed route for
// switches read that way); only the switches whose probe differs or goes unanswered, switches
// new in the topology, and failing switches whose backoff has expired are re-read. A failing
// switch is retried after retryBackoff, doubled per consecutive failure up to maxRetryBackoff.
// When nothing was re-read and the topology snapshot is the same, `previous` itself is returned.
// The daemon forces a full read after an SM routing pass by passing no `previous`.
//
// Not thread-safe: one reader on one thread (the daemon's sweep thread, which owns the engine).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "routing/forwarding.h"
#include "telemetry/clock.h"
#include "telemetry/mad_engine.h"
#include "telemetry/smp_attributes.h"

namespace ibfabric::routing {

struct LftReaderOptions {
  /// Our own port's GUID, where directed routes start. Zero: no directed-route fallback.
  Guid localPort;
  /// A failing switch is retried after this, doubled per consecutive failure, at most max.
  mad::Clock::duration retryBackoff = std::chrono::seconds(10);
  mad::Clock::duration maxRetryBackoff = std::chrono::minutes(5);
  /// Wall clock for the times in SwitchTableStatus; default std::chrono::system_clock::now.
  std::function<std::chrono::system_clock::time_point()> wallClock;
};

struct LftRefreshStats {
  bool fullRead = false;
  /// "first read", "topology changed", "age", "unchanged", or why switches were re-read
  /// ("probe: <switch> LFT block 3 changed", "retry: <switch>", ...; "(+N more)").
  std::string reason;
  std::uint64_t probeMads = 0;
  std::uint64_t readMads = 0;         ///< SMPs of the (re-)reads, LID-routed and directed.
  std::size_t switchesRead = 0;       ///< Switches (re-)read.
  std::size_t readByDirectRoute = 0;  ///< Of those, read by directed route.
  std::size_t readFailed = 0;         ///< Of those, still without a fresh table.
  std::size_t backingOff = 0;         ///< Failing switches not retried yet (backoff).
};

class LftReader {
 public:
  LftReader(mad::MadEngine& engine, const mad::Clock& clock, LftReaderOptions options = {});

  /// Reads every switch of `topology` in full (failing switches keep a remembered table, stale).
  ForwardingTablesPtr read(TopologyPtr topology, LftRefreshStats* stats = nullptr);

  /// The tables for `topology`, incrementally from `previous` (may be null: a full read). See
  /// the class comment. Switches are read kSliceSwitches at a time; `between` (may be empty) is
  /// called between two slices, where the engine is free: a re-read of 900 switches takes tens
  /// of seconds on a slow plane, and the daemon's probes of suspected ports must not wait for it.
  ForwardingTablesPtr refresh(TopologyPtr topology, const ForwardingTablesPtr& previous,
                              LftRefreshStats* stats = nullptr,
                              const std::function<void()>& between = {});

  /// Switches read per slice (SwitchInfo, then their blocks: ~180 SMPs a switch at 11k LIDs).
  static constexpr std::size_t kSliceSwitches = 32;

  int fullReadEvery = 30;

  /// Directed routes from our port (LftReaderOptions::localPort) to every switch of `topology`
  /// (routing/directed_paths.h), computed once per snapshot; empty without a local port. Shared:
  /// a probe run between two slices of a read may ask for another snapshot's paths while the
  /// read still holds these.
  using DirectedPaths = std::vector<std::optional<mad::DirectedPath>>;
  std::shared_ptr<const DirectedPaths> pathsFor(const TopologyPtr& topology);

 private:
  struct Memory {
    std::optional<SwitchTable> table;
    bool directRoute = false;
    std::chrono::system_clock::time_point readAt{};
    int failures = 0;
    std::chrono::system_clock::time_point failingSince{};
    mad::Clock::time_point retryAt{};
    std::string lastError;
  };
  struct Outcome {
    std::optional<SwitchTable> table;
    bool directRoute = false;
    bool answered = false;  ///< The switch answered (possibly with a MAD error).
    std::string error;
  };

  std::chrono::system_clock::time_point wallNow() const;
  /// Reads `switches`: LID-routed, then by directed route for those that did not answer.
  std::vector<Outcome> readSwitches(const TopologyPtr& topology,
                                    const std::vector<NodeIndex>& switches, LftRefreshStats& st);
  /// One pass (SwitchInfo, then blocks) over `which` (indices into switches/out).
  void readPass(const Topology& topology, const std::vector<NodeIndex>& switches,
                const std::vector<std::size_t>& which,
                const std::vector<std::optional<mad::DirectedPath>>* paths,
                std::vector<Outcome>& out, LftRefreshStats& st);
  void record(const Node& node, Outcome& outcome);
  void seed(const ForwardingTables& previous);
  ForwardingTablesPtr fullRead(TopologyPtr topology, std::string reason, LftRefreshStats& st);
  ForwardingTablesPtr snapshot(TopologyPtr topology, bool full, std::chrono::nanoseconds took,
                               std::uint64_t mads);
  mad::Clock::duration backoff(int failures) const;

  mad::MadEngine& engine_;
  const mad::Clock& clock_;
  LftReaderOptions options_;
  std::uint64_t probeRound_ = 0;
  int refreshesSinceFull_ = 0;
  std::unordered_map<Guid, Memory> memory_;
  ForwardingTablesPtr last_;
  std::chrono::nanoseconds lastFullReadTime_{0};
  std::uint64_t lastFullReadMads_ = 0;
  const std::function<void()>* between_ = nullptr;  ///< During refresh() only.
  TopologyPtr pathsTopology_;
  std::shared_ptr<const DirectedPaths> paths_ = std::make_shared<const DirectedPaths>();
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
