#include "telemetry/counter_sweep.h"

#include <infiniband/mad.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <mutex>
#include <set>
#include <unordered_map>

namespace ibfabric::telemetry {
namespace {

using mad::MadOutcome;
using mad::MadRequest;
using mad::MadResult;

struct CounterInfo {
  std::string_view name;
  std::string_view ibName;
  int narrowWidth;
  int selectBit;  // -1: not in CounterSelect
  bool error;
};

constexpr std::array<CounterInfo, kCounterCount> kInfo = {{
    {"xmit_data", "PortXmitData", 32, 12, false},
    {"rcv_data", "PortRcvData", 32, 13, false},
    {"xmit_pkts", "PortXmitPkts", 32, 14, false},
    {"rcv_pkts", "PortRcvPkts", 32, 15, false},
    {"symbol_errors", "SymbolErrorCounter", 16, 0, true},
    {"link_error_recovery", "LinkErrorRecoveryCounter", 8, 1, true},
    {"link_downed", "LinkDownedCounter", 8, 2, true},
    {"rcv_errors", "PortRcvErrors", 16, 3, true},
    {"rcv_remote_physical_errors", "PortRcvRemotePhysicalErrors", 16, 4, true},
    {"rcv_switch_relay_errors", "PortRcvSwitchRelayErrors", 16, 5, true},
    {"xmit_discards", "PortXmitDiscards", 16, 6, true},
    {"xmit_constraint_errors", "PortXmitConstraintErrors", 8, 7, true},
    {"rcv_constraint_errors", "PortRcvConstraintErrors", 8, 8, true},
    {"local_link_integrity_errors", "LocalLinkIntegrityErrors", 4, 9, true},
    {"excessive_buffer_overrun_errors", "ExcessiveBufferOverrunErrors", 4, 10, true},
    {"vl15_dropped", "VL15Dropped", 16, 11, true},
    {"xmit_wait", "PortXmitWait", 32, -1, false},
}};

void setNarrowErrors(CounterValues& v, const mad::PortCounters& c) {
  auto put = [&](Counter k, std::uint64_t x) { v.set(k, x, narrowWidth(k)); };
  put(Counter::kSymbolErrors, c.symbolErrorCounter);
  put(Counter::kLinkErrorRecovery, c.linkErrorRecoveryCounter);
  put(Counter::kLinkDowned, c.linkDownedCounter);
  put(Counter::kRcvErrors, c.portRcvErrors);
  put(Counter::kRcvRemotePhysicalErrors, c.portRcvRemotePhysicalErrors);
  put(Counter::kRcvSwitchRelayErrors, c.portRcvSwitchRelayErrors);
  put(Counter::kXmitDiscards, c.portXmitDiscards);
  put(Counter::kXmitConstraintErrors, c.portXmitConstraintErrors);
  put(Counter::kRcvConstraintErrors, c.portRcvConstraintErrors);
  put(Counter::kLocalLinkIntegrityErrors, c.localLinkIntegrityErrors);
  put(Counter::kExcessiveBufferOverrunErrors, c.excessiveBufferOverrunErrors);
  put(Counter::kVl15Dropped, c.vl15Dropped);
}

void setNarrowData(CounterValues& v, const mad::PortCounters& c) {
  v.set(Counter::kXmitData, c.portXmitData, 32);
  v.set(Counter::kRcvData, c.portRcvData, 32);
  v.set(Counter::kXmitPkts, c.portXmitPkts, 32);
  v.set(Counter::kRcvPkts, c.portRcvPkts, 32);
}

void setExtendedData(CounterValues& v, const mad::PortCountersExtended& c) {
  v.set(Counter::kXmitData, c.portXmitData, 64);
  v.set(Counter::kRcvData, c.portRcvData, 64);
  v.set(Counter::kXmitPkts, c.portXmitPkts, 64);
  v.set(Counter::kRcvPkts, c.portRcvPkts, 64);
}

void setExtendedErrors(CounterValues& v, const mad::PortCountersExtended& c, bool xmitWait) {
  v.set(Counter::kSymbolErrors, c.symbolErrorCounter, 64);
  v.set(Counter::kLinkErrorRecovery, c.linkErrorRecoveryCounter, 64);
  v.set(Counter::kLinkDowned, c.linkDownedCounter, 64);
  v.set(Counter::kRcvErrors, c.portRcvErrors, 64);
  v.set(Counter::kRcvRemotePhysicalErrors, c.portRcvRemotePhysicalErrors, 64);
  v.set(Counter::kRcvSwitchRelayErrors, c.portRcvSwitchRelayErrors, 64);
  v.set(Counter::kXmitDiscards, c.portXmitDiscards, 64);
  v.set(Counter::kXmitConstraintErrors, c.portXmitConstraintErrors, 64);
  v.set(Counter::kRcvConstraintErrors, c.portRcvConstraintErrors, 64);
  v.set(Counter::kLocalLinkIntegrityErrors, c.localLinkIntegrityErrors, 64);
  v.set(Counter::kExcessiveBufferOverrunErrors, c.excessiveBufferOverrunErrors, 64);
  v.set(Counter::kVl15Dropped, c.vl15Dropped, 64);
  if (xmitWait) v.set(Counter::kXmitWait, c.portXmitWait, 64);
}

std::string describeFailure(std::string_view what, const MadResult& r) {
  char buf[160];
  if (r.ok()) {
    std::snprintf(buf, sizeof buf, "%.*s: MAD status 0x%04x", static_cast<int>(what.size()),
                  what.data(), mad::madStatus(r.reply));
  } else {
    std::snprintf(buf, sizeof buf, "%.*s: %s after %d send%s", static_cast<int>(what.size()),
                  what.data(), mad::toString(r.outcome), r.attempts, r.attempts == 1 ? "" : "s");
  }
  return buf;
}

void tally(SweepStats& stats, const std::vector<MadResult>& results) {
  for (const auto& r : results) {
    ++stats.requests;
    stats.attempts += static_cast<std::size_t>(r.attempts);
    if (r.attempts > 1) stats.retries += static_cast<std::size_t>(r.attempts - 1);
    if (!r.ok()) ++stats.failedRequests;
  }
}

// sweep(sink): requests per slice, in engine windows (at least kMinSliceRequests), and slices
// kept in the engine at once.
constexpr std::size_t kSliceWindows = 4;
constexpr std::size_t kMinSliceRequests = 64;
constexpr std::size_t kSlicesInFlight = 2;

}  // namespace

std::string_view toString(Counter c) { return kInfo[index(c)].name; }
std::string_view ibName(Counter c) { return kInfo[index(c)].ibName; }
bool isErrorCounter(Counter c) { return kInfo[index(c)].error; }
int narrowWidth(Counter c) { return kInfo[index(c)].narrowWidth; }

std::optional<int> counterSelectBit(Counter c) {
  int bit = kInfo[index(c)].selectBit;
  if (bit < 0) return std::nullopt;
  return bit;
}

bool CounterValues::saturated(Counter c) const {
  int width = bits[index(c)];
  if (width == 0 || width >= 64) return false;
  return value[index(c)] == (std::uint64_t{1} << width) - 1;
}

std::string_view toString(PortStatus s) {
  switch (s) {
    case PortStatus::kOk:
      return "ok";
    case PortStatus::kTimeout:
      return "timeout";
    case PortStatus::kUnsupported:
      return "unsupported";
    case PortStatus::kUnreachable:
      return "unreachable";
    case PortStatus::kGone:
      return "gone";
  }
  return "?";
}

const PortSample* CounterSnapshot::find(PortKey key) const {
  auto it = std::lower_bound(ports.begin(), ports.end(), key,
                             [](const PortSample& s, const PortKey& k) { return s.key < k; });
  return it != ports.end() && it->key == key ? &*it : nullptr;
}

mad::MadBuffer buildPortCountersClear(std::uint8_t portSelect,
                                      const std::vector<Counter>& counters) {
  mad::MadBuffer m =
      mad::makeRequest(mad::MgmtClass::kPerfMgt, mad::MadMethod::kSet,
                       static_cast<std::uint16_t>(mad::PmaAttribute::kPortCounters), 0);
  mad::PortCounters v;
  v.portSelect = portSelect;
  std::uint32_t select2 = 0;
  for (Counter c : counters) {
    if (auto bit = counterSelectBit(c)) {
      v.counterSelect = static_cast<std::uint16_t>(v.counterSelect | (1u << *bit));
    } else if (c == Counter::kXmitWait) {
      select2 |= 1u;  // CounterSelect2 bit 0: PortXmitWait.
    }
  }
  mad::encodePortCounters(m, v);
  mad_encode_field(m.data() + mad::kAttributeDataOffset, IB_PC_COUNTER_SELECT2_F, &select2);
  return m;
}

CounterSweeper::CounterSweeper(mad::MadEngine& engine, const mad::Clock& clock,
                               SweepOptions options)
    : engine_(engine), clock_(clock), options_(std::move(options)) {}

template <typename From, typename KeyOf, typename LastOkOf>
void CounterSweeper::carryLastOk(std::vector<Target>& next, const From& from, KeyOf keyOf,
                                 LastOkOf lastOkOf) {
  auto f = from.begin();
  for (Target& t : next) {
    while (f != from.end() && keyOf(*f) < t.key) ++f;
    if (f == from.end()) return;
    if (keyOf(*f) == t.key && lastOkOf(*f) > t.lastOk) t.lastOk = lastOkOf(*f);
  }
}

void CounterSweeper::continueAfter(const CounterSnapshot& previous) {
  sequence_ = std::max(sequence_, previous.sequence);
  continued_.clear();
  for (const PortSample& s : previous.ports)  // sorted by key
    if (s.lastOk != mad::Clock::time_point{}) continued_.emplace_back(s.key, s.lastOk);
  if (targets_.empty()) return;  // given with the next topology
  carryLastOk(
      targets_, continued_, [](const auto& p) { return p.first; },
      [](const auto& p) { return p.second; });
  continued_.clear();
}

void CounterSweeper::setTopology(TopologyPtr topology) {
  std::vector<Target> next;
  if (topology) {
    for (const Node& node : topology->nodes()) {
      if (node.missing) continue;  // remembered, not reachable: nothing to ask
      for (const auto& p : node.ports) {
        if (!p || !p->connected()) continue;
        if (node.isSwitch() && p->num.value() == 0) continue;
        // An HCA end of a missing cable, or of one not Active (Init: only subnet management
        // packets pass), has no path to its PMA; a switch end still answers.
        if (!node.isSwitch() && p->link &&
            topology->activity(topology->links()[*p->link]) != LinkActivity::kActive)
          continue;
        if (options_.portFilter && !options_.portFilter(node, *p)) continue;
        Lid lid = node.isSwitch() ? node.lid() : p->lid;
        if (node.isSwitch() && lid.value() == 0) lid = p->lid;
        next.push_back(Target{PortKey{node.guid, p->num}, node.index, lid});
      }
    }
  }
  std::sort(next.begin(), next.end(),
            [](const Target& a, const Target& b) { return a.key < b.key; });
  carryLastOk(
      next, targets_, [](const Target& t) { return t.key; },
      [](const Target& t) { return t.lastOk; });
  carryLastOk(
      next, continued_, [](const auto& p) { return p.first; },
      [](const auto& p) { return p.second; });
  continued_.clear();
  // Ports polled before and absent now are reported once as gone.
  std::set<PortKey> now;
  for (const auto& t : next) now.insert(t.key);
  for (const auto& t : targets_) {
    if (now.count(t.key)) continue;
    PortSample s;
    s.key = t.key;
    s.lid = t.lid;
    if (topology_) {
      const Node& n = topology_->node(t.node);
      s.nodeType = n.type;
      s.nodeDescription = n.description;
      if (const Port* p = n.port(t.key.port); p && p->remote) {
        const Node& rn = topology_->node(p->remote->node);
        s.remote = PortKey{rn.guid, p->remote->port};
        s.remoteDescription = rn.description;
        s.rate = p->activeRate;
      }
    }
    s.status = PortStatus::kGone;
    s.detail = "no longer linked in the topology";
    s.lastOk = t.lastOk;
    gone_.push_back(std::move(s));
  }
  targets_ = std::move(next);
  topology_ = std::move(topology);
  capabilities_.clear();
  capabilityFailures_.clear();
  modelsAsked_.clear();
}

double xmitWaitTickSeconds(std::uint8_t tick, const std::optional<LinkRate>& rate,
                           bool perPortBytes) {
  if (!rate) return 0.0;
  const double laneBitsPerSecond = rate->dataGbps() / lanes(rate->width) * 1e9;
  if (laneBitsPerSecond <= 0) return 0.0;
  const double symbolSeconds = 8.0 / laneBitsPerSecond;  // one byte on one lane
  const double ticks = static_cast<double>(tick) + 1.0;
  return perPortBytes ? ticks * symbolSeconds / lanes(rate->width) : ticks * symbolSeconds;
}

bool countsXmitWaitPerPortBytes(std::uint32_t vendorId, std::uint32_t deviceId) {
  constexpr std::uint32_t kMellanox = 0x02c9;
  return vendorId == kMellanox && (deviceId == 0xd2f0 || deviceId == 0xd2f2 || deviceId == 0xd2f4);
}

void CounterSweeper::readCapabilities(SweepStats& stats, std::vector<TargetFailure>& failures) {
  std::vector<MadRequest> requests;
  std::vector<const Target*> asked;
  std::set<Guid> seen;
  for (const auto& t : targets_) {
    if (t.lid.value() == 0) continue;  // reported unreachable by sweep()
    if (capabilities_.count(t.key.node) || !seen.insert(t.key.node).second) continue;
    requests.push_back({mad::pmaAddress(t.lid), mad::buildClassPortInfoGet(), nullptr});
    asked.push_back(&t);
  }
  if (requests.empty()) return;
  stats.classPortInfoQueries += requests.size();
  auto results = engine_.run(std::move(requests));
  tally(stats, results);
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Target& t = *asked[i];
    const MadResult& r = results[i];
    if (r.ok() && mad::madStatus(r.reply) == 0) {
      const Node& node = topology_->node(t.node);
      PmaCapabilities caps;
      caps.classPortInfo = mad::decodeClassPortInfo(r.reply);
      caps.xmitWaitPerPortBytes = countsXmitWaitPerPortBytes(node.vendorId, node.deviceId);
      if (auto m = modelTicks_.find(modelOf(node)); m != modelTicks_.end())
        caps.sampleTick = m->second;
      capabilities_[t.key.node] = caps;
      capabilityFailures_.erase(t.key.node);
      continue;
    }
    std::string why = describeFailure("ClassPortInfo", r);
    capabilityFailures_[t.key.node] = why;
    TargetFailure f;
    f.lid = t.lid;
    f.node = t.key.node;
    f.nodeDescription = topology_->node(t.node).description;
    f.failedRequests = 1;
    f.requests = 1;
    f.attempts = r.attempts;
    f.reason = why;
    failures.push_back(std::move(f));
  }
}

