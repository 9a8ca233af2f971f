#include "discovery/crawler.h"

#include <infiniband/ibnetdisc.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "discovery/node_name_map.h"

namespace ibfabric {
namespace {

// PortInfo CapabilityMask bit 14: IsExtendedSpeedsSupported (LinkSpeedExt* fields valid).
constexpr std::uint32_t kCapExtendedSpeeds = 1u << 14;

struct FabricDeleter {
  void operator()(ibnd_fabric_t* f) const { ibnd_destroy_fabric(f); }
};
using FabricPtr = std::unique_ptr<ibnd_fabric_t, FabricDeleter>;

std::uint32_t field(const std::uint8_t* info, MAD_FIELDS f) {
  return mad_get_field(const_cast<std::uint8_t*>(info), 0, f);
}
std::uint64_t field64(const std::uint8_t* info, MAD_FIELDS f) {
  return mad_get_field64(const_cast<std::uint8_t*>(info), 0, f);
}

NodeType nodeType(int t) {
  switch (t) {
    case IB_NODE_SWITCH:
      return NodeType::kSwitch;
    case IB_NODE_ROUTER:
      return NodeType::kRouter;
    default:
      return NodeType::kCa;
  }
}

std::optional<LinkWidth> width(std::uint32_t bit) {
  switch (bit) {
    case 1:
      return LinkWidth::k1x;
    case 2:
      return LinkWidth::k4x;
    case 4:
      return LinkWidth::k8x;
    case 8:
      return LinkWidth::k12x;
    case 16:
      return LinkWidth::k2x;
    default:
      return std::nullopt;
  }
}

// LinkSpeed{Supported,Enabled,Active}: bit 0 SDR, 1 DDR, 2 QDR.
SpeedMask classicSpeeds(std::uint32_t bits) {
  SpeedMask m = 0;
  if (bits & 1) m |= speedBit(LinkSpeed::kSdr);
  if (bits & 2) m |= speedBit(LinkSpeed::kDdr);
  if (bits & 4) m |= speedBit(LinkSpeed::kQdr);
  return m;
}

// LinkSpeedExt{Supported,Enabled,Active}: bit 0 FDR, 1 EDR, 2 HDR, 3 NDR.
SpeedMask extendedSpeeds(std::uint32_t bits) {
  SpeedMask m = 0;
  if (bits & 1) m |= speedBit(LinkSpeed::kFdr);
  if (bits & 2) m |= speedBit(LinkSpeed::kEdr);
  if (bits & 4) m |= speedBit(LinkSpeed::kHdr);
  if (bits & 8) m |= speedBit(LinkSpeed::kNdr);
  return m;
}

bool hasMlnxExtInfo(const ibnd_port_t* p) {
  for (auto b : p->ext_info)
    if (b) return true;
  return false;
}

Port convertPort(const ibnd_node_t* node, const ibnd_port_t* p) {
  const std::uint8_t* info = p->info;
  Port out;
  out.num = PortNum{static_cast<std::uint8_t>(p->portnum)};
  out.guid = Guid{p->guid};
  out.lid = Lid{p->base_lid};
  out.lmc = p->lmc;
  out.state = static_cast<PortState>(field(info, IB_PORT_STATE_F) & 0xF);
  out.physState = static_cast<PhysPortState>(field(info, IB_PORT_PHYS_STATE_F) & 0xF);
  out.widthSupported = static_cast<WidthMask>(field(info, IB_PORT_LINK_WIDTH_SUPPORTED_F));
  out.widthEnabled = static_cast<WidthMask>(field(info, IB_PORT_LINK_WIDTH_ENABLED_F));

  // A switch's external ports share port 0's CapabilityMask.
  std::uint32_t capMask = field(info, IB_PORT_CAPMASK_F);
  if (node->type == IB_NODE_SWITCH && p->portnum != 0 && node->ports && node->ports[0])
    capMask = field(node->ports[0]->info, IB_PORT_CAPMASK_F);
  bool ext = (capMask & kCapExtendedSpeeds) != 0;

  out.speedSupported = classicSpeeds(field(info, IB_PORT_LINK_SPEED_SUPPORTED_F));
  out.speedEnabled = classicSpeeds(field(info, IB_PORT_LINK_SPEED_ENABLED_F));
  std::optional<LinkSpeed> active;
  if (auto a = classicSpeeds(field(info, IB_PORT_LINK_SPEED_ACTIVE_F))) active = fastestSpeed(a);
  if (ext) {
    out.speedSupported |= extendedSpeeds(field(info, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F));
    out.speedEnabled |= extendedSpeeds(field(info, IB_PORT_LINK_SPEED_EXT_ENABLED_F));
    if (auto a = extendedSpeeds(field(info, IB_PORT_LINK_SPEED_EXT_ACTIVE_F)))
      active = fastestSpeed(a);
  }
  if (hasMlnxExtInfo(p)) {
    // Mellanox ExtendedPortInfo LinkSpeed*: bit 0 FDR10.
    const std::uint8_t* x = p->ext_info;
    if (field(x, IB_MLNX_EXT_PORT_LINK_SPEED_SUPPORTED_F) & 1)
      out.speedSupported |= speedBit(LinkSpeed::kFdr10);
    if (field(x, IB_MLNX_EXT_PORT_LINK_SPEED_ENABLED_F) & 1)
      out.speedEnabled |= speedBit(LinkSpeed::kFdr10);
    if ((field(x, IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F) & 1) && active < LinkSpeed::kFdr)
      active = LinkSpeed::kFdr10;
  }
  auto w = width(field(info, IB_PORT_LINK_WIDTH_ACTIVE_F));
  // A switch's port 0 is virtual: it has no link and no meaningful rate.
  bool cable = node->type != IB_NODE_SWITCH || p->portnum != 0;
  if (cable && out.state != PortState::kDown && out.state != PortState::kNoChange && w && active)
    out.activeRate = LinkRate{*w, *active};
  return out;
}

std::string description(const ibnd_node_t* n) {
  std::size_t len = strnlen(n->nodedesc, sizeof n->nodedesc);
  std::string d(n->nodedesc, len);
  for (char& c : d)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return d;
}

// Converts libibnetdisc's fabric into a snapshot. Cables are recorded from the lower
// (GUID, port) end only.
TopologyPtr convert(const ibnd_fabric_t& fabric, CrawlStats stats,
                    std::shared_ptr<const NodeNameMap> map) {
  auto started = std::chrono::steady_clock::now();
  TopologyBuilder b;
  std::size_t count = 0;
  for (const ibnd_node_t* n = fabric.nodes; n; n = n->next) ++count;
  b.reserve(count);
  for (const ibnd_node_t* n = fabric.nodes; n; n = n->next) {
    TopologyBuilder::NodeInfo info;
    info.type = nodeType(n->type);
    info.guid = Guid{field64(n->info, IB_NODE_GUID_F)};
    info.sysImageGuid = Guid{field64(n->info, IB_NODE_SYSTEM_GUID_F)};
    info.nodeDescription = description(n);
    info.vendorId = field(n->info, IB_NODE_VENDORID_F);
    info.deviceId = field(n->info, IB_NODE_DEVID_F);
    info.revision = field(n->info, IB_NODE_REVISION_F);
    info.numPorts = static_cast<int>(field(n->info, IB_NODE_NPORTS_F));
    b.addNode(info);
  }
  for (const ibnd_node_t* n = fabric.nodes; n; n = n->next) {
    if (!n->ports) continue;
    Guid guid{n->guid};
    for (int i = 0; i <= n->numports; ++i) {
      const ibnd_port_t* p = n->ports[i];
      if (!p) continue;
      b.addPort(guid, convertPort(n, p));
    }
  }
  for (const ibnd_node_t* n = fabric.nodes; n; n = n->next) {
    if (!n->ports) continue;
    for (int i = 1; i <= n->numports; ++i) {
      const ibnd_port_t* p = n->ports[i];
      if (!p || !p->remoteport || !p->remoteport->node) continue;
      const ibnd_port_t* r = p->remoteport;
      if (std::pair(r->node->guid, r->portnum) < std::pair(n->guid, p->portnum)) continue;
      b.connect(Guid{n->guid}, PortNum{static_cast<std::uint8_t>(p->portnum)}, Guid{r->node->guid},
                PortNum{static_cast<std::uint8_t>(r->portnum)});
    }
  }
  if (map) b.setNodeNameMap(std::move(map));
  stats.buildTime = std::chrono::steady_clock::now() - started;  // build() adds its own part
  b.setStats(std::move(stats));
  return b.build();
}

// umad devices that really exist: umad_get_cas_names() invents a default name when sysfs has
// none, so each name is confirmed with umad_get_ca().
std::vector<std::string> umadDevices() {
  char names[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
  std::memset(names, 0, sizeof names);
  int n = umad_get_cas_names(names, UMAD_MAX_DEVICES);
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    umad_ca_t ca;
    std::memset(&ca, 0, sizeof ca);
    if (umad_get_ca(names[i], &ca) < 0) continue;
    umad_release_ca(&ca);
    out.emplace_back(names[i]);
  }
  return out;
}

class SmpCrawler final : public TopologySource {
 public:
  explicit SmpCrawler(CrawlOptions options) : options_(std::move(options)) {}

