#include "discovery/topology_json.h"

#include <chrono>
#include <memory>
#include <string>

#include "discovery/formats.h"
#include "discovery/node_name_map.h"

namespace ibfabric {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& what) {
  throw TopologyJsonError("topology JSON: " + what);
}

const json& field(const json& obj, const char* name, const std::string& where) {
  auto it = obj.find(name);
  if (it == obj.end()) fail(where + ": missing \"" + name + "\"");
  return *it;
}

template <typename T>
T number(const json& obj, const char* name, const std::string& where) {
  const json& v = field(obj, name, where);
  if (!v.is_number()) fail(where + "." + name + ": not a number");
  return v.get<T>();
}

std::string text(const json& obj, const char* name, const std::string& where) {
  const json& v = field(obj, name, where);
  if (!v.is_string()) fail(where + "." + name + ": not a string");
  return v.get<std::string>();
}

Guid guidField(const json& obj, const char* name, const std::string& where) {
  auto g = parseGuid(text(obj, name, where));
  if (!g) fail(where + "." + name + ": not a GUID");
  return *g;
}

NodeType nodeType(const std::string& t, const std::string& where) {
  if (t == "switch") return NodeType::kSwitch;
  if (t == "ca") return NodeType::kCa;
  if (t == "router") return NodeType::kRouter;
  fail(where + ".type: unknown node type \"" + t + "\"");
}

PortState portState(const std::string& s, const std::string& where) {
  for (auto st : {PortState::kNoChange, PortState::kDown, PortState::kInit, PortState::kArmed,
                  PortState::kActive})
    if (toString(st) == s) return st;
  fail(where + ".state: unknown port state \"" + s + "\"");
}

PhysPortState physState(const std::string& s, const std::string& where) {
  for (int i = 0; i <= static_cast<int>(PhysPortState::kPhyTest); ++i) {
    auto st = static_cast<PhysPortState>(i);
    if (toString(st) == s) return st;
  }
  fail(where + ".phys_state: unknown physical state \"" + s + "\"");
}

WidthMask widthMask(const json& obj, const char* name, const std::string& where) {
  auto it = obj.find(name);
  if (it == obj.end()) return 0;
  if (!it->is_array()) fail(where + "." + name + ": not an array");
  WidthMask m = 0;
  for (const json& w : *it) {
    auto parsed = w.is_string() ? parseLinkWidth(w.get<std::string>()) : std::nullopt;
    if (!parsed) fail(where + "." + name + ": bad width");
    m |= static_cast<WidthMask>(*parsed);
  }
  return m;
}

SpeedMask speedMask(const json& obj, const char* name, const std::string& where) {
  auto it = obj.find(name);
  if (it == obj.end()) return 0;
  if (!it->is_array()) fail(where + "." + name + ": not an array");
  SpeedMask m = 0;
  for (const json& s : *it) {
    auto parsed = s.is_string() ? parseLinkSpeed(s.get<std::string>()) : std::nullopt;
    if (!parsed) fail(where + "." + name + ": bad speed");
    m |= speedBit(*parsed);
  }
  return m;
}

std::chrono::nanoseconds fromSeconds(double s) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(s));
}

std::string quoteName(const std::string& name) {
  std::string out = "\"";
  for (char c : name) out += (c == '"' ? '\'' : c);
  return out + "\"";
}

}  // namespace

