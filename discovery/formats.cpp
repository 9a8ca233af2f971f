#include "discovery/formats.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "discovery/link_health.h"
#include "discovery/net_topology.h"

namespace ibfabric {
namespace {

using nlohmann::json;

double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

json widths(WidthMask m) {
  json out = json::array();
  for (LinkWidth w :
       {LinkWidth::k1x, LinkWidth::k2x, LinkWidth::k4x, LinkWidth::k8x, LinkWidth::k12x})
    if (hasWidth(m, w)) out.push_back(std::string(toString(w)));
  return out;
}

json speeds(SpeedMask m) {
  json out = json::array();
  for (int s = 0; s <= static_cast<int>(LinkSpeed::kXdr); ++s)
    if (hasSpeed(m, static_cast<LinkSpeed>(s)))
      out.push_back(std::string(toString(static_cast<LinkSpeed>(s))));
  return out;
}

json rateJson(const std::optional<LinkRate>& r) { return r ? json(r->toString()) : json(nullptr); }

json indexList(const std::vector<NodeIndex>& v) { return json(v); }

json portRef(const Topology& t, PortRef r) {
  return json{{"node", r.node}, {"guid", toString(t.node(r.node).guid)}, {"port", r.port.value()}};
}

/// Links (or unconnected ports) that have at least one finding.
std::size_t degradedLinks(const std::vector<LinkHealthIssue>& issues) {
  std::set<std::tuple<bool, std::uint32_t, std::uint32_t>> seen;  // link, or (node, port)
  for (const auto& i : issues) {
    if (i.link)
      seen.insert({true, *i.link, 0});
    else
      seen.insert({false, i.port.node, i.port.port.value()});
  }
  return seen.size();
}

json findingJson(const Topology& t, const LinkHealthIssue& i) {
  return {{"kind", std::string(toString(i.kind))},
          {"port", portRef(t, i.port)},
          {"remote", i.remote ? portRef(t, *i.remote) : json(nullptr)},
          {"link", i.link ? json(*i.link) : json(nullptr)},
          {"active_rate", rateJson(i.active)},
          {"enabled_rate", rateJson(i.enabled)},
          {"text", i.text}};
}

std::string dotEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::optional<TopologyFormat> parseTopologyFormat(std::string_view text) {
  if (text == "summary") return TopologyFormat::kSummary;
  if (text == "json") return TopologyFormat::kJson;
  if (text == "ibnetdiscover") return TopologyFormat::kIbnetdiscover;
  if (text == "dot") return TopologyFormat::kDot;
  return std::nullopt;
}

std::string levelName(int level) {
  switch (level) {
    case kUnknownLevel:
      return "unknown";
    case kCaLevel:
      return "ca";
    case 1:
      return "leaf";
    case 2:
      return "spine";
    case 3:
      return "core";
    default:
      return "level-" + std::to_string(level);
  }
}

std::string formatSummary(const Topology& t) {
  std::ostringstream out;
  const auto& st = t.stats();
  out << "Fabric: " << t.switchCount() << " switches, " << t.caCount() << " CAs";
  if (t.routerCount()) out << ", " << t.routerCount() << " routers";
  out << ", " << t.links().size() << " links";
  if (!st.source.empty()) out << "  (" << st.source << ")";
  out << "\n";

  std::map<int, std::size_t> perLevel;
  for (const Node& n : t.nodes())
    if (n.isSwitch()) ++perLevel[n.level];
  out << "Switch levels:";
  if (perLevel.empty()) out << " none";
  for (auto it = perLevel.rbegin(); it != perLevel.rend(); ++it)
    out << " " << levelName(it->first) << " " << it->second;
  out << "\n";

  std::map<std::size_t, std::size_t> hcasPerHost;
  std::size_t unnamed = 0;
  for (const Host& h : t.hosts()) {
    ++hcasPerHost[h.hcas.size()];
    if (!h.namedFromDescription) ++unnamed;
  }
  out << "Hosts: " << t.hosts().size();
  if (!hcasPerHost.empty()) {
    out << " (";
    bool first = true;
    for (auto& [hcas, hosts] : hcasPerHost) {
      out << (first ? "" : ", ") << hosts << " with " << hcas << " HCA" << (hcas == 1 ? "" : "s");
      first = false;
    }
    out << ")";
  }
  if (unnamed) out << ", " << unnamed << " named by system image GUID";
  out << "\n";

  out << "Rails: " << t.rails().size() << (t.railOptimized() ? " (rail-optimized)" : "");
  if (!t.rails().empty()) {
    out << ":";
    for (const Rail& r : t.rails())
      out << " r" << r.index << "=" << r.leaves.size() << "L/" << r.hcas.size() << "H";
  }
  out << "\n";

  out << "Leaf groups: " << t.groups().size();
  if (!t.groups().empty()) {
    std::map<std::pair<std::size_t, std::size_t>, std::size_t> shapes;
    for (const LeafGroup& g : t.groups()) ++shapes[{g.leaves.size(), g.spines.size()}];
    out << " (";
    bool first = true;
    for (auto& [shape, n] : shapes) {
      out << (first ? "" : ", ") << n << " x " << shape.first << " leaves/" << shape.second
          << " spines";
      first = false;
    }
    out << ")";
  }
  out << "\n";

  std::map<std::string, std::size_t> rates;
  for (const Link& l : t.links()) ++rates[l.rate ? l.rate->toString() : "down"];
  const auto findings = checkLinkHealth(t);
  out << "Links:";
  for (auto& [r, n] : rates) out << " " << n << " x " << r;
  out << "; " << degradedLinks(findings) << " degraded\n";
  if (!findings.empty()) {
    std::map<LinkHealthKind, std::size_t> perKind;
    for (const auto& f : findings) ++perKind[f.kind];
    out << "Degraded links: " << degradedLinks(findings) << " (";
    bool first = true;
    for (auto& [kind, n] : perKind) {
      out << (first ? "" : ", ") << n << " " << toString(kind);
      first = false;
    }
    out << ")\n";
    for (std::size_t i = 0; i < findings.size() && i < kSummaryFindings; ++i)
      out << "  " << toString(findings[i].kind) << ": " << findings[i].text << "\n";
    if (findings.size() > kSummaryFindings)
      out << "  ... " << findings.size() - kSummaryFindings
          << " more findings (--format json lists all)\n";
  }

  char buf[160];
  std::snprintf(buf, sizeof buf, "Crawl: %.3f s, %llu MADs, max hops %d; model built in %.3f s\n",
                seconds(st.crawlTime), static_cast<unsigned long long>(st.madsUsed), st.maxHops,
                seconds(st.buildTime));
  out << buf;
  return out.str();
}

namespace {

/// Compact JSON text; a description that is not valid UTF-8 (a fabric can report any bytes) is
/// written with U+FFFD instead of throwing.
std::string safeText(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json nodeJson(const Topology& t, const Node& n) {
  json ports = json::array();
  for (const auto& p : n.ports) {
    if (!p) continue;
    json jp = {{"num", p->num.value()},
               {"guid", toString(p->guid)},
               {"lid", p->lid.value()},
               {"lmc", p->lmc},
               {"state", toString(p->state)},
               {"phys_state", toString(p->physState)},
               {"width_supported", widths(p->widthSupported)},
               {"width_enabled", widths(p->widthEnabled)},
               {"speed_supported", speeds(p->speedSupported)},
               {"speed_enabled", speeds(p->speedEnabled)},
               {"active_rate", rateJson(p->activeRate)},
               {"rate_gbps", p->activeRate ? p->activeRate->dataGbps() : 0.0},
               {"remote", p->remote ? portRef(t, *p->remote) : json(nullptr)},
               {"direction", toString(p->direction)},
               {"link", p->link ? json(*p->link) : json(nullptr)}};
    ports.push_back(std::move(jp));
  }
  json j = {{"index", n.index},
            {"type", nodeTypeName(n.type)},
            {"guid", toString(n.guid)},
            {"sys_image_guid", toString(n.sysImageGuid)},
            {"description", n.description},
            {"node_description", n.nodeDescription},
            {"vendor_id", n.vendorId},
            {"device_id", n.deviceId},
            {"revision", n.revision},
            {"num_ports", n.numPorts},
            {"lid", n.lid().value()},
            {"level", n.level},
            {"host", n.host ? json(*n.host) : json(nullptr)},
            {"hca_index", n.hcaIndex},
            {"rail", n.rail},
            {"group", n.group},
            {"ports", std::move(ports)}};
  if (n.missing) j["missing"] = absenceJson(n.missing);
  return j;
}

json linkJson(const Topology& t, const Link& l) {
  json j = {{"a", portRef(t, l.a)},
            {"b", portRef(t, l.b)},
            {"rate", rateJson(l.rate)},
            {"gbps", l.gbps()},
            {"enabled_rate", rateJson(l.enabledRate)},
            {"below_enabled", l.belowEnabled()}};
  if (l.missing) j["missing"] = absenceJson(l.missing);
  return j;
}

// Everything but the nodes and links (small at any size); `counts` complete.
json summaryJson(const Topology& t) {
  const auto& st = t.stats();
  json j;
  j["schema"] = kTopologyJsonSchema;
  j["source"] = st.source;
  j["crawl"] = {{"crawl_seconds", seconds(st.crawlTime)},
                {"build_seconds", seconds(st.buildTime)},
                {"mads", st.madsUsed},
                {"max_hops", st.maxHops}};
  j["counts"] = {{"switches", t.switchCount()}, {"cas", t.caCount()},
                 {"routers", t.routerCount()},  {"links", t.links().size()},
                 {"hosts", t.hosts().size()},   {"rails", t.rails().size()},
                 {"groups", t.groups().size()}};

  json levels = json::array();
  std::map<int, std::vector<NodeIndex>> byLevel;
  for (const Node& n : t.nodes()) byLevel[n.level].push_back(n.index);
  for (auto& [level, nodes] : byLevel)
    levels.push_back({{"level", level}, {"name", levelName(level)}, {"nodes", indexList(nodes)}});
  j["levels"] = std::move(levels);

  json hosts = json::array();
  for (const Host& h : t.hosts())
    hosts.push_back({{"name", h.name},
                     {"sys_image_guid", toString(h.sysImageGuid)},
                     {"named_from_description", h.namedFromDescription},
                     {"hcas", indexList(h.hcas)}});
  j["hosts"] = std::move(hosts);

  json rails = json::array();
  for (const Rail& r : t.rails())
    rails.push_back(
        {{"index", r.index}, {"leaves", indexList(r.leaves)}, {"hcas", indexList(r.hcas)}});
  j["rails"] = std::move(rails);
  j["rail_optimized"] = t.railOptimized();

  json groups = json::array();
  for (std::size_t g = 0; g < t.groups().size(); ++g)
    groups.push_back({{"index", g},
                      {"leaves", indexList(t.groups()[g].leaves)},
                      {"spines", indexList(t.groups()[g].spines)}});
  j["groups"] = std::move(groups);

  const auto issues = checkLinkHealth(t);
  json findings = json::array();
  for (const auto& i : issues) findings.push_back(findingJson(t, i));
  j["findings"] = std::move(findings);
  j["counts"]["degraded_links"] = degradedLinks(issues);
  return j;
}

}  // namespace

json toJson(const Topology& t) {
  json j = summaryJson(t);
  json nodes = json::array();
  for (const Node& n : t.nodes()) nodes.push_back(nodeJson(t, n));
  j["nodes"] = std::move(nodes);
  json links = json::array();
  for (const Link& l : t.links()) links.push_back(linkJson(t, l));
  j["links"] = std::move(links);
  return j;
}

void writeJson(const Topology& t, const std::function<void(std::string_view)>& out) {
  // toJson(t).dump() byte for byte: an object's keys in name order ("links" and "nodes" among
  // the summary's), the two big arrays one element at a time.
  json summary = summaryJson(t);
  summary["links"] = nullptr;
  summary["nodes"] = nullptr;
  out("{");
  bool firstKey = true;
  std::string text;
  for (const auto& [key, value] : summary.items()) {
    text.assign(firstKey ? "" : ",");
    firstKey = false;
    text += safeText(json(key));
    text += ':';
    if (key == "links" || key == "nodes") {
      text += '[';
      out(text);
      const bool links = key == "links";
      const std::size_t n = links ? t.links().size() : t.nodes().size();
      for (std::size_t i = 0; i < n; ++i) {
        text.assign(i ? "," : "");
        text += safeText(links ? linkJson(t, t.links()[i]) : nodeJson(t, t.nodes()[i]));
        out(text);
      }
      out("]");
      continue;
    }
    text += safeText(value);
    out(text);
  }
  out("}");
}

std::string formatDot(const Topology& t) {
  std::ostringstream out;
  out << "graph fabric {\n  rankdir=TB;\n  node [shape=box, fontsize=10];\n";
  std::map<int, std::vector<NodeIndex>, std::greater<>> byLevel;
  for (const Node& n : t.nodes()) byLevel[n.level].push_back(n.index);
  for (auto& [level, nodes] : byLevel) {
    out << "  subgraph \"level_" << levelName(level) << "\" {\n    rank=same;\n";
    for (NodeIndex i : nodes) {
      const Node& n = t.node(i);
      out << "    n" << i << " [label=\""
          << dotEscape(n.description.empty() ? toString(n.guid) : n.description) << "\""
          << (n.isSwitch() ? "" : ", shape=ellipse") << "];\n";
    }
    out << "  }\n";
  }
  // Parallel cables between the same two nodes are drawn once, labelled with their count.
  std::map<std::pair<NodeIndex, NodeIndex>, std::pair<int, std::string>> edges;
  for (const Link& l : t.links()) {
    auto& e = edges[{l.b.node, l.a.node}];
    ++e.first;
    if (e.second.empty() && l.rate) e.second = l.rate->toString();
  }
  for (auto& [ends, e] : edges) {
    out << "  n" << ends.first << " -- n" << ends.second;
    std::string label = e.second;
    if (e.first > 1) label = std::to_string(e.first) + " x " + label;
    if (!label.empty()) out << " [label=\"" << label << "\", fontsize=8]";
    out << ";\n";
  }
  out << "}\n";
  return out.str();
}

std::string formatIbnetdiscover(const Topology& t) {
  return formatNetFile(netFabricFromTopology(t));
}

std::string formatTopology(const Topology& t, TopologyFormat format) {
  switch (format) {
    case TopologyFormat::kSummary:
      return formatSummary(t);
    case TopologyFormat::kJson:
      return toJson(t).dump(1, ' ', false, json::error_handler_t::replace) + "\n";
    case TopologyFormat::kIbnetdiscover:
      return formatIbnetdiscover(t);
    case TopologyFormat::kDot:
      return formatDot(t);
  }
  return {};
}

std::string nodeTypeName(NodeType t) {
  switch (t) {
    case NodeType::kSwitch:
      return "switch";
    case NodeType::kCa:
      return "ca";
    case NodeType::kRouter:
      return "router";
  }
  return "unknown";
}

json absenceJson(const std::optional<Absence>& a) {
  if (!a) return nullptr;
  auto seconds = [](std::chrono::system_clock::time_point t) {
    return std::chrono::duration<double>(t.time_since_epoch()).count();
  };
  return {{"since", seconds(a->since)}, {"last_seen", seconds(a->lastSeen)}};
}

}  // namespace ibfabric