void CounterSweeper::readSampleTicks(SweepStats& stats) {
  // PortSamplesControl.Tick is read-only device data: ask one node per model not known yet
  // (once per topology), never a LID in samplesControlAvoid, with a single attempt; a model
  // whose representative does not answer keeps the default tick.
  std::map<Model, std::vector<const Target*>> candidates;
  for (const auto& t : targets_) {
    if (t.lid.value() == 0 || !capabilities_.count(t.key.node)) continue;
    if (options_.samplesControlAvoid.count(t.lid)) continue;
    const Model model = modelOf(topology_->node(t.node));
    if (modelTicks_.count(model) || modelsAsked_.count(model)) continue;
    auto& list = candidates[model];
    if (list.empty() || list.back()->key.node != t.key.node) list.push_back(&t);
  }
  if (candidates.empty()) return;
  std::vector<MadRequest> requests;
  std::vector<Model> models;
  for (const auto& [model, list] : candidates) {
    const Target& t = *list[list.size() / 2];  // a node from the middle, one port of it
    requests.push_back(
        {mad::pmaAddress(t.lid), mad::buildPortSamplesControlGet(t.key.port.value()), nullptr, 0});
    models.push_back(model);
    modelsAsked_.insert(model);
  }
  stats.samplesControlQueries += requests.size();
  const auto results = engine_.run(std::move(requests));
  for (std::size_t i = 0; i < results.size(); ++i) {
    const MadResult& r = results[i];
    if (!r.ok()) continue;  // unanswered: the default tick, asked again with the next topology
    modelTicks_[models[i]] = mad::madStatus(r.reply) == 0
                                 ? std::optional(mad::decodePortSamplesControl(r.reply).tick)
                                 : std::nullopt;
  }
  for (auto& [guid, caps] : capabilities_) {
    const Node* node = topology_->findNode(guid);
    if (!node) continue;
    if (auto m = modelTicks_.find(modelOf(*node)); m != modelTicks_.end())
      caps.sampleTick = m->second;
  }
}

