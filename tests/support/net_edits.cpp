#include "tests/support/net_edits.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

namespace ibfabric::testing {

NetNode& nodeById(NetFabric& f, const std::string& id) {
  auto it =
      std::find_if(f.nodes.begin(), f.nodes.end(), [&](const NetNode& n) { return n.id == id; });
  if (it == f.nodes.end()) throw std::runtime_error("no node " + id);
  return *it;
}

void unlink(NetFabric& f, const std::string& id, int port) {
  NetNode& n = nodeById(f, id);
  auto it = std::find_if(n.ports.begin(), n.ports.end(),
                         [&](const NetPort& p) { return p.port.value() == port; });
  ASSERT_NE(it, n.ports.end()) << "no port " << id << "[" << port << "]";
  NetNode& r = nodeById(f, it->remoteId);
  PortNum rp = it->remotePort;
  n.ports.erase(it);
  std::erase_if(r.ports, [&](const NetPort& p) { return p.port == rp; });
  f.reindex();
}

void link(NetFabric& f, const std::string& a, int pa, const std::string& b, int pb,
          std::optional<LinkRate> rate) {
  NetPort x;
  x.port = PortNum{static_cast<std::uint8_t>(pa)};
  x.remoteId = b;
  x.remotePort = PortNum{static_cast<std::uint8_t>(pb)};
  x.rate = rate;
  NetPort y;
  y.port = x.remotePort;
  y.remoteId = a;
  y.remotePort = x.port;
  y.rate = rate;
  nodeById(f, a).ports.push_back(x);
  nodeById(f, b).ports.push_back(y);
  f.reindex();
}

const NetPort* firstSwitchPort(const NetFabric& f, const NetNode& node) {
  for (const auto& p : node.ports) {
    const NetNode* r = f.find(p.remoteId);
    if (r && r->type == NodeType::kSwitch) return &p;
  }
  return nullptr;
}

}  // namespace ibfabric::testing
