#include "discovery/topogen.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

namespace ibfabric {
namespace {

constexpr std::uint32_t kMellanoxVendorId = 0x02c9;
constexpr std::uint32_t kConnectX6DeviceId = 0x101b;  // MT28908 (ConnectX-6), 4123
constexpr std::uint64_t kCaGuidBase = 0x100000;
constexpr std::uint64_t kSwitchGuidBase = 0x200000;
constexpr int kMaxUnicastLids = 0xBFFF;

[[noreturn]] void fail(const std::string& message) { throw TopoGenError(message); }

int digits(int n) { return static_cast<int>(std::to_string(n).size()); }

std::string padded(int value, int width) {
  std::string s = std::to_string(value);
  return std::string(static_cast<std::size_t>(std::max(0, width - static_cast<int>(s.size()))),
                     '0') +
         s;
}

// Builds the fabric: switches first (GUIDs 0x200000 + i), then CAs (0x100000 + 2i).
class Builder {
 public:
  explicit Builder(LinkRate rate) : rate_(rate) {}

  std::size_t addSwitch(const std::string& id, const SwitchModel& model) {
    NetNode n;
    n.type = NodeType::kSwitch;
    n.numPorts = model.ports;
    n.id = id;
    n.desc = "MF0;" + id + ":" + std::string(model.partNumber) + "/U1";
    n.guid = Guid{kSwitchGuidBase + switches_++};
    n.vendorId = kMellanoxVendorId;
    n.deviceId = model.deviceId;
    n.enhancedPort0 = true;
    return add(std::move(n));
  }

  std::size_t addCa(const std::string& host, int hca) {
    NetNode n;
    n.type = NodeType::kCa;
    n.numPorts = 1;
    n.id = host + "-mlx5_" + std::to_string(hca);
    n.desc = host + " mlx5_" + std::to_string(hca);
    n.guid = Guid{kCaGuidBase + 2 * cas_++};
    n.vendorId = kMellanoxVendorId;
    n.deviceId = kConnectX6DeviceId;
    return add(std::move(n));
  }

  void link(std::size_t a, int pa, std::size_t b, int pb) {
    end(a, pa, b, pb);
    end(b, pb, a, pa);
  }

  NetFabric take() {
    for (auto& n : fabric_.nodes)
      std::sort(n.ports.begin(), n.ports.end(),
                [](const NetPort& a, const NetPort& b) { return a.port < b.port; });
    fabric_.reindex();
    return std::move(fabric_);
  }

 private:
  std::size_t add(NetNode n) {
    fabric_.nodes.push_back(std::move(n));
    return fabric_.nodes.size() - 1;
  }

  static std::optional<Guid> portGuid(const NetNode& n, int port) {
    if (n.type == NodeType::kSwitch) return std::nullopt;
    return Guid{n.guid->value() + static_cast<std::uint64_t>(port)};
  }

  void end(std::size_t a, int pa, std::size_t b, int pb) {
    NetNode& na = fabric_.nodes[a];
    const NetNode& nb = fabric_.nodes[b];
    NetPort p;
    p.port = PortNum{static_cast<std::uint8_t>(pa)};
    p.remoteId = nb.id;
    p.remotePort = PortNum{static_cast<std::uint8_t>(pb)};
    p.remotePortGuid = portGuid(nb, pb);
    p.remoteDesc = nb.desc;
    p.rate = rate_;
    p.portGuid = portGuid(na, pa);
    na.ports.push_back(std::move(p));
  }

