#include "scheduler_hooks/extender.h"

#include <algorithm>
#include <map>
#include <utility>

#include "discovery/hostlist.h"
#include "scheduler_hooks/extender_scores.h"

namespace ibfabric::scheduler_hooks {
namespace {

using nlohmann::json;

bool equalsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto l = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
    if (l(a[i]) != l(b[i])) return false;
  }
  return true;
}

/// A member of an object matched like Go's encoding/json: exact name first, then any case.
const json* field(const json& obj, std::string_view name) {
  if (!obj.is_object()) return nullptr;
  if (auto it = obj.find(std::string(name)); it != obj.end()) return &*it;
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (equalsNoCase(it.key(), name)) return &it.value();
  return nullptr;
}

json* field(json& obj, std::string_view name) {
  return const_cast<json*>(field(std::as_const(obj), name));
}

ExtenderReply filterError(int status, const std::string& message) {
  return {status, json{{"Nodes", nullptr},
                       {"NodeNames", nullptr},
                       {"FailedNodes", json::object()},
                       {"FailedAndUnresolvableNodes", json::object()},
                       {"Error", "ibfabric: " + message}}};
}

/// A parsed ExtenderArgs.
struct Args {
  json pod;
  std::map<std::string, std::string> annotations;
  std::string podName;
  bool namesForm = false;
  std::vector<std::string> names;
  std::vector<json> nodes;  // the NodeList items, same order as names (Nodes form only)
};

std::optional<std::string> parseArgs(std::string_view body, Args& args) {
  json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return "the body is not a JSON object";
  if (const json* pod = field(doc, "Pod"); pod && pod->is_object()) {
    args.pod = *pod;
    const json* meta = field(*pod, "metadata");
    if (meta && meta->is_object()) {
      const json* name = field(*meta, "name");
      const json* ns = field(*meta, "namespace");
      if (name && name->is_string())
        args.podName = (ns && ns->is_string() ? ns->get<std::string>() + "/" : std::string()) +
                       name->get<std::string>();
      const json* ann = field(*meta, "annotations");
      if (ann && ann->is_object())
        for (auto it = ann->begin(); it != ann->end(); ++it)
          if (it.value().is_string()) args.annotations[it.key()] = it.value().get<std::string>();
    }
  }
  const json* names = field(doc, "NodeNames");
  json* nodes = field(doc, "Nodes");
  if (names && names->is_array()) {
    args.namesForm = true;
    for (const auto& n : *names) {
      if (!n.is_string()) return "NodeNames must be strings";
      args.names.push_back(n.get<std::string>());
    }
    return std::nullopt;
  }
  if (nodes && nodes->is_object()) {
    // The items are moved out of the parsed document (a NodeList of a large cluster is tens of
    // MB of JSON: it is held once, not copied).
    json* items = field(*nodes, "items");
    if (items && !items->is_null() && !items->is_array()) return "Nodes.items must be an array";
    if (items && items->is_array()) {
      for (auto& item : *items) {
        const json* meta = field(item, "metadata");
        const json* name = meta ? field(*meta, "name") : nullptr;
        if (!name || !name->is_string()) return "a node in Nodes.items has no metadata.name";
        args.names.push_back(name->get<std::string>());
        args.nodes.push_back(std::move(item));
      }
    }
    return std::nullopt;
  }
  return "ExtenderArgs has neither NodeNames nor Nodes";
}

std::optional<bool> parseBool(const std::string& v) {
  if (v == "true" || v == "True" || v == "1" || v == "yes") return true;
  if (v == "false" || v == "False" || v == "0" || v == "no" || v.empty()) return false;
  return std::nullopt;
}

/// The pattern names of routing/placement.h (parsed here: the engine's own parser lives with the
/// engine, which this module must not require).
std::optional<routing::CommPattern> patternOf(const std::string& v) {
  if (v == "none") return routing::CommPattern::kNone;
  if (v == "ring_allreduce" || v == "ring") return routing::CommPattern::kRingAllreduce;
  if (v == "alltoall" || v == "all_to_all") return routing::CommPattern::kAllToAll;
  return std::nullopt;
}

/// The context's layout, or one built for this request.
std::shared_ptr<const ExportLayout> layoutOf(const ExtenderContext& ctx) {
  if (ctx.layout) return ctx.layout;
  return std::make_shared<const ExportLayout>(buildExportLayout(ctx.topology));
}

const HostStatus* statusOf(const ExtenderContext& ctx, const std::string& host) {
  auto it = ctx.health.find(host);
  return it == ctx.health.end() ? nullptr : &it->second;
}

}  // namespace

std::optional<std::string> fabricHostOf(const ExportLayout& layout, std::string_view nodeName) {
  const auto& byNode = layout.k8sNames.hostOfNode;
  const std::string name(nodeName);
  if (auto it = byNode.find(name); it != byNode.end()) return it->second;
  const auto dot = name.find('.');
  if (dot != std::string::npos && dot > 0)
    if (auto it = byNode.find(name.substr(0, dot)); it != byNode.end()) return it->second;
  // A fabric host name as such (peer hostlists may name hosts, not nodes).
  if (layout.topology && layout.topology->findHost(nodeName)) return name;
  return std::nullopt;
}

