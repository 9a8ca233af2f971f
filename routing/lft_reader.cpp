#include "routing/lft_reader.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include "discovery/topology_delta.h"
#include "routing/directed_paths.h"
#include "telemetry/smp_attributes.h"

namespace ibfabric::routing {
namespace {

using mad::MadRequest;
using mad::MadResult;

std::string nodeName(const Node& n) {
  return "\"" + n.description + "\" (" + toString(n.guid) + ")";
}

std::string failureText(std::string_view what, const MadResult& r) {
  char buf[200];
  if (r.ok()) {
    std::snprintf(buf, sizeof buf, "%.*s: MAD status 0x%04x", static_cast<int>(what.size()),
                  what.data(), mad::madStatus(r.reply));
  } else {
    std::snprintf(buf, sizeof buf, "%.*s: %s after %d send%s", static_cast<int>(what.size()),
                  what.data(), mad::toString(r.outcome), r.attempts, r.attempts == 1 ? "" : "s");
  }
  return buf;
}

bool good(const MadResult& r) { return r.ok() && mad::madStatus(r.reply) == 0; }

std::uint32_t blockCount(std::uint16_t linearFdbTop) {
  return linearFdbTop / mad::LinearForwardingBlock::kLidsPerBlock + 1u;
}

/// Switches, cables, port states or LIDs differ: the SM reroutes, so everything is re-read.
bool shapeChanged(const TopologyPtr& before, const TopologyPtr& after) {
  const TopologyDelta d(before, after);
  return !d.nodesAdded().empty() || !d.nodesRemoved().empty() || !d.linksAdded().empty() ||
         !d.linksRemoved().empty() || !d.linksChanged().empty() || !d.lidsChanged().empty();
}

std::string timeText(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

LftReader::LftReader(mad::MadEngine& engine, const mad::Clock& clock, LftReaderOptions options)
    : engine_(engine), clock_(clock), options_(std::move(options)) {}

std::chrono::system_clock::time_point LftReader::wallNow() const {
  return options_.wallClock ? options_.wallClock() : std::chrono::system_clock::now();
}

mad::Clock::duration LftReader::backoff(int failures) const {
  auto d = options_.retryBackoff;
  for (int i = 1; i < failures && d < options_.maxRetryBackoff; ++i) d *= 2;
  return std::min(d, options_.maxRetryBackoff);
}

std::shared_ptr<const LftReader::DirectedPaths> LftReader::pathsFor(const TopologyPtr& topology) {
  if (pathsTopology_ != topology) {
    paths_ = std::make_shared<const DirectedPaths>(
        options_.localPort.value() != 0 ? directedPaths(*topology, options_.localPort)
                                        : DirectedPaths{});
    pathsTopology_ = topology;
  }
  return paths_;
}

void LftReader::readPass(const Topology& topology, const std::vector<NodeIndex>& switches,
                         const std::vector<std::size_t>& which,
                         const std::vector<std::optional<mad::DirectedPath>>* paths,
                         std::vector<Outcome>& out, LftRefreshStats& st) {
  if (which.empty()) return;
  auto request = [&](std::size_t i, const mad::MadBuffer& lidRouted) {
    const Node& n = topology.node(switches[i]);
    if (!paths) return MadRequest{mad::smpAddress(n.lid()), lidRouted, {}};
    return MadRequest{
        mad::directedRouteAddress(), mad::toDirectedRoute(lidRouted, *(*paths)[n.index]), {}};
  };
  const std::string how =
      paths ? "by directed route " : std::string();  // prefix of this pass's error texts
  // 1. SwitchInfo.
  std::vector<MadRequest> requests;
  for (std::size_t i : which) requests.push_back(request(i, mad::buildSwitchInfoGet()));
  auto infos = engine_.run(std::move(requests));
  for (const auto& r : infos) st.readMads += static_cast<std::uint64_t>(r.attempts);

  // 2. LFT blocks of every switch that answered.
  struct BlockRef {
    std::size_t i;
    std::uint32_t block;
  };
  std::vector<BlockRef> refs;
  std::vector<std::optional<SwitchTable>> tables(switches.size());
  std::vector<std::string> errors(switches.size());
  std::vector<bool> answered(switches.size(), false);
  requests.clear();
  for (std::size_t k = 0; k < which.size(); ++k) {
    const std::size_t i = which[k];
    const Node& n = topology.node(switches[i]);
    answered[i] = infos[k].ok();
    if (!good(infos[k])) {
      errors[i] = how + failureText("SwitchInfo", infos[k]);
      continue;
    }
    const auto info = mad::decodeSwitchInfo(infos[k].reply);
    SwitchTable t;
    t.switchGuid = n.guid;
    t.switchLid = n.lid();
    t.linearFdbTop = info.linearFdbTop;
    t.ports.assign(static_cast<std::size_t>(info.linearFdbTop) + 1, SwitchTable::kNoPort);
    tables[i] = std::move(t);
    for (std::uint32_t b = 0; b < blockCount(info.linearFdbTop); ++b) {
      refs.push_back({i, b});
      requests.push_back(request(i, mad::buildLinearForwardingTableGet(b)));
    }
  }
  auto blocks = engine_.run(std::move(requests));
  for (std::size_t k = 0; k < refs.size(); ++k) {
    const auto& r = blocks[k];
    st.readMads += static_cast<std::uint64_t>(r.attempts);
    const std::size_t i = refs[k].i;
    if (!errors[i].empty()) continue;
    if (!good(r)) {
      answered[i] = r.ok();
      errors[i] = how + failureText("LFT block " + std::to_string(refs[k].block), r);
      continue;
    }
    const auto block = mad::decodeLinearForwardingBlock(r.reply);
    auto& ports = tables[i]->ports;
    const std::size_t base = std::size_t{refs[k].block} * mad::LinearForwardingBlock::kLidsPerBlock;
    for (std::size_t e = 0; e < block.ports.size() && base + e < ports.size(); ++e) {
      ports[base + e] = block.ports[e];
    }
  }
  for (std::size_t i : which) {
    Outcome& o = out[i];
    if (errors[i].empty()) {
      o.table = std::move(tables[i]);  // never a partial table: only when every block came
      o.directRoute = paths != nullptr;
      o.answered = true;
      o.error.clear();
    } else {
      o.answered = answered[i];
      o.error = o.error.empty() ? errors[i] : o.error + "; " + errors[i];
    }
  }
}

std::vector<LftReader::Outcome> LftReader::readSwitches(const TopologyPtr& topology,
                                                        const std::vector<NodeIndex>& switches,
                                                        LftRefreshStats& st) {
  std::vector<Outcome> out(switches.size());
  st.switchesRead += switches.size();
  std::vector<std::size_t> which;
  for (std::size_t i = 0; i < switches.size(); ++i) {
    if (topology->node(switches[i]).lid().value() == 0) {
      out[i].error = "has no LID";
    } else {
      which.push_back(i);
    }
  }
  // In slices of kSliceSwitches, with the caller's work between them (LftReader::refresh).
  for (std::size_t from = 0; from < which.size(); from += kSliceSwitches) {
    if (from > 0 && between_) (*between_)();
    const auto to = std::min(which.size(), from + kSliceSwitches);
    readPass(*topology, switches,
             std::vector<std::size_t>(which.begin() + static_cast<std::ptrdiff_t>(from),
                                      which.begin() + static_cast<std::ptrdiff_t>(to)),
             nullptr, out, st);
  }

  // Directed-route fallback for the switches LID routing did not reach.
  which.clear();
  const bool fallback = options_.localPort.value() != 0;
  const auto held = fallback ? pathsFor(topology) : paths_;
  const DirectedPaths& paths = *held;
  for (std::size_t i = 0; i < switches.size(); ++i) {
    Outcome& o = out[i];
    if (o.table || o.answered || !fallback) continue;  // a MAD error is an answer: no fallback
    if (paths.empty()) {
      o.error += "; no directed route (our port " + toString(options_.localPort) +
                 " is not in the topology)";
    } else if (!paths[switches[i]]) {
      o.error += "; no directed route (no path of up cables from our port)";
    } else {
      which.push_back(i);
    }
  }
  readPass(*topology, switches, which, fallback ? &paths : nullptr, out, st);
  for (const Outcome& o : out) {
    st.readByDirectRoute += o.table && o.directRoute;
    st.readFailed += !o.table;
  }
  if (!which.empty()) {
    spdlog::debug(
        "LFT read: {} of {} switch(es) unreachable by LID tried by directed route, {} read",
        which.size(), switches.size(), st.readByDirectRoute);
  }
  return out;
}

void LftReader::record(const Node& n, Outcome& o) {
  Memory& m = memory_[n.guid];
  if (o.table) {
    m.table = std::move(o.table);
    m.directRoute = o.directRoute;
    m.readAt = wallNow();
    m.failures = 0;
    m.failingSince = {};
    m.retryAt = {};
    m.lastError.clear();
    return;
  }
  if (m.failures == 0) m.failingSince = wallNow();
  ++m.failures;
  m.retryAt = clock_.now() + backoff(m.failures);
  m.lastError = o.error;
}

void LftReader::seed(const ForwardingTables& previous) {
  // Tables that did not come from this reader (another reader's, or a restarted source): taken
  // as good now; their switches without a table are due for a read.
  memory_.clear();
  const auto now = wallNow();
  for (const Node& n : previous.topology()->nodes()) {
    if (!n.isSwitch()) continue;
    Memory& m = memory_[n.guid];
    if (const SwitchTable* t = previous.table(n.index)) {
      m.table = *t;
      m.readAt = now;
    } else {
      m.failures = 1;
      m.failingSince = now;
      m.retryAt = clock_.now();
      m.lastError = "no table in the tables given";
    }
  }
}

ForwardingTablesPtr LftReader::snapshot(TopologyPtr topology, bool full,
                                        std::chrono::nanoseconds took, std::uint64_t mads) {
  std::vector<std::optional<SwitchTable>> byNode(topology->nodes().size());
  std::vector<SwitchTableStatus> status;
  std::vector<std::string> failures;
  const auto wall = wallNow();
  const auto now = clock_.now();
  for (const Node& n : topology->nodes()) {
    if (!n.isSwitch() || n.missing) continue;  // a missing switch has no table to read
    SwitchTableStatus s;
    s.node = n.index;
    auto it = memory_.find(n.guid);
    if (it == memory_.end()) {
      s.state = TableState::kMissing;
      s.lastError = "not read yet";
      failures.push_back(nodeName(n) + " not read yet");
      status.push_back(std::move(s));
      continue;
    }
    const Memory& m = it->second;
    if (m.table) byNode[n.index] = *m.table;
    s.state =
        !m.table ? TableState::kMissing : (m.failures > 0 ? TableState::kStale : TableState::kOk);
    s.directRoute = m.directRoute;
    s.tableReadAt = m.table ? m.readAt : std::chrono::system_clock::time_point{};
    s.failingSince = m.failingSince;
    s.consecutiveFailures = m.failures;
    s.lastError = m.lastError;
    if (m.failures > 0) {
      s.nextRetry = wall + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                               std::max(m.retryAt - now, mad::Clock::duration::zero()));
      std::string line = nodeName(n) + " " + m.lastError;
      if (m.table) line += " (keeping its table read at " + timeText(m.readAt) + ")";
      failures.push_back(std::move(line));
    }
    status.push_back(std::move(s));
  }
  auto out = std::make_shared<ForwardingTables>(std::move(topology), std::move(byNode), "mad");
  if (full) {
    lastFullReadTime_ = took;
    lastFullReadMads_ = mads;
  }
  out->readTime = lastFullReadTime_;
  out->madsUsed = lastFullReadMads_;
  out->refreshTime = took;
  out->refreshMads = mads;
  out->fullRead = full;
  out->failures = std::move(failures);
  out->switchStatus = std::move(status);
  if (!out->failures.empty()) {
    spdlog::debug("LFT read: {} switch(es) without a fresh table, first: {}", out->failures.size(),
                  out->failures.front());
  }
  last_ = out;
  return out;
}

ForwardingTablesPtr LftReader::fullRead(TopologyPtr topology, std::string reason,
                                        LftRefreshStats& st) {
  const auto start = clock_.now();
  st.fullRead = true;
  st.reason = std::move(reason);
  refreshesSinceFull_ = 0;
  std::vector<NodeIndex> switches;
  for (const Node& n : topology->nodes()) {
    if (n.isSwitch() && !n.missing) switches.push_back(n.index);
  }
  auto outcomes = readSwitches(topology, switches, st);
  // Forget switches that left the fabric.
  std::unordered_map<Guid, Memory> kept;
  for (std::size_t i = 0; i < switches.size(); ++i) {
    const Node& n = topology->node(switches[i]);
    record(n, outcomes[i]);
    kept[n.guid] = std::move(memory_[n.guid]);
  }
  memory_ = std::move(kept);
  const auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(clock_.now() - start);
  return snapshot(std::move(topology), true, took, st.readMads);
}

ForwardingTablesPtr LftReader::read(TopologyPtr topology, LftRefreshStats* stats) {
  LftRefreshStats local;
  LftRefreshStats& st = stats ? *stats : local;
  st = {};
  return fullRead(std::move(topology), "full read", st);
}

ForwardingTablesPtr LftReader::refresh(TopologyPtr topology, const ForwardingTablesPtr& previous,
                                       LftRefreshStats* stats,
                                       const std::function<void()>& between) {
  between_ = between ? &between : nullptr;
  struct Reset {
    const std::function<void()>*& hook;
    ~Reset() { hook = nullptr; }
  } reset{between_};
  LftRefreshStats local;
  LftRefreshStats& st = stats ? *stats : local;
  st = {};
  if (!previous || !previous->topology()) return fullRead(std::move(topology), "first read", st);
  if (previous != last_) seed(*previous);
  if (previous->topology() != topology && shapeChanged(previous->topology(), topology)) {
    return fullRead(std::move(topology), "topology changed", st);
  }
  if (++refreshesSinceFull_ >= fullReadEvery) return fullRead(std::move(topology), "age", st);

  const auto start = clock_.now();
  std::vector<NodeIndex> reread;
  std::vector<std::string> reasons;
  auto rereadFor = [&](const Node& n, std::string why) {
    reread.push_back(n.index);
    reasons.push_back(std::move(why));
  };

  // Probe every switch holding a fresh table: SwitchInfo + one round-robin block (2 SMPs), the
  // way its table was last read.
  struct ProbeRef {
    NodeIndex sw;
    std::uint32_t block;
  };
  std::vector<ProbeRef> refs;
  std::vector<MadRequest> requests;
  const std::uint64_t round = probeRound_++;
  const bool fallback = options_.localPort.value() != 0;
  const auto held = fallback ? pathsFor(topology) : paths_;
  const DirectedPaths& paths = *held;
  for (const Node& n : topology->nodes()) {
    if (!n.isSwitch() || n.missing) continue;
    auto it = memory_.find(n.guid);
    if (it == memory_.end()) {
      rereadFor(n, "new switch " + nodeName(n));
      continue;
    }
    const Memory& m = it->second;
    if (m.failures > 0 || !m.table) {
      if (clock_.now() >= m.retryAt) {
        rereadFor(n, "retry " + nodeName(n));
      } else {
        ++st.backingOff;
      }
      continue;
    }
    const bool direct = m.directRoute && !paths.empty() && paths[n.index];
    if (!direct && n.lid().value() == 0) {
      rereadFor(n, "probe: " + nodeName(n) + " has no LID");
      continue;
    }
    const std::uint32_t block =
        static_cast<std::uint32_t>((round + n.index) % blockCount(m.table->linearFdbTop));
    refs.push_back({n.index, block});
    for (const auto& smp : {mad::buildSwitchInfoGet(), mad::buildLinearForwardingTableGet(block)}) {
      requests.push_back(direct ? MadRequest{mad::directedRouteAddress(),
                                             mad::toDirectedRoute(smp, *paths[n.index]),
                                             {}}
                                : MadRequest{mad::smpAddress(n.lid()), smp, {}});
    }
  }
  auto results = engine_.run(std::move(requests));
  for (const auto& r : results) st.probeMads += static_cast<std::uint64_t>(r.attempts);
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const Node& n = topology->node(refs[i].sw);
    const SwitchTable& t = *memory_.at(n.guid).table;
    const auto& info = results[2 * i];
    const auto& blk = results[2 * i + 1];
    if (!good(info) || !good(blk)) {
      rereadFor(n, "probe: " + nodeName(n) + " did not answer");
      continue;
    }
    if (mad::decodeSwitchInfo(info.reply).linearFdbTop != t.linearFdbTop) {
      rereadFor(n, "probe: " + nodeName(n) + " LinearFDBTop changed");
      continue;
    }
    const auto block = mad::decodeLinearForwardingBlock(blk.reply);
    const std::size_t base = std::size_t{refs[i].block} * mad::LinearForwardingBlock::kLidsPerBlock;
    for (std::size_t k = 0; k < block.ports.size() && base + k < t.ports.size(); ++k) {
      if (t.ports[base + k] != block.ports[k]) {
        rereadFor(n, "probe: " + nodeName(n) + " LFT block " + std::to_string(refs[i].block) +
                         " changed");
        break;
      }
    }
  }