TopologyPtr topologyFromJson(const json& doc) {
  if (!doc.is_object()) fail("not an object");
  if (text(doc, "schema", "document") != kTopologyJsonSchema)
    fail("schema is not \"" + std::string(kTopologyJsonSchema) + "\"");
  const json& nodes = field(doc, "nodes", "document");
  const json& links = field(doc, "links", "document");
  if (!nodes.is_array() || !links.is_array()) fail("nodes and links must be arrays");

  TopologyBuilder builder;
  builder.reserve(nodes.size());
  std::vector<Guid> guidOfIndex(nodes.size());
  std::string nameMapText;

  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const json& n = nodes[i];
    const std::string where = "nodes[" + std::to_string(i) + "]";
    if (!n.is_object()) fail(where + ": not an object");
    TopologyBuilder::NodeInfo info;
    info.type = nodeType(text(n, "type", where), where);
    info.guid = guidField(n, "guid", where);
    info.sysImageGuid = guidField(n, "sys_image_guid", where);
    info.nodeDescription = text(n, "node_description", where);
    info.vendorId = number<std::uint32_t>(n, "vendor_id", where);
    info.deviceId = number<std::uint32_t>(n, "device_id", where);
    info.revision = number<std::uint32_t>(n, "revision", where);
    info.numPorts = number<int>(n, "num_ports", where);
    const auto index = number<std::size_t>(n, "index", where);
    if (index >= nodes.size()) fail(where + ".index: out of range");
    guidOfIndex[index] = info.guid;
    try {
      builder.addNode(info);
    } catch (const std::invalid_argument& e) {
      fail(where + ": " + e.what());
    }
    const std::string description = text(n, "description", where);
    if (description != info.nodeDescription)
      nameMapText += toString(info.guid) + " " + quoteName(description) + "\n";

    const json& ports = field(n, "ports", where);
    if (!ports.is_array()) fail(where + ".ports: not an array");
    for (std::size_t k = 0; k < ports.size(); ++k) {
      const json& p = ports[k];
      const std::string pw = where + ".ports[" + std::to_string(k) + "]";
      Port port;
      const int num = number<int>(p, "num", pw);
      if (num < 0 || num > 255) fail(pw + ".num: out of range");
      port.num = PortNum(static_cast<std::uint8_t>(num));
      port.guid = guidField(p, "guid", pw);
      port.lid = Lid(number<std::uint16_t>(p, "lid", pw));
      port.lmc = number<std::uint8_t>(p, "lmc", pw);
      port.state = portState(text(p, "state", pw), pw);
      port.physState = physState(text(p, "phys_state", pw), pw);
      port.widthSupported = widthMask(p, "width_supported", pw);
      port.widthEnabled = widthMask(p, "width_enabled", pw);
      port.speedSupported = speedMask(p, "speed_supported", pw);
      port.speedEnabled = speedMask(p, "speed_enabled", pw);
      const json& rate = field(p, "active_rate", pw);
      if (rate.is_string()) {
        port.activeRate = parseLinkRate(rate.get<std::string>());
        if (!port.activeRate) fail(pw + ".active_rate: bad rate");
      } else if (!rate.is_null()) {
        fail(pw + ".active_rate: not a string or null");
      }
      try {
        builder.addPort(info.guid, port);
      } catch (const std::invalid_argument& e) {
        fail(pw + ": " + e.what());
      }
    }
  }

  for (std::size_t i = 0; i < links.size(); ++i) {
    const json& l = links[i];
    const std::string where = "links[" + std::to_string(i) + "]";
    auto end = [&](const char* name) {
      const json& e = field(l, name, where);
      const std::string ew = where + "." + name;
      const int port = number<int>(e, "port", ew);
      if (port < 0 || port > 255) fail(ew + ".port: out of range");
      return std::pair{guidField(e, "guid", ew), PortNum(static_cast<std::uint8_t>(port))};
    };
    auto [ga, pa] = end("a");
    auto [gb, pb] = end("b");
    try {
      builder.connect(ga, pa, gb, pb);
    } catch (const std::invalid_argument& e) {
      fail(where + ": " + e.what());
    }
  }

  if (!nameMapText.empty()) {
    builder.setNodeNameMap(
        std::make_shared<const NodeNameMap>(NodeNameMap::parse(nameMapText, "topology JSON")));
  }

  CrawlStats stats;
  if (auto it = doc.find("source"); it != doc.end() && it->is_string()) stats.source = *it;
  if (auto it = doc.find("crawl"); it != doc.end() && it->is_object()) {
    stats.crawlTime = fromSeconds(it->value("crawl_seconds", 0.0));
    stats.buildTime = fromSeconds(it->value("build_seconds", 0.0));
    stats.madsUsed = it->value("mads", std::uint64_t{0});
    stats.maxHops = it->value("max_hops", 0);
  }
  builder.setStats(std::move(stats));
  return builder.build();
}

TopologyPtr topologyFromJsonText(std::string_view text) {
  json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) fail("malformed JSON");
  return topologyFromJson(doc);
}

}  // namespace ibfabric