  std::string describe() const override {
    return "ibnetdisc " + (options_.ca.empty() ? std::string("default") : options_.ca) + ":" +
           std::to_string(options_.caPort);
  }

  TopologyPtr discover() override {
    if (umad_init() < 0) throw CrawlError("cannot initialise umad (is the ib_umad module loaded?)");
    auto devices = umadDevices();
    if (devices.empty())
      throw CrawlError(
          "no InfiniBand device found (no umad device; for a simulated fabric run under "
          "`ibfabric sim run`, or start ibsim and preload umad2sim)");
    std::string ca = options_.ca;
    if (!ca.empty() && std::find(devices.begin(), devices.end(), ca) == devices.end())
      throw CrawlError("no InfiniBand device named \"" + ca + "\" (found: " + join(devices) + ")");

    ibnd_config_t cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.max_smps = options_.maxSmps;
    cfg.timeout_ms = options_.timeoutMs;
    cfg.retries = options_.retries;
    cfg.max_hops = options_.maxHops;
    if (options_.mellanoxExtPortInfo) cfg.flags |= IBND_CONFIG_MLX_EPI;

    std::vector<char> caName(ca.begin(), ca.end());
    caName.push_back('\0');
    auto started = std::chrono::steady_clock::now();
    FabricPtr fabric(
        ibnd_discover_fabric(ca.empty() ? nullptr : caName.data(), options_.caPort, nullptr, &cfg));
    auto crawlTime = std::chrono::steady_clock::now() - started;
    if (!fabric)
      throw CrawlError("fabric discovery failed on " + (ca.empty() ? devices.front() : ca) +
                       " (port " + std::to_string(options_.caPort) +
                       "): no answer from the subnet (is the port up and the simulator running?)");

    CrawlStats stats;
    // The device actually crawled from (libibnetdisc takes the first one when none is named).
    stats.source = "ibnetdisc " + (ca.empty() ? devices.front() : ca) +
                   (options_.caPort ? ":" + std::to_string(options_.caPort) : "");
    stats.crawlTime = std::chrono::duration_cast<std::chrono::nanoseconds>(crawlTime);
    stats.madsUsed = fabric->total_mads_used;
    stats.maxHops = static_cast<int>(fabric->maxhops_discovered);
    auto topo = convert(*fabric, std::move(stats), options_.nodeNameMap);
    spdlog::debug("crawl: {} nodes, {} links, {} MADs, crawl {:.3f} s, model {:.3f} s",
                  topo->nodes().size(), topo->links().size(), topo->stats().madsUsed,
                  std::chrono::duration<double>(topo->stats().crawlTime).count(),
                  std::chrono::duration<double>(topo->stats().buildTime).count());
    return topo;
  }

 private:
  static std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
  }

  CrawlOptions options_;
};

class FixedSource final : public TopologySource {
 public:
  FixedSource(TopologyPtr t, std::string name) : topology_(std::move(t)), name_(std::move(name)) {}
  TopologyPtr discover() override { return topology_; }
  std::string describe() const override { return "fixed " + name_; }

 private:
  TopologyPtr topology_;
  std::string name_;
};

}  // namespace

TopologySourcePtr makeSmpCrawler(CrawlOptions options) {
  return std::make_unique<SmpCrawler>(std::move(options));
}

TopologySourcePtr makeFixedSource(TopologyPtr topology, std::string name) {
  return std::make_unique<FixedSource>(std::move(topology), std::move(name));
}

}  // namespace ibfabric
