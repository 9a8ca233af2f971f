#include "api/http/request_params.h"

#include <httplib.h>

#include <charconv>

#include "api/http/http_json.h"
#include "discovery/formats.h"

namespace ibfabric::api {

std::optional<std::uint64_t> parseUint(const std::string& text) {
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

std::optional<double> parseSeconds(const std::string& text) {
  try {
    std::size_t used = 0;
    double v = std::stod(text, &used);
    if (used != text.size() || !(v >= 0)) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<int> parseLevel(const std::string& text) {
  for (int l = -1; l <= 8; ++l)
    if (levelName(l) == text) return l;
  if (auto v = parseUint(text); v && *v <= 8) return static_cast<int>(*v);
  return std::nullopt;
}

std::string paramOr(const httplib::Request& req, const char* name, std::string fallback) {
  return req.has_param(name) ? req.get_param_value(name) : std::move(fallback);
}

std::optional<bool> boolParam(const httplib::Request& req, const char* name,
                              httplib::Response& res) {
  if (!req.has_param(name)) return false;
  const std::string v = req.get_param_value(name);
  if (v == "true" || v == "1" || v == "yes" || v.empty()) return true;
  if (v == "false" || v == "0" || v == "no") return false;
  sendError(res, 400, std::string("bad ") + name + " (true|false): " + v);
  return std::nullopt;
}

std::optional<std::uint64_t> limitParam(const httplib::Request& req, httplib::Response& res,
                                        std::uint64_t fallback) {
  if (!req.has_param("limit")) return fallback;
  const std::string text = req.get_param_value("limit");
  auto v = parseUint(text);
  if (!v) sendError(res, 400, "bad limit: " + text);
  return v;
}

bool choiceParam(const httplib::Request& req, const char* name,
                 std::initializer_list<const char*> allowed, std::string& out,
                 httplib::Response& res) {
  out.clear();
  if (!req.has_param(name)) return true;
  const std::string v = req.get_param_value(name);
  std::string names;
  for (const char* a : allowed) {
    if (v == a) {
      out = v;
      return true;
    }
    names += (names.empty() ? "" : "|") + std::string(a);
  }
  sendError(res, 400, std::string("bad ") + name + " (" + names + "): " + v);
  return false;
}

bool levelParam(const httplib::Request& req, std::optional<int>& out, httplib::Response& res) {
  out.reset();
  if (!req.has_param("level")) return true;
  out = parseLevel(req.get_param_value("level"));
  if (!out) sendError(res, 400, "bad level: " + req.get_param_value("level"));
  return out.has_value();
}

bool railParam(const httplib::Request& req, const Topology& t, std::optional<int>& out,
               httplib::Response& res) {
  out.reset();
  if (!req.has_param("rail")) return true;
  const std::string v = req.get_param_value("rail");
  auto n = parseUint(v);
  if (!n || *n >= t.rails().size()) {
    sendError(res, 400,
              t.rails().empty()
                  ? "bad rail (the fabric has no rails): " + v
                  : "bad rail (0.." + std::to_string(t.rails().size() - 1) + "): " + v);
    return false;
  }
  out = static_cast<int>(*n);
  return true;
}

bool nodeParam(const httplib::Request& req, const Topology& t, const Node*& out,
               httplib::Response& res) {
  out = nullptr;
  if (!req.has_param("node")) return true;
  const std::string g = req.get_param_value("node");
  if (!parseGuid(g)) {
    sendError(res, 400, "bad node (a GUID): " + g);
    return false;
  }
  out = nodeByGuid(t, g);
  if (!out) sendError(res, 404, "no node with GUID " + g);
  return out != nullptr;
}

bool hostParam(const httplib::Request& req, const Topology& t, std::optional<std::uint32_t>& out,
               httplib::Response& res) {
  out.reset();
  if (!req.has_param("host")) return true;
  const std::string name = req.get_param_value("host");
  const Host* h = t.findHost(name);
  if (!h) {
    sendError(res, 404, "no host named " + name);
    return false;
  }
  out = static_cast<std::uint32_t>(h - t.hosts().data());
  return true;
}

const Node* nodeByGuid(const Topology& t, const std::string& text) {
  auto g = parseGuid(text);
  if (!g) return nullptr;
  if (const Node* n = t.findNode(*g)) return n;
  if (auto ref = t.findPort(*g)) return &t.node(ref->node);
  return nullptr;
}

std::optional<PathPort> portFromPath(const Topology& t, const httplib::Request& req,
                                     httplib::Response& res) {
  const std::string g = req.matches[1], p = req.matches[2];
  if (!parseGuid(g)) {
    sendError(res, 400, "not a GUID: " + g);
    return std::nullopt;
  }
  auto portNum = parseUint(p);
  if (!portNum || *portNum > 255) {
    sendError(res, 400, "not a port number: " + p);
    return std::nullopt;
  }
  const Node* n = nodeByGuid(t, g);
  if (!n) {
    sendError(res, 404, "no node with GUID " + g);
    return std::nullopt;
  }
  const PortRef ref{n->index, PortNum(static_cast<std::uint8_t>(*portNum))};
  const Port* port = t.port(ref);
  if (!port) {
    sendError(res, 404, "node " + g + " has no port " + p);
    return std::nullopt;
  }
  return PathPort{n, port, ref};
}

}  // namespace ibfabric::api
