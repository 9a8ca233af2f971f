#include "scheduler_hooks/pool.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <tuple>

#include "scheduler_hooks/pool_journal.h"

namespace ibfabric::scheduler_hooks {
namespace {

using nlohmann::json;
using SysClock = std::chrono::system_clock;

struct GpuUse {
  bool exclusive = false;
  int compute = 0;  // MIG compute slices in use
  int memory = 0;   // MIG memory slices in use
  bool free() const { return !exclusive && compute == 0; }
};
using Usage = std::vector<std::vector<GpuUse>>;  // [host][gpu position]

struct Fault {
  HostHealth health = HostHealth::kOk;
  std::string reason;
  bool fromTopology = false;
};

struct HostEntry {
  PoolHost inv;
  bool known = false;  // seen in a fabric snapshot at least once
  std::set<std::string> seenHcas;
  std::map<std::string, Fault> faults;  // by HCA name ("mlx5_1") or "host"
  std::vector<Guid> leaves;
  int group = -1;
  std::vector<int> rails;  // per GPU position

  HostHealth health() const {
    HostHealth h = HostHealth::kOk;
    for (const auto& [k, f] : faults) h = std::max(h, f.health);
    return h;
  }
  std::string reason() const {
    const HostHealth h = health();
    for (const auto& [k, f] : faults)
      if (f.health == h) return f.reason;
    return "";
  }
  int position(int gpuIndex) const {
    for (std::size_t i = 0; i < inv.gpus.size(); ++i)
      if (inv.gpus[i].index == gpuIndex) return static_cast<int>(i);
    return -1;
  }
};

bool isExclusive(const AllocationRequest& r) { return r.sharing == "exclusive"; }

int profileCompute(std::string_view profile) {
  int v = 0;
  for (char c : profile) {
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::int64_t toMs(SysClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::string isoTime(SysClock::time_point t) {
  const std::time_t tt = SysClock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

HostHealth faultOf(telemetry::EventType t, bool& clears) {
  using E = telemetry::EventType;
  clears = false;
  switch (t) {
    case E::kLinkDown:
    case E::kPortGone:
    case E::kPortUnreachable:
      return HostHealth::kDown;
    case E::kFlapping:
    case E::kErrorThreshold:
      return HostHealth::kFaulty;
    case E::kLinkDegraded:
      return HostHealth::kDegraded;
    case E::kLinkUp:
    case E::kLinkRecovered:
      clears = true;
      return HostHealth::kOk;
    default:
      return HostHealth::kOk;
  }
}

}  // namespace

std::string_view toString(AllocationState s) {
  return s == AllocationState::kActive ? "active" : "degraded";
}

int PoolError::httpStatus() const {
  switch (kind_) {
    case Kind::kInvalid:
      return 400;
    case Kind::kNotFound:
      return 404;
    case Kind::kConflict:
    case Kind::kCapacity:
    case Kind::kQuota:
      return 409;
    case Kind::kNotReady:
      return 503;
    case Kind::kStorage:
      return 500;
  }
  return 500;
}

void validate(const AllocationRequest& r) {
  auto bad = [](const std::string& m) { throw PoolError(PoolError::Kind::kInvalid, m); };
  if (r.jobId.empty() || r.jobId.size() > 128) bad("job_id: 1..128 characters required");
  for (char c : r.jobId)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' &&
        c != ':')
      bad("job_id: only letters, digits, '-', '_', '.', ':' are allowed");
  if (r.gpus < 1 || r.gpus > 1'000'000) bad("gpus: must be 1..1000000");
  if (r.gpusPerHost < 0 || r.gpusPerHost > 64) bad("gpus_per_host: must be 0 (any)..64");
  if (r.priority < -1'000'000 || r.priority > 1'000'000) bad("priority: out of range");
  if (!isExclusive(r)) {
    Gpu probe;
    probe.memoryGb = 4096;
    probe.model = "generic";
    if (!parseMigProfile(r.sharing, probe))
      bad("sharing: \"exclusive\" or a MIG profile like \"1g.10gb\", got \"" + r.sharing + "\"");
    if (r.jobClass == JobClass::kTraining)
      bad("sharing: training takes whole GPUs (MIG instances have no NVLink/P2P)");
  }
}

AllocationRequest requestFromJson(const json& j) {
  auto bad = [](const std::string& m) { throw PoolError(PoolError::Kind::kInvalid, m); };
  if (!j.is_object()) bad("the request must be a JSON object");
  static const std::set<std::string> known = {"job_id",   "gpus",    "gpus_per_host", "class",
                                              "priority", "sharing", "preemptible"};
  for (const auto& [k, v] : j.items())
    if (!known.count(k)) bad("unknown field \"" + k + "\"");
  AllocationRequest r;
  if (!j.contains("job_id") || !j["job_id"].is_string()) bad("job_id: a string is required");
  r.jobId = j["job_id"].get<std::string>();
  if (!j.contains("gpus") || !j["gpus"].is_number_integer()) bad("gpus: an integer is required");
  r.gpus = j["gpus"].get<int>();
  if (j.contains("gpus_per_host")) {
    const auto& g = j["gpus_per_host"];
    if (g.is_string() && g.get<std::string>() == "any")
      r.gpusPerHost = 0;
    else if (g.is_number_integer())
      r.gpusPerHost = g.get<int>();
    else
      bad("gpus_per_host: an integer or \"any\"");
  }
  if (!j.contains("class") || !j["class"].is_string()) bad("class: training or inference");
  auto c = parseJobClass(j["class"].get<std::string>());
  if (!c) bad("class: training or inference, got \"" + j["class"].get<std::string>() + "\"");
  r.jobClass = *c;
  if (j.contains("priority")) {
    if (!j["priority"].is_number_integer()) bad("priority: an integer");
    r.priority = j["priority"].get<int>();
  }
  if (j.contains("sharing")) {
    if (!j["sharing"].is_string()) bad("sharing: a string");
    r.sharing = j["sharing"].get<std::string>();
  }
  if (j.contains("preemptible")) {
    if (!j["preemptible"].is_boolean()) bad("preemptible: true or false");
    r.preemptible = j["preemptible"].get<bool>();
  }
  validate(r);
  return r;
}

json toJson(const AllocationRequest& r) {
  return {{"job_id", r.jobId},
          {"gpus", r.gpus},
          {"gpus_per_host", r.gpusPerHost == 0 ? json("any") : json(r.gpusPerHost)},
          {"class", toString(r.jobClass)},
          {"priority", r.priority},
          {"sharing", r.sharing},
          {"preemptible", r.preemptible}};
}

json toJson(const Allocation& a) {
  json hosts = json::array();
  for (const auto& h : a.hosts) hosts.push_back({{"host", h.host}, {"gpus", h.gpus}});
  json j = toJson(a.request);
  j["state"] = toString(a.state);
  j["hosts"] = hosts;
  j["sequence"] = a.sequence;
  j["created"] = isoTime(a.created);
  j["created_unix_ms"] = toMs(a.created);
  j["gpu_equivalents"] = a.gpuEquivalents;
  if (a.state == AllocationState::kDegraded)
    j["degraded"] = {{"reason", a.degradedReason},
                     {"replacement", a.replacement ? json(*a.replacement) : json(nullptr)},
                     {"note", a.replacementNote}};
  return j;
}

Allocation allocationFromJson(const json& j) {
  try {
    Allocation a;
    json req = j;
    for (const char* k : {"state", "hosts", "sequence", "created", "created_unix_ms",
                          "gpu_equivalents", "degraded"})
      req.erase(k);
    a.request = requestFromJson(req);
    a.state = j.at("state") == "degraded" ? AllocationState::kDegraded : AllocationState::kActive;
    for (const auto& h : j.at("hosts"))
      a.hosts.push_back({h.at("host").get<std::string>(), h.at("gpus").get<std::vector<int>>()});
    a.sequence = j.at("sequence").get<std::uint64_t>();
    a.created = SysClock::time_point(std::chrono::milliseconds(j.at("created_unix_ms")));
    a.gpuEquivalents = j.at("gpu_equivalents").get<double>();
    if (j.contains("degraded")) {
      const auto& d = j["degraded"];
      a.degradedReason = d.value("reason", "");
      if (d.contains("replacement") && d["replacement"].is_string())
        a.replacement = d["replacement"].get<std::string>();
      a.replacementNote = d.value("note", "");
    }
    return a;
  } catch (const json::exception& e) {
    throw PoolError(PoolError::Kind::kInvalid, std::string("allocation record: ") + e.what());
  }
}

// ---------------------------------------------------------------------------------------------

struct Pool::Impl {
  PoolOptions options;
  mutable std::mutex mu;
  std::vector<HostEntry> hosts;
  std::unordered_map<std::string, std::size_t> byName;
  Usage usage;
  std::map<std::string, Allocation, std::less<>> allocations;
  std::map<JobClass, double> usedByClass;
  std::uint64_t nextSequence = 1;
  std::uint64_t journalSeq = 0;
  std::uint64_t preemptions = 0;
  std::uint64_t tornBytes = 0;
  std::unique_ptr<PoolJournal> journal;
  TopologyPtr topology;
  std::unordered_map<Guid, std::pair<std::size_t, std::string>> hcaOwner;  // -> host, "mlx5_n"
  std::vector<PoolEvent> pending;  // emitted after the mutex is released

  SysClock::time_point now() const { return options.clock ? options.clock() : SysClock::now(); }

  bool usable(std::size_t h) const {
    return hosts[h].known && hosts[h].health() == HostHealth::kOk;
  }

  int totalGpus() const {
    int n = 0;
    for (const auto& h : hosts)
      if (h.known) n += static_cast<int>(h.inv.gpus.size());
    return n;
  }

  // --- usage bookkeeping ---------------------------------------------------------------------

  /// Adds (sign +1) or removes (-1) an allocation's GPUs to/from `u` (nullptr: only counts);
  /// returns its GPU-equivalents.
  double applyGrant(const Allocation& a, int sign, Usage* u) const {
    double eq = 0.0;
    for (const auto& g : a.hosts) {
      auto it = byName.find(g.host);
      if (it == byName.end()) continue;
      const HostEntry& h = hosts[it->second];
      for (int idx : g.gpus) {
        const int pos = h.position(idx);
        if (pos < 0) continue;
        GpuUse scratch;
        GpuUse& gu = u ? (*u)[it->second][pos] : scratch;
        if (isExclusive(a.request)) {
          gu.exclusive = sign > 0;
          eq += 1.0;
        } else if (auto p = parseMigProfile(a.request.sharing, h.inv.gpus[pos])) {
          gu.compute += sign * p->computeSlices;
          gu.memory += sign * p->memorySlices;
          eq += double(p->computeSlices) / computeSlicesOf(h.inv.gpus[pos].model);
        }
      }
    }
    return eq;
  }

  void addAllocation(Allocation a) {
    applyGrant(a, +1, &usage);
    usedByClass[a.request.jobClass] += a.gpuEquivalents;
    nextSequence = std::max(nextSequence, a.sequence + 1);
    allocations[a.request.jobId] = std::move(a);
  }

  void removeAllocation(const std::string& job) {
    auto it = allocations.find(job);
    if (it == allocations.end()) return;
    applyGrant(it->second, -1, &usage);
    usedByClass[it->second.request.jobClass] -= it->second.gpuEquivalents;
    if (std::abs(usedByClass[it->second.request.jobClass]) < 1e-9)
      usedByClass[it->second.request.jobClass] = 0.0;
    allocations.erase(it);
  }

  // --- quotas --------------------------------------------------------------------------------

  std::optional<std::string> quotaBlock(JobClass c, double eq,
                                        const std::map<JobClass, double>& used) const {
    const auto t = now();
    const int total = totalGpus();
    for (const auto& rule : options.quotas) {
      if (rule.jobClass != c || !rule.activeAt(t)) continue;
      const double limit = rule.maxFraction * total;
      auto it = used.find(c);
      const double held = it == used.end() ? 0.0 : it->second;
      if (held + eq > limit + 1e-9)
        return "quota: " + std::string(toString(c)) + " may hold " + std::to_string(limit) +
               " GPUs (" + std::to_string(int(std::lround(rule.maxFraction * 100))) + "% in " +
               rule.window() + " UTC), holds " + std::to_string(held) + ", asks " +
               std::to_string(eq);
    }
    return std::nullopt;
  }

  double requestEquivalents(const AllocationRequest& r) const {
    if (isExclusive(r)) return r.gpus;
    return r.gpus * profileCompute(r.sharing) / 7.0;
  }

  // --- choosing GPUs -------------------------------------------------------------------------

  int freeGpus(std::size_t h, const Usage& u) const {
    int n = 0;
    for (const auto& g : u[h]) n += g.free() ? 1 : 0;
    return n;
  }
  bool hostFree(std::size_t h, const Usage& u) const {
    return freeGpus(h, u) == static_cast<int>(u[h].size());
  }

  int trainingPerHost(const AllocationRequest& r) const {
    if (r.gpusPerHost > 0) return r.gpusPerHost;
    int most = 0;
    for (std::size_t h = 0; h < hosts.size(); ++h)
      if (usable(h)) most = std::max(most, static_cast<int>(hosts[h].inv.gpus.size()));
    return std::max(1, std::min(r.gpus, most));
  }

  std::vector<int> firstFree(std::size_t h, const Usage& u, int k) const {
    std::vector<int> out;
    for (std::size_t p = 0; p < u[h].size() && static_cast<int>(out.size()) < k; ++p)
      if (u[h][p].free()) out.push_back(hosts[h].inv.gpus[p].index);
    return out;
  }

  std::optional<std::vector<HostGrant>> chooseTraining(const AllocationRequest& r, const Usage& u,
                                                       std::string& why) const {
    const int per = trainingPerHost(r);
    const int n = (r.gpus + per - 1) / per;
    routing::PlacementRequest pr;
    pr.hosts = n;
    pr.gpus = r.gpus;
    pr.gpusPerHost = per;
    pr.pattern = routing::CommPattern::kRingAllreduce;
    for (std::size_t h = 0; h < hosts.size(); ++h)
      if (usable(h) && hostFree(h, u) && static_cast<int>(u[h].size()) >= per)
        pr.candidates.push_back(hosts[h].inv.name);
    if (static_cast<int>(pr.candidates.size()) < n) {
      why = "capacity: " + std::to_string(n) + " free healthy hosts with " + std::to_string(per) +
            " GPUs needed, " + std::to_string(pr.candidates.size()) + " available";
      return std::nullopt;
    }
    if (!options.placer) throw PoolError(PoolError::Kind::kNotReady, "no placement engine");
    routing::PlacementAnswer answer;
    try {
      answer = options.placer(pr);
    } catch (const routing::PlacementError& e) {
      if (e.kind() == routing::PlacementError::Kind::kUnsatisfiable) {
        why = std::string("placement: ") + e.what();
        return std::nullopt;
      }
      throw PoolError(e.kind() == routing::PlacementError::Kind::kNotReady
                          ? PoolError::Kind::kNotReady
                          : PoolError::Kind::kInvalid,
                      std::string("placement: ") + e.what());
    }
    if (answer.options.empty() || static_cast<int>(answer.options[0].hosts.size()) != n)
      throw PoolError(PoolError::Kind::kStorage, "placement: the engine answered no usable option");
    std::vector<HostGrant> out;
    int left = r.gpus;
    std::set<std::string> used;
    for (const auto& name : answer.options[0].hosts) {
      auto it = byName.find(name);
      if (it == byName.end() || !usable(it->second) || !hostFree(it->second, u) ||
          !used.insert(name).second)
        throw PoolError(PoolError::Kind::kStorage,
                        "placement: the engine chose " + name + ", not a free candidate");
      const int k = std::min(per, left);
      left -= k;
      out.push_back({name, firstFree(it->second, u, k)});
    }
    return out;
  }

  std::optional<std::vector<HostGrant>> chooseExclusive(const AllocationRequest& r, const Usage& u,
                                                        std::string& why) const {
    struct Cand {
      std::size_t h;
      int free;
      bool partial;
    };
    std::vector<Cand> cands;
    int total = 0;
    for (std::size_t h = 0; h < hosts.size(); ++h) {
      if (!usable(h)) continue;
      const int f = freeGpus(h, u);
      if (f == 0) continue;
      cands.push_back({h, f, f < static_cast<int>(u[h].size())});
      total += f;
    }
    auto name = [&](const Cand& c) -> const std::string& { return hosts[c.h].inv.name; };
    std::vector<HostGrant> out;
    if (r.gpusPerHost > 0) {
      const int n = (r.gpus + r.gpusPerHost - 1) / r.gpusPerHost;
      // Best fit: the fullest hosts that still have room first (packs partial hosts).
      std::erase_if(cands, [&](const Cand& c) { return c.free < r.gpusPerHost; });
      if (static_cast<int>(cands.size()) < n) {
        why = "capacity: " + std::to_string(n) + " hosts with " + std::to_string(r.gpusPerHost) +
              " free GPUs needed, " + std::to_string(cands.size()) + " available";
        return std::nullopt;
      }
      std::sort(cands.begin(), cands.end(), [&](const Cand& a, const Cand& b) {
        return std::tie(a.free, name(a)) < std::tie(b.free, name(b));
      });
      int left = r.gpus;
      for (int i = 0; i < n; ++i) {
        const int k = std::min(r.gpusPerHost, left);
        left -= k;
        out.push_back({hosts[cands[i].h].inv.name, firstFree(cands[i].h, u, k)});
      }
      return out;
    }
    if (total < r.gpus) {
      why = "capacity: " + std::to_string(r.gpus) + " free GPUs needed, " + std::to_string(total) +
            " available";
      return std::nullopt;
    }
    // One host if any fits (the fullest that does), else partial hosts first, most free first.
    const Cand* best = nullptr;
    for (const auto& c : cands)
      if (c.free >= r.gpus &&
          (!best || std::tie(c.free, name(c)) < std::tie(best->free, name(*best))))
        best = &c;
    if (best) return std::vector<HostGrant>{{name(*best), firstFree(best->h, u, r.gpus)}};
    std::sort(cands.begin(), cands.end(), [&](const Cand& a, const Cand& b) {
      return std::make_tuple(!a.partial, -a.free, std::cref(name(a))) <
             std::make_tuple(!b.partial, -b.free, std::cref(name(b)));
    });
    int left = r.gpus;
    for (const auto& c : cands) {
      if (left == 0) break;
      const int k = std::min(c.free, left);
      left -= k;
      out.push_back({name(c), firstFree(c.h, u, k)});
    }
    return out;
  }

  std::optional<std::vector<HostGrant>> chooseMig(
      const AllocationRequest& r, const Usage& in, std::string& why,
      std::optional<std::size_t> onlyHost = std::nullopt) const {
    struct Slot {
      std::size_t h;
      std::size_t p;
      int computeSlices;
      MigProfile prof;
      int hostUsed;  // GPUs of the host in any use
    };
    std::vector<Slot> slots;
    for (std::size_t h = 0; h < hosts.size(); ++h) {
      if (!usable(h) || (onlyHost && h != *onlyHost)) continue;
      int used = 0;
      for (const auto& g : in[h]) used += g.free() ? 0 : 1;
      for (std::size_t p = 0; p < hosts[h].inv.gpus.size(); ++p) {
        const Gpu& g = hosts[h].inv.gpus[p];
        if (!g.migCapable || in[h][p].exclusive) continue;
        if (std::find(g.migProfiles.begin(), g.migProfiles.end(), r.sharing) == g.migProfiles.end())
          continue;
        auto prof = parseMigProfile(r.sharing, g);
        if (!prof) continue;
        slots.push_back({h, p, computeSlicesOf(g.model), *prof, used});
      }
    }
    // Fullest GPUs first (already partitioned), then the fullest hosts: packs slices.
    std::sort(slots.begin(), slots.end(), [&](const Slot& a, const Slot& b) {
      return std::make_tuple(-in[a.h][a.p].compute, -a.hostUsed, std::cref(hosts[a.h].inv.name),
                             a.p) < std::make_tuple(-in[b.h][b.p].compute, -b.hostUsed,
                                                    std::cref(hosts[b.h].inv.name), b.p);
    });
    std::map<std::size_t, GpuUse> touched;  // by slot position
    std::map<std::size_t, int> perHost;
    std::map<std::size_t, std::vector<int>> grants;
    std::vector<std::size_t> order;
    int left = r.gpus;
    for (std::size_t i = 0; i < slots.size() && left > 0; ++i) {
      const Slot& s = slots[i];
      GpuUse g = in[s.h][s.p];
      while (left > 0 && g.compute + s.prof.computeSlices <= s.computeSlices &&
             g.memory + s.prof.memorySlices <= kMemorySlices &&
             (r.gpusPerHost == 0 || perHost[s.h] < r.gpusPerHost)) {
        g.compute += s.prof.computeSlices;
        g.memory += s.prof.memorySlices;
        ++perHost[s.h];
        if (!grants.count(s.h)) order.push_back(s.h);
        grants[s.h].push_back(hosts[s.h].inv.gpus[s.p].index);
        --left;
      }
    }
    if (left > 0) {
      why = "capacity: " + std::to_string(r.gpus) + " MIG " + r.sharing + " instances needed, " +
            std::to_string(r.gpus - left) + " fit";
      return std::nullopt;
    }
    std::vector<HostGrant> out;
    for (std::size_t h : order) out.push_back({hosts[h].inv.name, grants[h]});
    return out;
  }

  std::optional<std::vector<HostGrant>> choose(const AllocationRequest& r, const Usage& u,
                                               std::string& why) const {
    if (r.jobClass == JobClass::kTraining) return chooseTraining(r, u, why);
    if (isExclusive(r)) return chooseExclusive(r, u, why);
    return chooseMig(r, u, why);
  }

  /// Free whole hosts (with at least `per` GPUs) and free GPUs of usable hosts, kept up to date
  /// while the preemption loop evicts and restores allocations in a simulation.
  struct SimCounts {
    int per = 0;
    int freeHosts = 0;
    long freeGpus = 0;
  };
  std::pair<int, int> contribution(std::size_t h, const Usage& u, int per) const {
    if (!usable(h)) return {0, 0};
    const int f = freeGpus(h, u);
    const int size = static_cast<int>(u[h].size());
    return {f == size && size >= per ? 1 : 0, f};
  }
  SimCounts countFree(const Usage& u, int per) const {
    SimCounts c;
    c.per = per;
    for (std::size_t h = 0; h < hosts.size(); ++h) {
      auto [whole, f] = contribution(h, u, per);
      c.freeHosts += whole;
      c.freeGpus += f;
    }
    return c;
  }
  /// applyGrant on `u`, keeping `c` in step.
  void simulate(const Allocation& a, int sign, Usage& u, SimCounts& c) const {
    std::vector<std::size_t> touched;
    for (const auto& g : a.hosts)
      if (auto it = byName.find(g.host); it != byName.end()) touched.push_back(it->second);
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (std::size_t h : touched) {
      auto [whole, f] = contribution(h, u, c.per);
      c.freeHosts -= whole;
      c.freeGpus -= f;
    }
    applyGrant(a, sign, &u);
    for (std::size_t h : touched) {
      auto [whole, f] = contribution(h, u, c.per);
      c.freeHosts += whole;
      c.freeGpus += f;
    }
  }
  /// Cheap necessary condition before a full choose() (no placer call).
  bool roughFits(const AllocationRequest& r, const SimCounts& c) const {
    if (r.jobClass == JobClass::kTraining) return c.freeHosts >= (r.gpus + c.per - 1) / c.per;
    if (isExclusive(r)) return c.freeGpus >= r.gpus;
    return true;
  }

  // --- journal -------------------------------------------------------------------------------

  void record(json rec) {
    if (!journal) return;
    rec["seq"] = journalSeq + 1;
    try {
      journal->append(rec);
    } catch (const std::exception& e) {
      throw PoolError(PoolError::Kind::kStorage, std::string("journal: ") + e.what());
    }
    ++journalSeq;
  }

  json snapshotJson() const {
    json hs = json::array(), as = json::array();
    for (const auto& h : hosts) hs.push_back(toJson(h.inv));
    for (const auto& [id, a] : allocations) as.push_back(toJson(a));
    return {{"schema", "ibfabric.pool/1"},
            {"seq", journalSeq},
            {"next_sequence", nextSequence},
            {"hosts", hs},
            {"allocations", as}};
  }

  void compactLocked() {
    if (!journal) return;
    try {
      journal->writeSnapshot(snapshotJson());
    } catch (const std::exception& e) {
      spdlog::error("pool: compaction failed (the journal keeps growing): {}", e.what());
    }
  }

  void maybeCompact() {
    if (journal &&
        journal->recordsSinceSnapshot() >= std::max<std::size_t>(options.compactEvery, 1))
      compactLocked();
  }

  void putHostLocked(PoolHost host) {
    auto it = byName.find(host.name);
    if (it == byName.end()) {
      byName[host.name] = hosts.size();
      HostEntry e;
      e.inv = std::move(host);
      e.rails.assign(e.inv.gpus.size(), -1);
      usage.emplace_back(e.inv.gpus.size());
      hosts.push_back(std::move(e));
      if (topology) joinHost(hosts.size() - 1);
      return;
    }
    HostEntry& e = hosts[it->second];
    e.inv = std::move(host);
    e.rails.assign(e.inv.gpus.size(), -1);
    usage[it->second].assign(e.inv.gpus.size(), GpuUse{});
    for (const auto& [id, a] : allocations)
      for (const auto& g : a.hosts)
        if (g.host == e.inv.name) {
          Allocation one = a;
          one.hosts = {g};
          applyGrant(one, +1, &usage);
        }
    if (topology) joinHost(it->second);
  }

  void applyRecord(const json& rec) {
    const std::string op = rec.at("op");
    if (op == "host") {
      putHostLocked(hostFromJson(rec.at("host").at("name").get<std::string>(), [&] {
        json h = rec.at("host");
        h.erase("name");
        return h;
      }()));
    } else if (op == "alloc") {
      for (const auto& v : rec.value("victims", json::array()))
        removeAllocation(v.get<std::string>());
      preemptions += rec.value("victims", json::array()).size();
      addAllocation(allocationFromJson(rec.at("allocation")));
    } else if (op == "free") {
      removeAllocation(rec.at("job").get<std::string>());
    } else if (op == "degrade") {
      auto it = allocations.find(rec.at("job").get<std::string>());
      if (it != allocations.end()) {
        it->second.state = AllocationState::kDegraded;
        it->second.degradedReason = rec.value("reason", "");
        it->second.replacement.reset();
        if (rec.contains("replacement") && rec["replacement"].is_string())
          it->second.replacement = rec["replacement"].get<std::string>();
        it->second.replacementNote = rec.value("note", "");
      }
    } else {
      throw std::runtime_error("unknown journal op " + op);
    }
  }

  void replay() {
    PoolJournal::Replay r;
    try {
      journal = std::make_unique<PoolJournal>(options.journalDir);
      r = journal->open();
    } catch (const std::exception& e) {
      throw PoolError(PoolError::Kind::kStorage, std::string("journal: ") + e.what());
    }
    tornBytes = r.tornBytes;
    if (r.tornBytes)
      spdlog::warn("pool: cut a torn journal tail of {} bytes in {}", r.tornBytes,
                   options.journalDir.string());
    try {
      if (r.snapshot) {
        const json& s = *r.snapshot;
        for (const auto& h : s.at("hosts")) {
          json body = h;
          body.erase("name");
          putHostLocked(hostFromJson(h.at("name").get<std::string>(), body));
        }
        for (const auto& a : s.at("allocations")) addAllocation(allocationFromJson(a));
        journalSeq = s.at("seq").get<std::uint64_t>();
        nextSequence = std::max(nextSequence, s.value("next_sequence", std::uint64_t(1)));
      }
      std::size_t applied = 0;
      for (const auto& rec : r.records) {
        const auto seq = rec.at("seq").get<std::uint64_t>();
        if (seq <= journalSeq) continue;  // already in the snapshot
        applyRecord(rec);
        journalSeq = seq;
        ++applied;
      }
      preemptions = 0;  // the metric counts preemptions of this process
      spdlog::info("pool: replayed {} hosts, {} allocations ({} journal records)", hosts.size(),
                   allocations.size(), applied);
    } catch (const std::exception& e) {
      throw PoolError(PoolError::Kind::kStorage,
                      "journal: cannot replay " + options.journalDir.string() + ": " + e.what());
    }
  }

  // --- fabric join and faults ----------------------------------------------------------------

  void joinHost(std::size_t idx) {
    HostEntry& e = hosts[idx];
    const Topology& t = *topology;
    const Host* th = t.findHost(e.inv.name);
    if (!th) {
      if (e.known)
        e.faults["host"] = Fault{HostHealth::kDown, e.inv.name + ": no longer in the fabric", true};
      return;
    }
    e.known = true;
    e.faults.erase("host");
    e.leaves.clear();
    e.group = -1;
    std::set<std::string> present;
    for (NodeIndex ni : th->hcas) {
      const Node& n = t.node(ni);
      const std::string hca =
          n.hcaIndex >= 0 ? "mlx5_" + std::to_string(n.hcaIndex) : toString(n.guid);
      hcaOwner[n.guid] = {idx, hca};
      bool active = false, slow = false;
      for (const auto& p : n.ports) {
        if (!p || !p->remote) continue;
        active = active || p->state == PortState::kActive;
        if (p->link && t.links()[*p->link].belowEnabled()) slow = true;
        const Node& peer = t.node(p->remote->node);
        if (peer.isSwitch()) {
          if (std::find(e.leaves.begin(), e.leaves.end(), peer.guid) == e.leaves.end())
            e.leaves.push_back(peer.guid);
          e.group = peer.group;
        }
      }
      present.insert(hca);
      e.seenHcas.insert(hca);
      for (std::size_t p = 0; p < e.inv.gpus.size(); ++p)
        if (e.inv.gpus[p].hca == hca) e.rails[p] = n.rail;
      auto f = e.faults.find(hca);
      if (!active)
        e.faults[hca] = Fault{HostHealth::kDown, e.inv.name + ": HCA " + hca + " link down", true};
      else if (slow)
        e.faults[hca] = Fault{HostHealth::kDegraded,
                              e.inv.name + ": HCA " + hca + " link below its enabled rate", true};
      else if (f != e.faults.end() &&
               (f->second.fromTopology || f->second.health == HostHealth::kDown))
        e.faults.erase(f);
    }
    for (const auto& hca : e.seenHcas)
      if (!present.count(hca))
        e.faults[hca] =
            Fault{HostHealth::kDown,
                  e.inv.name + ": HCA " + hca + " link down (gone from the fabric)", true};
  }

  /// Suggests a host to take over `bad`'s part of `a`.
  void suggest(Allocation& a, const std::string& bad) {
    a.replacement.reset();
    auto badIt = byName.find(bad);
    const HostGrant* part = nullptr;
    for (const auto& g : a.hosts)
      if (g.host == bad) part = &g;
    if (!part || badIt == byName.end()) {
      a.replacementNote = "no replacement: the host is not in the inventory";
      return;
    }
    std::set<Guid> jobLeaves;
    std::set<std::string> inJob;
    for (const auto& g : a.hosts) {
      inJob.insert(g.host);
      auto it = byName.find(g.host);
      if (it == byName.end() || (g.host != bad && !usable(it->second))) continue;
      if (g.host == bad && a.hosts.size() > 1) continue;
      jobLeaves.insert(hosts[it->second].leaves.begin(), hosts[it->second].leaves.end());
    }
    const int badGroup = hosts[badIt->second].group;
    const int need = static_cast<int>(part->gpus.size());
    using Score = std::tuple<int, int, int, std::string>;
    std::optional<Score> best;
    std::size_t bestHost = 0;
    for (std::size_t h = 0; h < hosts.size(); ++h) {
      if (!usable(h) || inJob.count(hosts[h].inv.name)) continue;
      int fit = 0;
      if (a.request.jobClass == JobClass::kTraining) {
        if (!hostFree(h, usage) || static_cast<int>(usage[h].size()) < need) continue;
      } else if (isExclusive(a.request)) {
        fit = freeGpus(h, usage);
        if (fit < need) continue;
      } else {
        AllocationRequest probe = a.request;
        probe.gpus = need;
        probe.gpusPerHost = 0;
        std::string why;
        if (!chooseMig(probe, usage, why, h)) continue;
        fit = freeGpus(h, usage);
      }
      int outside = 0;
      for (Guid l : hosts[h].leaves) outside += jobLeaves.count(l) ? 0 : 1;
      const int sameGroup = (badGroup >= 0 && hosts[h].group == badGroup) ? 0 : 1;
      Score s{outside, sameGroup, fit, hosts[h].inv.name};
      if (!best || s < *best) {
        best = s;
        bestHost = h;
      }
    }
    if (!best) {
      a.replacementNote = "no free healthy host can take " + std::to_string(need) + " GPUs";
      return;
    }
    a.replacement = hosts[bestHost].inv.name;
    const int outside = std::get<0>(*best);
    a.replacementNote = outside == 0 ? "on the job's leaves: leaf span and bottleneck unchanged"
                                     : "adds " + std::to_string(outside) + " leaf switch(es)" +
                                           (std::get<1>(*best) == 0 ? ", same leaf group" : "");
  }

  /// Marks allocations on unhealthy hosts degraded (journaled; events queued).
  void refreshDegraded() {
    for (auto& [id, a] : allocations) {
      if (a.state == AllocationState::kDegraded) continue;
      for (const auto& g : a.hosts) {
        auto it = byName.find(g.host);
        if (it == byName.end() || hosts[it->second].health() == HostHealth::kOk) continue;
        const std::string host = g.host;  // `a` (and `g` with it) is replaced below
        Allocation next = a;
        next.state = AllocationState::kDegraded;
        next.degradedReason = hosts[it->second].reason();
        suggest(next, host);
        try {
          record({{"op", "degrade"},
                  {"job", id},
                  {"reason", next.degradedReason},
                  {"replacement", next.replacement ? json(*next.replacement) : json(nullptr)},
                  {"note", next.replacementNote}});
        } catch (const PoolError& e) {
          spdlog::error("pool: {} (allocation {} degraded in memory only)", e.what(), id);
        }
        a = std::move(next);
        PoolEvent ev{id, host, a.degradedReason, a.replacement, ""};
        ev.message = "allocation " + id + " degraded: " + a.degradedReason +
                     (a.replacement ? "; suggested replacement " + *a.replacement
                                    : "; " + a.replacementNote);
        spdlog::warn("pool: {}", ev.message);
        pending.push_back(std::move(ev));
        break;
      }
    }
    maybeCompact();
  }

  void emitPending(std::unique_lock<std::mutex>& lock) {
    auto events = std::move(pending);
    pending.clear();
    lock.unlock();
    if (options.onEvent)
      for (const auto& e : events) options.onEvent(e);
  }
};

Pool::Pool(PoolOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  if (!impl_->options.journalDir.empty()) impl_->replay();
}

Pool::~Pool() = default;

void Pool::setTopology(TopologyPtr topology) {
  if (!topology) return;
  std::unique_lock lock(impl_->mu);
  impl_->topology = std::move(topology);
  for (std::size_t i = 0; i < impl_->hosts.size(); ++i) impl_->joinHost(i);
  impl_->refreshDegraded();
  impl_->emitPending(lock);
}

void Pool::observeEvent(const telemetry::Event& event) {
  bool clears = false;
  const HostHealth health = faultOf(event.type, clears);
  if (health == HostHealth::kOk && !clears) return;
  std::unique_lock lock(impl_->mu);
  auto& I = *impl_;
  std::vector<telemetry::EventEnd> ends = {event.end};
  if (event.remote) ends.push_back(*event.remote);
  bool changed = false;
  for (const auto& end : ends) {
    std::optional<std::pair<std::size_t, std::string>> owner;
    if (auto it = I.hcaOwner.find(end.node); it != I.hcaOwner.end()) owner = it->second;
    if (!owner) {  // "<host> mlx5_<n>"
      auto sp = end.description.find(' ');
      if (sp != std::string::npos) {
        auto h = I.byName.find(end.description.substr(0, sp));
        if (h != I.byName.end()) owner = std::make_pair(h->second, end.description.substr(sp + 1));
      }
    }
    if (!owner) continue;
    HostEntry& e = I.hosts[owner->first];
    if (clears) {
      auto f = e.faults.find(owner->second);
      if (f != e.faults.end() && !f->second.fromTopology) {
        e.faults.erase(f);
        changed = true;
      }
      continue;
    }
    Fault& f = e.faults[owner->second];
    if (f.health < health) {
      f = Fault{health,
                e.inv.name + ": HCA " + owner->second + " " +
                    std::string(telemetry::toString(event.type)) +
                    (event.message.empty() ? "" : " (" + event.message + ")"),
                false};
      changed = true;
    }
  }
  if (changed) I.refreshDegraded();
  I.emitPending(lock);
}

bool Pool::putHost(PoolHost host) {
  std::unique_lock lock(impl_->mu);
  auto& I = *impl_;
  auto it = I.byName.find(host.name);
  if (it != I.byName.end()) {
    if (I.hosts[it->second].inv == host) return false;
    for (const auto& [id, a] : I.allocations)
      for (const auto& g : a.hosts)
        if (g.host == host.name)
          throw PoolError(PoolError::Kind::kConflict, "host " + host.name + " has allocations (" +
                                                          id +
                                                          "): free them before changing its GPUs");
  }
  const bool created = it == I.byName.end();
  I.record({{"op", "host"}, {"host", toJson(host)}});
  I.putHostLocked(std::move(host));
  I.refreshDegraded();
  I.emitPending(lock);
  return created;
}

std::vector<PoolHostView> Pool::hosts() const {
  std::lock_guard lock(impl_->mu);
  std::vector<PoolHostView> out;
  std::map<std::string, std::vector<std::string>> jobs;
  for (const auto& [id, a] : impl_->allocations)
    for (const auto& g : a.hosts) jobs[g.host].push_back(id);
  for (std::size_t i = 0; i < impl_->hosts.size(); ++i) {
    const HostEntry& e = impl_->hosts[i];
    PoolHostView v;
    v.host = e.inv;
    v.inFabric = e.known;
    v.health = e.health();
    v.healthReason = e.known ? e.reason() : e.inv.name + ": unknown to the fabric (not used)";
    v.rails = e.rails;
    v.freeGpus = impl_->freeGpus(i, impl_->usage);
    v.allocations = jobs[e.inv.name];
    out.push_back(std::move(v));
  }
  std::sort(out.begin(), out.end(),
            [](const PoolHostView& a, const PoolHostView& b) { return a.host.name < b.host.name; });
  return out;
}

std::optional<PoolHostView> Pool::host(std::string_view name) const {
  for (auto& v : hosts())
    if (v.host.name == name) return v;
  return std::nullopt;
}

AllocationResult Pool::allocate(const AllocationRequest& request) {
  validate(request);
  std::unique_lock lock(impl_->mu);
  auto& I = *impl_;
  if (auto it = I.allocations.find(request.jobId); it != I.allocations.end()) {
    if (it->second.request == request) return AllocationResult{it->second, false, {}, {}};
    throw PoolError(PoolError::Kind::kConflict,
                    "job " + request.jobId + " already holds an allocation for another request");
  }
  if (!I.topology) throw PoolError(PoolError::Kind::kNotReady, "no fabric topology yet");
  AllocationResult result;
  for (const auto& h : I.hosts)
    if (!h.known) result.warnings.push_back(h.inv.name + ": unknown to the fabric, not used");

  const double eq = I.requestEquivalents(request);
  std::string why;
  std::optional<std::vector<HostGrant>> chosen;
  auto quota = I.quotaBlock(request.jobClass, eq, I.usedByClass);
  if (!quota) chosen = I.choose(request, I.usage, why);
  std::vector<const Allocation*> victims;
  if (!chosen) {
    std::vector<const Allocation*> cands;
    for (const auto& [id, a] : I.allocations)
      if (a.request.preemptible && a.request.priority < request.priority) cands.push_back(&a);
    // Lowest priority first; among equals the youngest (highest sequence) first.
    std::sort(cands.begin(), cands.end(), [](const Allocation* a, const Allocation* b) {
      return std::make_tuple(a->request.priority, -static_cast<std::int64_t>(a->sequence)) <
             std::make_tuple(b->request.priority, -static_cast<std::int64_t>(b->sequence));
    });
    Usage sim = I.usage;
    auto used = I.usedByClass;
    const int per = request.jobClass == JobClass::kTraining ? I.trainingPerHost(request) : 1;
    Impl::SimCounts counts = I.countFree(sim, per);
    for (const Allocation* v : cands) {
      I.simulate(*v, -1, sim, counts);
      used[v->request.jobClass] -= v->gpuEquivalents;
      victims.push_back(v);
      if (I.quotaBlock(request.jobClass, eq, used) || !I.roughFits(request, counts)) continue;
      if ((chosen = I.choose(request, sim, why))) break;
    }
    if (!chosen) {
      const std::string msg = quota && !I.quotaBlock(request.jobClass, eq, used) ? why
                              : quota                                            ? *quota
                                                                                 : why;
      throw PoolError(
          quota ? PoolError::Kind::kQuota : PoolError::Kind::kCapacity,
          msg + (cands.empty() ? std::string()
                               : " (even after preempting all " + std::to_string(cands.size()) +
                                     " lower-priority preemptible allocations)"));
    }
    // Spare victims that were not needed after all (latest first).
    for (std::size_t i = victims.size() - 1; i-- > 0;) {
      const Allocation* v = victims[i];
      I.simulate(*v, +1, sim, counts);
      used[v->request.jobClass] += v->gpuEquivalents;
      std::string w;
      std::optional<std::vector<HostGrant>> again;
      if (!I.quotaBlock(request.jobClass, eq, used) && I.roughFits(request, counts))
        again = I.choose(request, sim, w);
      if (again) {
        chosen = std::move(again);
        victims.erase(victims.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        I.simulate(*v, -1, sim, counts);
        used[v->request.jobClass] -= v->gpuEquivalents;
      }
    }
  }

  Allocation a;
  a.request = request;
  a.hosts = std::move(*chosen);
  a.sequence = I.nextSequence;
  a.created = I.now();
  a.gpuEquivalents = I.applyGrant(a, +1, nullptr);
  json victimIds = json::array();
  for (const Allocation* v : victims) victimIds.push_back(v->request.jobId);
  I.record({{"op", "alloc"}, {"allocation", toJson(a)}, {"victims", victimIds}});
  for (const Allocation* v : victims) result.victims.push_back(*v);
  for (const auto& v : result.victims) I.removeAllocation(v.request.jobId);
  I.preemptions += result.victims.size();
  I.addAllocation(a);
  I.maybeCompact();
  result.allocation = std::move(a);
  result.created = true;
  return result;
}

std::optional<Allocation> Pool::get(std::string_view jobId) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->allocations.find(jobId);
  if (it == impl_->allocations.end()) return std::nullopt;
  return it->second;
}

std::vector<Allocation> Pool::list() const {
  std::lock_guard lock(impl_->mu);
  std::vector<Allocation> out;
  for (const auto& [id, a] : impl_->allocations) out.push_back(a);
  std::sort(out.begin(), out.end(),
            [](const Allocation& a, const Allocation& b) { return a.sequence < b.sequence; });
  return out;
}

bool Pool::release(std::string_view jobId) {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->allocations.find(jobId);
  if (it == impl_->allocations.end()) return false;
  const std::string id(jobId);
  impl_->record({{"op", "free"}, {"job", id}});
  impl_->removeAllocation(id);
  impl_->maybeCompact();
  return true;
}

PoolUsage Pool::usage() const {
  std::lock_guard lock(impl_->mu);
  const auto& I = *impl_;
  PoolUsage u;
  u.now = I.now();
  u.totalGpus = I.totalGpus();
  for (std::size_t h = 0; h < I.hosts.size(); ++h) {
    if (I.usable(h)) u.usableGpus += static_cast<int>(I.hosts[h].inv.gpus.size());
    if (!I.hosts[h].known) u.unknownHosts.push_back(I.hosts[h].inv.name);
  }
  u.byClass[JobClass::kTraining];
  u.byClass[JobClass::kInference];
  for (const auto& [id, a] : I.allocations) {
    auto& c = u.byClass[a.request.jobClass];
    c.gpus += a.gpuEquivalents;
    ++c.allocations;
    if (a.state == AllocationState::kDegraded) ++c.degradedAllocations;
    u.usedGpus += a.gpuEquivalents;
  }
  for (const auto& rule : I.options.quotas) {
    QuotaStatus s;
    s.rule = rule;
    s.active = rule.activeAt(u.now);
    s.limitGpus = rule.maxFraction * u.totalGpus;
    s.usedGpus = u.byClass[rule.jobClass].gpus;
    s.exceeded = s.active && s.usedGpus > s.limitGpus + 1e-9;
    u.quotas.push_back(s);
  }
  u.preemptions = I.preemptions;
  u.journalRecords = I.journal ? I.journal->recordsSinceSnapshot() : 0;
  u.tornBytesAtStart = I.tornBytes;
  return u;
}

void Pool::compact() {
  std::lock_guard lock(impl_->mu);
  impl_->compactLocked();
}

}  // namespace ibfabric::scheduler_hooks