std::shared_ptr<CounterSnapshot> CounterSweeper::beginSweep(std::vector<TargetFailure>& failures) {
  auto snap = std::make_shared<CounterSnapshot>();
  snap->sequence = ++sequence_;
  snap->started = clock_.now();
  snap->topology = topology_;
  readCapabilities(snap->stats, failures);
  readSampleTicks(snap->stats);
  return snap;
}

// Per port, PortCountersExtended and/or PortCounters as the capabilities allow.
void CounterSweeper::prepareSample(std::size_t i, mad::Clock::time_point started, PortSample& s,
                                   std::vector<MadRequest>& requests,
                                   std::vector<Query>& queries) const {
  const Target& t = targets_[i];
  const Node& node = topology_->node(t.node);
  const Port* port = node.port(t.key.port);
  s.key = t.key;
  s.nodeType = node.type;
  s.nodeDescription = node.description;
  s.lid = t.lid;
  s.at = started;
  if (port) {
    s.rate = port->activeRate;
    if (port->remote) {
      const Node& rn = topology_->node(port->remote->node);
      s.remote = PortKey{rn.guid, port->remote->port};
      s.remoteDescription = rn.description;
    }
  }
  if (t.lid.value() == 0) {
    s.status = PortStatus::kUnreachable;
    s.detail = "no LID in the topology";
    return;
  }
  auto cap = capabilities_.find(t.key.node);
  if (cap == capabilities_.end()) {
    s.status = PortStatus::kUnreachable;
    auto why = capabilityFailures_.find(t.key.node);
    s.detail = why != capabilityFailures_.end() ? why->second : "no ClassPortInfo";
    return;
  }
  const auto select = t.key.port.value();
  if (cap->second.sampleTick) {
    s.xmitWaitTickSeconds =
        xmitWaitTickSeconds(*cap->second.sampleTick, s.rate, cap->second.xmitWaitPerPortBytes);
  }
  if (cap->second.extendedCounters()) {
    requests.push_back(
        {mad::pmaAddress(t.lid), mad::buildPortCountersExtendedGet(select), nullptr});
    queries.push_back({i, QueryKind::kExtended});
  }
  if (!cap->second.extendedCounters() || !cap->second.extendedErrorCounters()) {
    requests.push_back({mad::pmaAddress(t.lid), mad::buildPortCountersGet(select), nullptr});
    queries.push_back({i, QueryKind::kNarrow});
  }
}