  LinkRate rate_;
  NetFabric fabric_;
  std::uint64_t switches_ = 0;
  std::uint64_t cas_ = 0;
};

// Option bookkeeping: which options a preset takes, and range checks with option names.
struct OptionRef {
  std::string_view flag;
  const std::optional<int>* value;
};

class Checker {
 public:
  Checker(std::string_view preset, const TopoOptions& o) : preset_(preset) {
    all_ = {{"--leaves", &o.leaves},
            {"--spines", &o.spines},
            {"--hosts-per-leaf", &o.hostsPerLeaf},
            {"--links-per-spine", &o.linksPerSpine},
            {"--hcas-per-host", &o.hcasPerHost},
            {"--pods", &o.pods},
            {"--leaves-per-pod", &o.leavesPerPod},
            {"--spines-per-pod", &o.spinesPerPod},
            {"--cores", &o.cores},
            {"--links-per-core", &o.linksPerCore},
            {"--sus", &o.sus}};
  }

  // Rejects options the preset does not take.
  void allow(std::initializer_list<std::string_view> flags) const {
    for (const auto& r : all_) {
      if (!r.value->has_value()) continue;
      if (std::find(flags.begin(), flags.end(), r.flag) == flags.end())
        fail("preset " + std::string(preset_) + " does not take " + std::string(r.flag));
    }
  }

  int required(std::string_view flag, int lo, int hi) {
    const auto& v = *find(flag);
    if (!v) fail("preset " + std::string(preset_) + " needs " + std::string(flag));
    return ranged(flag, *v, lo, hi);
  }

  int optional(std::string_view flag, int dflt, int lo, int hi) {
    const auto& v = *find(flag);
    return ranged(flag, v.value_or(dflt), lo, hi);
  }

  // "--leaves 4 --spines 2 ..." with every value used (defaults included).
  std::string commandLine() const { return line_; }

 private:
  const std::optional<int>* find(std::string_view flag) const {
    for (const auto& r : all_)
      if (r.flag == flag) return r.value;
    fail("internal: unknown option " + std::string(flag));
  }

  int ranged(std::string_view flag, int v, int lo, int hi) {
    if (v < lo || v > hi)
      fail(std::string(flag) + " " + std::to_string(v) + " is out of range (" + std::to_string(lo) +
           ".." + std::to_string(hi) + ")");
    line_ += " " + std::string(flag) + " " + std::to_string(v);
    return v;
  }

