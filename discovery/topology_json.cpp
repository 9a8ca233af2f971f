#include "discovery/topology_json.h"

#include <chrono>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

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
  if constexpr (std::is_integral_v<T>) {
    // get<T>() would wrap an integer out of T's range, and converting such a double is
    // undefined: an integer field must hold an integer T can represent.
    const bool fits = v.is_number_unsigned()  ? std::in_range<T>(v.get<std::uint64_t>())
                      : v.is_number_integer() ? std::in_range<T>(v.get<std::int64_t>())
                                              : false;
    if (!fits) fail(where + "." + name + ": not an integer in range: " + v.dump());
  }
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

// Rebuilds a snapshot one element at a time: nodes (with their ports) as they come, cables kept
// until every node is known (the writer's keys are in name order: "links" precede "nodes").
class TopologyReader {
 public:
  void node(const json& n) {
    const std::string where = "nodes[" + std::to_string(nodes_++) + "]";
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
    indices_.push_back(number<std::size_t>(n, "index", where));
    try {
      builder_.addNode(info);
    } catch (const std::invalid_argument& e) {
      fail(where + ": " + e.what());
    }
    const std::string description = text(n, "description", where);
    if (description != info.nodeDescription)
      nameMapText_ += toString(info.guid) + " " + quoteName(description) + "\n";
    const json& ports = field(n, "ports", where);
    if (!ports.is_array()) fail(where + ".ports: not an array");
    for (std::size_t k = 0; k < ports.size(); ++k)
      port(info.guid, ports[k], where + ".ports[" + std::to_string(k) + "]");
  }

  void link(const json& l) {
    const std::string where = "links[" + std::to_string(links_.size()) + "]";
    auto end = [&](const char* name) {
      const json& e = field(l, name, where);
      const std::string ew = where + "." + name;
      const int port = number<int>(e, "port", ew);
      if (port < 0 || port > 255) fail(ew + ".port: out of range");
      return End{guidField(e, "guid", ew), PortNum(static_cast<std::uint8_t>(port))};
    };
    links_.push_back({end("a"), end("b")});
  }

  /// `doc`: the whole document, or (`streamed`) the document without the node and link
  /// elements node() and link() took (schema, source, crawl).
  TopologyPtr finish(const json& doc, bool streamed) {
    if (!doc.is_object()) fail("not an object");
    if (text(doc, "schema", "document") != kTopologyJsonSchema)
      fail("schema is not \"" + std::string(kTopologyJsonSchema) + "\"");
    const json& nodes = field(doc, "nodes", "document");
    const json& links = field(doc, "links", "document");
    if (!nodes.is_array() || !links.is_array()) fail("nodes and links must be arrays");
    // Streamed, the elements taken are gone from `doc`: any left were not objects.
    if (streamed && !nodes.empty()) fail("nodes[" + std::to_string(nodes_) + "]: not an object");
    if (streamed && !links.empty())
      fail("links[" + std::to_string(links_.size()) + "]: not an object");
    for (std::size_t i = 0; i < indices_.size(); ++i)
      if (indices_[i] >= nodes_) fail("nodes[" + std::to_string(i) + "].index: out of range");
    for (std::size_t i = 0; i < links_.size(); ++i) {
      const auto& [a, b] = links_[i];
      try {
        builder_.connect(a.guid, a.port, b.guid, b.port);
      } catch (const std::invalid_argument& e) {
        fail("links[" + std::to_string(i) + "]: " + e.what());
      }
    }
    if (!nameMapText_.empty()) {
      builder_.setNodeNameMap(
          std::make_shared<const NodeNameMap>(NodeNameMap::parse(nameMapText_, "topology JSON")));
    }
    builder_.setStats(crawlStats(doc));
    return builder_.build();
  }

 private:
  struct End {
    Guid guid;
    PortNum port;
  };

  void port(Guid node, const json& p, const std::string& pw) {
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
      builder_.addPort(node, port);
    } catch (const std::invalid_argument& e) {
      fail(pw + ": " + e.what());
    }
  }

  static CrawlStats crawlStats(const json& doc) {
    CrawlStats stats;
    if (auto it = doc.find("source"); it != doc.end() && it->is_string()) stats.source = *it;
    if (auto it = doc.find("crawl"); it != doc.end() && it->is_object()) {
      stats.crawlTime = fromSeconds(it->value("crawl_seconds", 0.0));
      stats.buildTime = fromSeconds(it->value("build_seconds", 0.0));
      stats.madsUsed = it->value("mads", std::uint64_t{0});
      stats.maxHops = it->value("max_hops", 0);
    }
    return stats;
  }

  TopologyBuilder builder_;
  std::size_t nodes_ = 0;
  std::vector<std::size_t> indices_;
  std::vector<std::pair<End, End>> links_;
  std::string nameMapText_;
};

}  // namespace

TopologyPtr topologyFromJson(const json& doc) {
  TopologyReader reader;
  if (doc.is_object()) {
    const auto nodes = doc.find("nodes");
    const auto links = doc.find("links");
    if (nodes != doc.end() && links != doc.end() && nodes->is_array() && links->is_array()) {
      for (const json& n : *nodes) reader.node(n);
      for (const json& l : *links) reader.link(l);
    }
  }
  return reader.finish(doc, false);
}

TopologyPtr topologyFromJsonText(std::string_view text) {
  // Each node and link is converted as soon as it is parsed and then dropped from the document:
  // a 10,240-HCA crawl (37 MB of JSON) never exists as a whole JSON tree (~10x its text).
  TopologyReader reader;
  std::string topKey;
  auto elements = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth == 1 && event == json::parse_event_t::key) topKey = parsed.get<std::string>();
    if (depth != 2 || event != json::parse_event_t::object_end) return true;
    if (topKey == "nodes") {
      reader.node(parsed);
      return false;
    }
    if (topKey == "links") {
      reader.link(parsed);
      return false;
    }
    return true;
  };
  json doc;
  try {
    doc = json::parse(text.begin(), text.end(), elements, false);
  } catch (const json::exception& e) {
    fail(std::string("malformed JSON: ") + e.what());
  }
  if (doc.is_discarded()) fail("malformed JSON");
  return reader.finish(doc, true);
}

}  // namespace ibfabric