void CounterSweeper::applyReply(const Query& q, const MadResult& res, PortSample& s,
                                TargetFailure* tf) const {
  const Target& t = targets_[q.port];
  const char* what = q.kind == QueryKind::kExtended ? "PortCountersExtended" : "PortCounters";
  if (!res.ok() || mad::madStatus(res.reply) != 0) {
    ++tf->failedRequests;
    tf->reason = describeFailure(what, res);
    if (s.status == PortStatus::kOk) {
      s.status = res.ok() ? PortStatus::kUnsupported : PortStatus::kTimeout;
      s.detail = tf->reason;
    }
    return;
  }
  s.at = std::max(s.at, res.completedAt);
  const PmaCapabilities& cap = capabilities_.at(t.key.node);
  if (q.kind == QueryKind::kExtended) {
    auto c = mad::decodePortCountersExtended(res.reply);
    setExtendedData(s.counters, c);
    if (cap.extendedErrorCounters()) setExtendedErrors(s.counters, c, cap.xmitWait());
  } else {
    auto c = mad::decodePortCounters(res.reply);
    setNarrowErrors(s.counters, c);
    if (!cap.extendedCounters()) setNarrowData(s.counters, c);
    if (cap.xmitWait()) s.counters.set(Counter::kXmitWait, c.portXmitWait, 32);
  }
}