  std::string_view preset_;
  std::vector<OptionRef> all_;
  std::string line_;
};

// The smallest model with `needed` ports, or the one asked for (which must fit).
SwitchModel pickModel(const std::string& requested, int needed) {
  const auto& models = switchModels();
  if (!requested.empty()) {
    auto it = std::find_if(models.begin(), models.end(),
                           [&](const SwitchModel& m) { return m.name == requested; });
    if (it == models.end()) fail("unknown switch model '" + requested + "' (qm8790, qm9790)");
    if (it->ports < needed)
      fail("switches need " + std::to_string(needed) + " ports; " + requested + " has " +
           std::to_string(it->ports));
    return *it;
  }
  for (const auto& m : models)
    if (m.ports >= needed) return m;
  fail("switches would need " + std::to_string(needed) + " ports; the largest model (" +
       std::string(models.back().name) + ") has " + std::to_string(models.back().ports));
}

LinkRate parseFabricRate(std::string_view text, std::string_view what) {
  auto r = parseLinkRate(text);
  if (!r) fail(std::string(what) + ": '" + std::string(text) + "' is not a link rate like 4xHDR");
  if (r->speed > LinkSpeed::kHdr)
    fail(std::string(what) + ": " + r->toString() + " is beyond HDR, which ibsim 0.10 cannot run");
  return *r;
}

void checkLidBudget(long switches, long cas) {
  if (switches + cas > kMaxUnicastLids)
    fail("the fabric would need " + std::to_string(switches + cas) + " LIDs; a subnet has " +
         std::to_string(kMaxUnicastLids));
}

std::string hostName(const std::string& prefix, int index, int total) {
  return prefix + padded(index, std::max(4, digits(total)));
}

// ---- two-level ---------------------------------------------------------------------------------

GeneratedTopology twoLevel(const TopoOptions& o, LinkRate rate) {
  Checker c("two-level", o);
  c.allow({"--leaves", "--spines", "--hosts-per-leaf", "--links-per-spine", "--hcas-per-host"});
  int L = c.required("--leaves", 1, 4096);
  int S = c.required("--spines", 1, 4096);
  int H = c.required("--hosts-per-leaf", 1, 254);
  int K = c.optional("--links-per-spine", 1, 1, 254);
  int N = c.optional("--hcas-per-host", 1, 1, 16);
  checkLidBudget(static_cast<long>(L) + S, static_cast<long>(L) * H * N);
  SwitchModel model = pickModel(o.switchModel, std::max(H * N + S * K, L * K));

  GeneratedTopology g;
  g.preset = "two-level";
  g.commandLine = c.commandLine();
  g.hosts = L * H;
  g.hcasPerHost = N;
  g.leaves = L;
  g.spines = S;
  g.model = model;
  Builder b(rate);
  int lw = std::max(2, digits(L)), sw = std::max(2, digits(S));
  std::vector<std::size_t> leaf, spine;
  for (int l = 0; l < L; ++l) leaf.push_back(b.addSwitch("leaf-" + padded(l + 1, lw), model));
  for (int s = 0; s < S; ++s) spine.push_back(b.addSwitch("spine-" + padded(s + 1, sw), model));
  // Leaf ports: hosts first (host h, HCA j at h*N + j + 1), then K up-links per spine.
  for (int l = 0; l < L; ++l)
    for (int s = 0; s < S; ++s)
      for (int k = 0; k < K; ++k) b.link(leaf[l], H * N + s * K + k + 1, spine[s], l * K + k + 1);
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h) {
      std::string host = hostName(o.hostPrefix, l * H + h + 1, g.hosts);
      for (int j = 0; j < N; ++j) b.link(b.addCa(host, j), 1, leaf[l], h * N + j + 1);
    }
  g.fabric = b.take();
  return g;
}

// ---- three-level -------------------------------------------------------------------------------

GeneratedTopology threeLevel(const TopoOptions& o, LinkRate rate) {
  Checker c("three-level", o);
  c.allow({"--pods", "--leaves-per-pod", "--spines-per-pod", "--cores", "--hosts-per-leaf",
           "--links-per-spine", "--links-per-core", "--hcas-per-host"});
  int P = c.required("--pods", 1, 1024);
  int L = c.required("--leaves-per-pod", 1, 254);
  int S = c.required("--spines-per-pod", 1, 254);
  int C = c.required("--cores", 1, 4096);
  int H = c.required("--hosts-per-leaf", 1, 254);
  int K = c.optional("--links-per-spine", 1, 1, 254);
  int K2 = c.optional("--links-per-core", 1, 1, 254);
  int N = c.optional("--hcas-per-host", 1, 1, 16);
  if (C % S != 0)
    fail("--cores " + std::to_string(C) + " must be a multiple of --spines-per-pod " +
         std::to_string(S) + " (spine j of every pod connects to core group j)");
  int G = C / S;  // cores per group
  checkLidBudget(static_cast<long>(P) * (L + S) + C, static_cast<long>(P) * L * H * N);
  SwitchModel model = pickModel(o.switchModel, std::max({H * N + S * K, L * K + G * K2, P * K2}));

  GeneratedTopology g;
  g.preset = "three-level";
  g.commandLine = c.commandLine();
  g.hosts = P * L * H;
  g.hcasPerHost = N;
  g.leaves = P * L;
  g.spines = P * S;
  g.cores = C;
  g.model = model;
  Builder b(rate);
  int lw = std::max(2, digits(L)), sw = std::max(2, digits(S)), cw = std::max(2, digits(C));
  std::vector<std::size_t> leaf, spine, core;
  for (int p = 0; p < P; ++p)
    for (int l = 0; l < L; ++l)
      leaf.push_back(
          b.addSwitch("leaf-p" + std::to_string(p + 1) + "-" + padded(l + 1, lw), model));
  for (int p = 0; p < P; ++p)
    for (int s = 0; s < S; ++s)
      spine.push_back(
          b.addSwitch("spine-p" + std::to_string(p + 1) + "-" + padded(s + 1, sw), model));
  for (int x = 0; x < C; ++x) core.push_back(b.addSwitch("core-" + padded(x + 1, cw), model));
  for (int p = 0; p < P; ++p) {
    for (int l = 0; l < L; ++l)
      for (int s = 0; s < S; ++s)
        for (int k = 0; k < K; ++k)
          b.link(leaf[p * L + l], H * N + s * K + k + 1, spine[p * S + s], l * K + k + 1);
    // Spine s: down-links first, then K2 up-links to each core of group s.
    for (int s = 0; s < S; ++s)
      for (int m = 0; m < G; ++m)
        for (int k = 0; k < K2; ++k)
          b.link(spine[p * S + s], L * K + m * K2 + k + 1, core[s * G + m], p * K2 + k + 1);
  }
  for (int l = 0; l < P * L; ++l)
    for (int h = 0; h < H; ++h) {
      std::string host = hostName(o.hostPrefix, l * H + h + 1, g.hosts);
      for (int j = 0; j < N; ++j) b.link(b.addCa(host, j), 1, leaf[l], h * N + j + 1);
    }
  g.fabric = b.take();
  return g;
}

// ---- superpod ----------------------------------------------------------------------------------

constexpr int kNodesPerSu = 32;
constexpr int kRails = 8;
constexpr int kLeafUp = 32;  // leaf: 32 down (one per node of the SU), 32 up

GeneratedTopology superpod(const TopoOptions& o, LinkRate rate) {
  Checker c("superpod", o);
  c.allow({"--sus"});
  int N = c.required("--sus", 1, 64);
  SwitchModel model = pickModel(o.switchModel.empty() ? "qm9790" : o.switchModel, 64);

  GeneratedTopology g;
  g.preset = "superpod";
  g.commandLine = c.commandLine();
  g.hosts = N * kNodesPerSu;
  g.hcasPerHost = kRails;
  g.leaves = N * kRails;
  g.model = model;
  Builder b(rate);
  std::vector<std::size_t> leaf, spine, core;  // leaf[su * 8 + rail]
  for (int su = 0; su < N; ++su)
    for (int r = 0; r < kRails; ++r)
      leaf.push_back(
          b.addSwitch("leaf-su" + std::to_string(su + 1) + "-r" + std::to_string(r + 1), model));

  if (N <= 8) {
    // Two levels: every leaf to every spine with k links; 32 / k spines, each with 8N*k <= 64
    // down-links.
    int k = 8;
    while (kRails * N * k > 64) k /= 2;
    int S = kLeafUp / k;
    g.spines = S;
    for (int s = 0; s < S; ++s) spine.push_back(b.addSwitch("spine-" + padded(s + 1, 2), model));
    for (int l = 0; l < N * kRails; ++l)
      for (int s = 0; s < S; ++s)
        for (int j = 0; j < k; ++j)
          b.link(leaf[l], kNodesPerSu + s * k + j + 1, spine[s], l * k + j + 1);
  } else {
    // Three levels: 8 spines per SU (each leaf of the SU: 4 links to each), 32 down/32 up;
    // spine j of every SU connects to core group j (c cores, 32/c links each), so a core has
    // N*32/c down-links. c is the smallest divisor of 32 that keeps that within 64 ports.
    int cg = 1;
    while (N * (32 / cg) > 64) cg *= 2;
    int perCore = 32 / cg;
    g.spines = N * kRails;
    g.cores = kRails * cg;
    for (int su = 0; su < N; ++su)
      for (int s = 0; s < kRails; ++s)
        spine.push_back(
            b.addSwitch("spine-su" + std::to_string(su + 1) + "-" + std::to_string(s + 1), model));
    for (int x = 0; x < g.cores; ++x)
      core.push_back(b.addSwitch("core-" + padded(x + 1, 3), model));
    constexpr int kLinksLeafSpine = kLeafUp / kRails;  // 4
    for (int su = 0; su < N; ++su) {
      for (int r = 0; r < kRails; ++r)
        for (int s = 0; s < kRails; ++s)
          for (int j = 0; j < kLinksLeafSpine; ++j)
            b.link(leaf[su * kRails + r], kNodesPerSu + s * kLinksLeafSpine + j + 1,
                   spine[su * kRails + s], r * kLinksLeafSpine + j + 1);
      for (int s = 0; s < kRails; ++s)
        for (int m = 0; m < cg; ++m)
          for (int j = 0; j < perCore; ++j)
            b.link(spine[su * kRails + s], 32 + m * perCore + j + 1, core[s * cg + m],
                   su * perCore + j + 1);
    }
  }
  checkLidBudget(g.leaves + g.spines + g.cores, static_cast<long>(g.hosts) * kRails);
  // Node i of SU s is host s*32 + i + 1; its HCA mlx5_r is on rail r: leaf-su<s>-r<r+1>, port i+1.
  for (int su = 0; su < N; ++su)
    for (int i = 0; i < kNodesPerSu; ++i) {
      std::string host = hostName(o.hostPrefix, su * kNodesPerSu + i + 1, g.hosts);
      for (int r = 0; r < kRails; ++r) b.link(b.addCa(host, r), 1, leaf[su * kRails + r], i + 1);
    }
  g.fabric = b.take();
  return g;
}

void applyDegrade(GeneratedTopology& g, const TopoOptions& o, LinkRate base) {
  for (const auto& text : o.degrade) {
    LinkOverride d = parseLinkOverride(text, base);
    if (d.rate.speed > LinkSpeed::kHdr)
      fail("--degrade " + text + ": beyond HDR, which ibsim 0.10 cannot run");
    const NetNode* n = g.fabric.find(d.nodeId);
    if (!n) fail("--degrade " + text + ": no node \"" + d.nodeId + "\"");
    const NetPort* p = n->port(d.port);
    if (!p) fail("--degrade " + text + ": port " + toString(d.port) + " is not linked");
    std::string remote = p->remoteId;
    PortNum rp = p->remotePort;
    for (auto& node : g.fabric.nodes) {
      for (auto& port : node.ports) {
        if ((node.id == d.nodeId && port.port == d.port) || (node.id == remote && port.port == rp))
          port.rate = d.rate;
      }
    }
    g.degraded.push_back(d);
  }
}

}  // namespace

