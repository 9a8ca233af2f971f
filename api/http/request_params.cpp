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