void CounterSweeper::collectFailures(std::map<Lid, TargetFailure>& byLid,
                                     std::vector<TargetFailure>& failures) const {
  for (auto& [lid, tf] : byLid) {
    if (tf.failedRequests == 0) continue;
    if (topology_) {
      if (const Node* n = topology_->findNode(tf.node)) tf.nodeDescription = n->description;
    }
    failures.push_back(std::move(tf));
  }
}

// Optional policy: clear saturated narrow counters so they count again.
void CounterSweeper::clearSaturated(std::vector<PortSample>& samples,
                                    const std::vector<std::size_t>& which, SweepStats& stats) {
  std::vector<MadRequest> clears;
  std::vector<std::pair<std::size_t, std::vector<Counter>>> what;
  for (std::size_t i : which) {
    const PortSample& s = samples[i];
    if (s.status != PortStatus::kOk) continue;
    std::vector<Counter> sat;
    for (Counter c : kAllCounters)
      if (s.counters.saturated(c)) sat.push_back(c);
    if (sat.empty()) continue;
    clears.push_back(
        {mad::pmaAddress(s.lid), buildPortCountersClear(s.key.port.value(), sat), nullptr});
    what.emplace_back(i, std::move(sat));
  }
  if (clears.empty()) return;
  stats.clearRequests += clears.size();
  auto cleared = engine_.run(std::move(clears));
  tally(stats, cleared);
  for (std::size_t i = 0; i < cleared.size(); ++i) {
    if (cleared[i].ok() && mad::madStatus(cleared[i].reply) == 0) {
      samples[what[i].first].clearedAfterRead = what[i].second;
    } else {
      spdlog::warn("counter sweep: clearing saturated counters of {} port {} failed: {}",
                   samples[what[i].first].nodeDescription, samples[what[i].first].key.port.value(),
                   describeFailure("PortCounters SET", cleared[i]));
    }
  }
}