const std::vector<SwitchModel>& switchModels() {
  static const std::vector<SwitchModel> kModels{
      {"qm8790", "MQM8790-HS2F", 40, 0xd2f0},  // Quantum HDR, 54000
      {"qm9790", "MQM9790-NS2F", 64, 0xd2f2},  // Quantum-2, 54002
  };
  return kModels;
}

LinkOverride parseLinkOverride(std::string_view text, LinkRate base) {
  auto bad = [&](const std::string& why) {
    fail("--degrade '" + std::string(text) + "': " + why + " (expected ID[PORT]=RATE, e.g. " +
         "leaf-su1-r1[33]=1x)");
  };
  auto eq = text.rfind('=');
  if (eq == std::string_view::npos) bad("missing '='");
  std::string_view left = text.substr(0, eq), right = text.substr(eq + 1);
  auto lb = left.rfind('[');
  if (lb == std::string_view::npos || left.back() != ']') bad("missing [PORT]");
  std::string_view id = left.substr(0, lb);
  if (id.size() >= 2 && id.front() == '"' && id.back() == '"') id = id.substr(1, id.size() - 2);
  if (id.empty()) bad("empty node id");
  auto port = parsePortNum(left.substr(lb + 1, left.size() - lb - 2));
  if (!port || port->value() == 0) bad("bad port number");
  LinkOverride d{std::string(id), *port, base};
  if (auto w = parseLinkWidth(right)) {
    d.rate.width = *w;
  } else if (auto r = parseLinkRate(right)) {
    d.rate = *r;
  } else {
    bad("'" + std::string(right) + "' is neither a width (1x) nor a rate (1xHDR)");
  }
  return d;
}