  if (reread.empty()) {
    st.reason = "unchanged";
    if (previous->topology() == topology) return previous;
  } else {
    st.reason = reasons.front();
    if (reasons.size() > 1) st.reason += " (+" + std::to_string(reasons.size() - 1) + " more)";
    auto outcomes = readSwitches(topology, reread, st);
    for (std::size_t i = 0; i < reread.size(); ++i) {
      record(topology->node(reread[i]), outcomes[i]);
    }
  }
  const auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(clock_.now() - start);
  return snapshot(std::move(topology), false, took, st.probeMads + st.readMads);
}

ForwardingTablesPtr parseOpensmLftDump(const std::filesystem::path& path, TopologyPtr topology) {
  std::ifstream in(path);
  if (!in) throw LftDumpError("cannot read " + path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return parseOpensmLftDumpText(ss.str(), std::move(topology), "opensm-dump " + path.string());
}

namespace {

template <typename T>
bool parseNumber(std::string_view s, T& out, int base) {
  if (base == 16 && (s.starts_with("0x") || s.starts_with("0X"))) s.remove_prefix(2);
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && p == s.data() + s.size();
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> w;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) w.push_back(line.substr(i, j - i));
    i = j;
  }
  return w;
}

}  // namespace

ForwardingTablesPtr parseOpensmLftDumpText(std::string_view text, TopologyPtr topology,
                                           const std::string& source) {
  if (!topology) throw LftDumpError(source + ": no topology to match the switches against");
  std::vector<std::optional<SwitchTable>> byNode(topology->nodes().size());
  std::vector<std::string> failures;
  SwitchTable* current = nullptr;
  bool skipping = false;  // inside the table of a switch not in the topology
  int lineNo = 0;
  auto error = [&](const std::string& why) {
    return LftDumpError(source + ":" + std::to_string(lineNo) + ": " + why);
  };
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++lineNo;
    auto w = words(line);
    if (w.empty()) continue;
    if (w[0] == "Unicast") {
      // Unicast lids [0-14] of switch Lid 2 guid 0x0000000000200000 ('leaf0'):
      if (w.size() < 9 || w[1] != "lids" || w[3] != "of" || w[4] != "switch" || w[5] != "Lid" ||
          w[7] != "guid") {
        throw error("unrecognised table header");
      }
      std::uint16_t lid = 0;
      std::uint64_t guid = 0;
      if (!parseNumber(w[6], lid, 10) || !parseNumber(w[8], guid, 16)) {
        throw error("bad LID or GUID in table header");
      }
      const Node* n = topology->findNode(Guid{guid});
      if (!n || !n->isSwitch()) {
        failures.push_back("switch " + toString(Guid{guid}) +
                           " of the dump is not in the topology");
        current = nullptr;
        skipping = true;
        continue;
      }
      byNode[n->index] = SwitchTable{Guid{guid}, Lid{lid}, 0, {}};
      current = &*byNode[n->index];
      skipping = false;
      continue;
    }
    if (w.size() >= 2 && w[1] == "lids" &&
        w[0].find_first_not_of("0123456789") == std::string_view::npos) {
      continue;  // "14 lids dumped"
    }
    if (w[0].starts_with("0x")) {
      if (skipping) continue;
      if (!current) throw error("LFT entry before any table header");
      std::uint16_t lid = 0;
      unsigned port = 0;
      if (w.size() < 2 || !parseNumber(w[0], lid, 16) || !parseNumber(w[1], port, 10) ||
          port > 255) {
        throw error("bad LFT entry");
      }
      if (current->ports.size() <= lid) current->ports.resize(lid + 1u, SwitchTable::kNoPort);
      current->ports[lid] = static_cast<std::uint8_t>(port);
      current->linearFdbTop = std::max(current->linearFdbTop, lid);
      continue;
    }
    if (w[0].starts_with("#")) continue;
    throw error("unrecognised line");
  }
  for (auto& t : byNode) {
    if (t && t->ports.empty()) t->ports.assign(1, SwitchTable::kNoPort);
  }
  auto out = std::make_shared<ForwardingTables>(std::move(topology), std::move(byNode), source);
  out->failures = std::move(failures);
  return out;
}

}  // namespace ibfabric::routing