CounterSnapshotPtr CounterSweeper::finishSweep(std::shared_ptr<CounterSnapshot> snap,
                                               std::vector<PortSample> samples,
                                               std::vector<TargetFailure> failures,
                                               const SampleSink* sink) {
  SweepStats& stats = snap->stats;
  stats.ports = samples.size();
  for (const auto& s : samples) {
    if (s.status == PortStatus::kOk) ++stats.portsOk;
    if (s.stale()) ++stats.portsStale;
  }
  for (auto& g : gone_) {
    g.at = snap->started;
    if (sink) (*sink)(g);
    samples.push_back(std::move(g));
  }
  gone_.clear();
  // Samples follow targets_, which is sorted: only ports gone since the last sweep need a sort.
  const auto byKey = [](const PortSample& a, const PortSample& b) { return a.key < b.key; };
  if (!std::is_sorted(samples.begin(), samples.end(), byKey))
    std::sort(samples.begin(), samples.end(), byKey);
  snap->ports = std::move(samples);
  snap->failures = std::move(failures);
  snap->finished = clock_.now();
  snap->wallTime = std::chrono::system_clock::now();
  stats.duration = snap->finished - snap->started;
  if (!snap->failures.empty()) {
    spdlog::info("counter sweep {}: {} of {} ports ok, {} targets with failures, {} retries",
                 snap->sequence, stats.portsOk, stats.ports, snap->failures.size(), stats.retries);
  }
  return snap;
}

CounterSnapshotPtr CounterSweeper::sweep() { return sweepInSlices(nullptr); }

CounterSnapshotPtr CounterSweeper::sweep(const SampleSink& sink) { return sweepInSlices(&sink); }

std::vector<std::size_t> CounterSweeper::interleavedByLid() const {
  std::vector<std::vector<std::size_t>> byLid;
  std::unordered_map<Lid, std::size_t> group;
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    auto [it, added] = group.try_emplace(targets_[i].lid, byLid.size());
    if (added) byLid.emplace_back();
    byLid[it->second].push_back(i);
  }
  std::vector<std::size_t> order;
  order.reserve(targets_.size());
  for (std::size_t round = 0; order.size() < targets_.size(); ++round) {
    for (const auto& ports : byLid)
      if (round < ports.size()) order.push_back(ports[round]);
  }
  return order;
}