int GeneratedTopology::ibsimNodes() const { return static_cast<int>(fabric.nodes.size()); }

int GeneratedTopology::ibsimSwitches() const { return static_cast<int>(fabric.switchCount()); }

int GeneratedTopology::ibsimPorts() const {
  int ports = 0;
  for (const auto& n : fabric.nodes) ports += n.numPorts + (n.type == NodeType::kSwitch ? 1 : 0);
  return ports;
}

std::string GeneratedTopology::headerComment() const {
  // Lines stay well under ibsim's 255-character limit: long option lists wrap.
  std::string s = "# Generated by: ibfabric topo gen --preset " + preset + "\n";
  std::string line = "#  ";
  std::size_t pos = 0;
  while (pos < commandLine.size()) {
    // Options are " --flag value" (values without spaces, --degrade quoted without spaces).
    auto next = commandLine.find(" --", pos + 1);
    std::string opt = commandLine.substr(pos, next == std::string::npos ? next : next - pos);
    if (line.size() + opt.size() > 96 && line != "#  ") {
      s += line + "\n";
      line = "#  ";
    }
    line += opt;
    pos = next == std::string::npos ? commandLine.size() : next;
  }
  if (line != "#  ") s += line + "\n";
  s += "# " + std::to_string(fabric.switchCount()) + " switches (" + std::to_string(leaves) +
       " leaves, " + std::to_string(spines) + " spines, " + std::to_string(cores) + " cores; " +
       std::to_string(model.ports) + "-port " + std::string(model.partNumber) + ")\n";
  s += "# " + std::to_string(fabric.caCount()) + " HCAs (" + std::to_string(hosts) + " hosts x " +
       std::to_string(hcasPerHost) + "), " + std::to_string(fabric.linkCount()) + " links at " +
       rate.toString() + "\n";
  for (const auto& d : degraded)
    s += "# degraded: \"" + d.nodeId + "\"[" + toString(d.port) + "] and its peer run at " +
         d.rate.toString() + "\n";
  s += "# ibsim sizing: -N " + std::to_string(ibsimNodes()) + " -S " +
       std::to_string(ibsimSwitches()) + " -P " + std::to_string(ibsimPorts()) +
       " (defaults 2048 / 256 / 13312)\n";
  return s;
}