ExtenderReply extenderFilter(std::string_view body, const ExtenderContext& ctx) {
  Args args;
  if (auto err = parseArgs(body, args)) return filterError(400, *err);
  if (!ctx.topology) return filterError(503, "the fabric has not been discovered yet");
  bool allowDegraded = false;
  if (auto it = args.annotations.find(kAnnotationAllowDegraded); it != args.annotations.end()) {
    auto v = parseBool(it->second);
    if (!v)
      return filterError(
          400, std::string(kAnnotationAllowDegraded) + ": not a boolean: '" + it->second + "'");
    allowDegraded = *v;
  }
  const std::shared_ptr<const ExportLayout> layout = layoutOf(ctx);
  json passedNames = json::array();
  json passedItems = json::array();
  json failed = json::object();
  for (std::size_t i = 0; i < args.names.size(); ++i) {
    const std::string& name = args.names[i];
    std::string why;
    auto host = fabricHostOf(*layout, name);
    const HostStatus* st = statusOf(ctx, host.value_or(name));
    if (!host && !st) st = statusOf(ctx, name.substr(0, name.find('.')));  // a vanished host
    if (st && st->health >= HostHealth::kFaulty) {
      why = "HCA link " + std::string(toString(st->health)) + ": " + st->reason;
    } else if (!host) {
      why = "not a host of the InfiniBand fabric";
    } else if (st && st->health == HostHealth::kDegraded && !allowDegraded) {
      why = "HCA link degraded (set " + std::string(kAnnotationAllowDegraded) +
            "=true to accept): " + st->reason;
    }
    if (!why.empty()) {
      failed[name] = "ibfabric: " + why;
      continue;
    }
    if (args.namesForm) {
      passedNames.push_back(name);
    } else {
      passedItems.push_back(std::move(args.nodes[i]));
    }
  }
  json out;
  if (args.namesForm) {
    out["Nodes"] = nullptr;
    out["NodeNames"] = passedNames;
  } else {
    out["Nodes"] = json{{"metadata", json::object()}, {"items", passedItems}};
    out["NodeNames"] = nullptr;
  }
  out["FailedNodes"] = failed;
  out["FailedAndUnresolvableNodes"] = failed;
  out["Error"] = "";
  return {200, out};
}

namespace {

/// The pod's pattern, degraded choice and peers (the annotation's hostlist and the job group's
/// placed hosts, as fabric hosts) into `in`; the problem with an annotation, if any.
std::optional<std::string> scoreInputOf(const Args& args, const ExtenderContext& ctx,
                                        const ExportLayout& layout, ScoreInput& in) {
  if (auto it = args.annotations.find(kAnnotationPattern); it != args.annotations.end()) {
    auto p = patternOf(it->second);
    if (!p) return std::string(kAnnotationPattern) + ": unknown pattern '" + it->second + "'";
    in.pattern = *p;
  }
  if (auto it = args.annotations.find(kAnnotationAllowDegraded); it != args.annotations.end())
    in.allowDegraded = parseBool(it->second).value_or(false);
  if (auto it = args.annotations.find(kAnnotationPeerHosts); it != args.annotations.end()) {
    std::vector<std::string> names;
    try {
      names = expandHostlist(it->second, 100000);
    } catch (const std::exception& e) {
      return std::string(kAnnotationPeerHosts) + ": " + e.what();
    }
    for (const auto& n : names)
      if (auto h = fabricHostOf(layout, n)) in.peers.insert(*h);
  }
  if (auto it = args.annotations.find(kAnnotationJobGroup);
      it != args.annotations.end() && ctx.jobGroupHosts) {
    for (const auto& n : ctx.jobGroupHosts(it->second))
      if (auto h = fabricHostOf(layout, n)) in.peers.insert(*h);
  }
  in.layout = &layout;
  in.health = &ctx.health;
  in.uplinkUtilization = ctx.uplinkUtilization;
  in.placer = ctx.placer;
  return std::nullopt;
}

}  // namespace

ExtenderReply extenderPrioritize(std::string_view body, const ExtenderContext& ctx) {
  Args args;
  auto error = [](int status, const std::string& message) {
    return ExtenderReply{status, json{{"Error", "ibfabric: " + message}}};
  };
  if (auto err = parseArgs(body, args)) return error(400, *err);
  if (!ctx.topology) return error(503, "the fabric has not been discovered yet");
  const std::shared_ptr<const ExportLayout> layout = layoutOf(ctx);
  ScoreInput in;
  if (auto err = scoreInputOf(args, ctx, *layout, in)) return error(400, *err);
  std::vector<std::string> hosts;
  std::vector<std::optional<std::string>> hostOf;  // per node name
  for (const auto& name : args.names) {
    hostOf.push_back(fabricHostOf(*layout, name));
    if (hostOf.back()) hosts.push_back(*hostOf.back());
  }
  const auto scores = extenderScores(in, hosts);
  json out = json::array();
  for (std::size_t i = 0; i < args.names.size(); ++i) {
    const std::int64_t s = hostOf[i] ? scores.at(*hostOf[i]) : 0;  // unknown nodes: 0
    out.push_back({{"Host", args.names[i]}, {"Score", s}});
  }
  return {200, out};
}

}  // namespace ibfabric::scheduler_hooks