CounterSnapshotPtr CounterSweeper::sweepInSlices(const SampleSink* sink) {
  std::vector<TargetFailure> failures;
  auto snap = beginSweep(failures);
  SweepStats& stats = snap->stats;
  std::vector<PortSample> samples(targets_.size());
  const std::vector<std::size_t> order = interleavedByLid();
  // A slice is a few windows' worth of requests: while the engine drains one, the next is queued
  // behind it, so the window never runs dry between slices, and the requests and results alive
  // at once are a few windows', not the sweep's (122,880 at 10,240 HCAs: ~70 MB).
  const std::size_t sliceRequests = std::max<std::size_t>(
      kSliceWindows * static_cast<std::size_t>(engine_.options().window), kMinSliceRequests);
  const auto guard = std::max<std::chrono::nanoseconds>(2 * engine_.options().batchWatchdog,
                                                        std::chrono::seconds(10));
  struct Slice {
    std::vector<std::size_t> ports;
    std::vector<Query> queries;
    mad::MadBatchPtr batch;  ///< Null: nothing to ask, or the sweep's deadline had passed.
  };
  std::deque<Slice> slices;
  std::size_t next = 0;
  std::size_t notAsked = 0;  ///< Ports of the slices not sent because the deadline had passed.
  const auto madStart = clock_.now();
  // One watchdog for the whole sweep, as for one batch: the slices share its deadline, and the
  // ones not sent by then are not sent at all (a collapsed plane costs one watchdog, not one a
  // slice).
  const auto deadline = madStart + engine_.options().batchWatchdog;
  const auto launch = [&] {
    Slice& sl = slices.emplace_back();
    std::vector<MadRequest> requests;
    while (next < order.size() && requests.size() < sliceRequests) {
      const std::size_t i = order[next++];
      prepareSample(i, snap->started, samples[i], requests, sl.queries);
      sl.ports.push_back(i);
    }
    if (requests.empty()) return;
    if (clock_.now() >= deadline) {
      notAsked += sl.ports.size();
      return;
    }
    sl.batch = engine_.submit(std::move(requests), deadline);
  };
  // Every LID asked is accounted: a target's queries span slices.
  std::map<Lid, TargetFailure> byLid;
  const auto account = [&](const Query& q, const MadResult& r) {
    const Target& t = targets_[q.port];
    TargetFailure& tf = byLid[t.lid];
    tf.lid = t.lid;
    tf.node = t.key.node;
    ++tf.requests;
    tf.attempts += r.attempts;
    applyReply(q, r, samples[q.port], &tf);
  };
  while (next < order.size() && slices.size() < kSlicesInFlight) launch();
  while (!slices.empty()) {
    Slice sl = std::move(slices.front());
    slices.pop_front();
    if (sl.batch && !sl.batch->waitFor(guard)) {
      spdlog::error("counter sweep: slice of {} requests still running after {} s; abandoned",
                    sl.batch->size(),
                    std::chrono::duration_cast<std::chrono::seconds>(guard).count());
    }
    if (next < order.size()) launch();
    if (betweenSlices_ && !slices.empty()) betweenSlices_();
    if (sl.batch) {
      const std::vector<MadResult>& results = sl.batch->results();
      tally(stats, results);
      for (std::size_t r = 0; r < results.size(); ++r) account(sl.queries[r], results[r]);
    } else if (!sl.queries.empty()) {
      const std::vector<MadResult> unsent(sl.queries.size());  // kAborted, 0 attempts
      tally(stats, unsent);
      for (std::size_t r = 0; r < unsent.size(); ++r) account(sl.queries[r], unsent[r]);
    }
    if (options_.clearSaturated) clearSaturated(samples, sl.ports, stats);
    for (std::size_t i : sl.ports) {
      if (samples[i].status == PortStatus::kOk) targets_[i].lastOk = samples[i].at;
      samples[i].lastOk = targets_[i].lastOk;
    }
    if (sink)
      for (std::size_t i : sl.ports) (*sink)(samples[i]);
  }
  stats.madDuration = clock_.now() - madStart;
  if (notAsked > 0) {
    spdlog::warn(
        "counter sweep {}: the sweep's deadline ({} s) passed with {} ports not asked",
        snap->sequence,
        std::chrono::duration_cast<std::chrono::seconds>(engine_.options().batchWatchdog).count(),
        notAsked);
  }
  collectFailures(byLid, failures);
  return finishSweep(std::move(snap), std::move(samples), std::move(failures), sink);
}

}  // namespace ibfabric::telemetry