std::vector<std::string_view> topoPresets() { return {"two-level", "three-level", "superpod"}; }

GeneratedTopology generateTopology(std::string_view preset, const TopoOptions& options) {
  LinkRate rate = parseFabricRate(options.rate, "--rate");
  if (options.hostPrefix.empty() || options.hostPrefix.size() > 40 ||
      options.hostPrefix.find_first_of("\"#@ \t[]=") != std::string::npos)
    fail("--host-prefix '" + options.hostPrefix + "' must be 1..40 characters without spaces, " +
         "quotes, '#', '@', '=' or brackets");
  GeneratedTopology g;
  if (preset == "two-level") {
    g = twoLevel(options, rate);
  } else if (preset == "three-level") {
    g = threeLevel(options, rate);
  } else if (preset == "superpod") {
    g = superpod(options, rate);
  } else {
    fail("unknown preset '" + std::string(preset) + "' (two-level, three-level, superpod)");
  }
  g.rate = rate;
  if (options.rate != "4xHDR") g.commandLine += " --rate " + rate.toString();
  if (options.hostPrefix != "dgx") g.commandLine += " --host-prefix " + options.hostPrefix;
  if (!options.switchModel.empty()) g.commandLine += " --switch-model " + options.switchModel;
  applyDegrade(g, options, rate);
  for (const auto& d : g.degraded)
    g.commandLine +=
        " --degrade '" + d.nodeId + "[" + toString(d.port) + "]=" + d.rate.toString() + "'";
  return g;
}

}  // namespace ibfabric
