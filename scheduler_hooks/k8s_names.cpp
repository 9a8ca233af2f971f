#include "scheduler_hooks/k8s_names.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace ibfabric::scheduler_hooks {
namespace {

bool lowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool alnum(char c) { return lowerAlnum(c) || (c >= 'A' && c <= 'Z'); }
char lowerChar(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

/// 8 hex digits of the 32-bit FNV-1a hash of `s`: the same name always gets the same suffix.
std::string hashSuffix(std::string_view s) {
  std::uint32_t h = 2166136261u;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", h);
  return buf;
}

/// One dot-separated part made a DNS label: invalid characters to '-', runs of '-' collapsed,
/// no '-' at either end.
std::string sanitizedPart(std::string_view part) {
  std::string out;
  for (char c : part) {
    const char l = lowerChar(c);
    if (lowerAlnum(l)) {
      out += l;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

}  // namespace

bool isDnsSubdomain(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = name.find('.', start);
    const std::string_view part =
        name.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (part.empty() || part.size() > 63 || !lowerAlnum(part.front()) || !lowerAlnum(part.back()))
      return false;
    for (char c : part)
      if (!lowerAlnum(c) && c != '-') return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool isLabelValue(std::string_view v) {
  if (v.empty()) return true;
  if (v.size() > 63 || !alnum(v.front()) || !alnum(v.back())) return false;
  return std::all_of(v.begin(), v.end(),
                     [](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

std::string kubeletNodeName(std::string_view host) {
  std::string out(host);
  std::transform(out.begin(), out.end(), out.begin(), lowerChar);
  return out;
}

const std::string* K8sNodeNames::nodeOf(const std::string& host) const {
  auto it = nodeOfHost.find(host);
  return it == nodeOfHost.end() ? nullptr : &it->second;
}

K8sNodeNames resolveK8sNodeNames(const std::vector<std::string>& hosts, const K8sNodeNameMap* map) {
  std::map<std::string, std::vector<std::string>> claims;  // node name -> hosts
  K8sNodeNames out;
  std::vector<std::pair<std::string, std::string>> skipped;
  for (const auto& host : hosts) {
    const std::string* mapped = map ? map->find(host) : nullptr;
    std::string node = mapped ? *mapped : kubeletNodeName(host);
    if (!isDnsSubdomain(node)) {
      skipped.emplace_back(host, "node name '" + node + "' is not valid (" +
                                     std::string(kDnsSubdomainRule) +
                                     "); name its node in k8s_node_name_map");
      continue;
    }
    claims[node].push_back(host);
  }
  for (auto& [node, owners] : claims) {
    if (owners.size() == 1) {
      out.nodeOfHost[owners.front()] = node;
      out.hostOfNode[node] = owners.front();
      continue;
    }
    std::sort(owners.begin(), owners.end());
    std::string all;
    for (const auto& h : owners) all += (all.empty() ? "" : ", ") + h;
    for (const auto& h : owners)
      skipped.emplace_back(h, "node name '" + node + "' is shared by hosts " + all +
                                  "; name their nodes in k8s_node_name_map");
  }
  std::sort(skipped.begin(), skipped.end());
  for (auto& [host, why] : skipped) out.skipped.push_back(host + ": " + why);
  return out;
}

std::string sanitizedObjectName(std::string_view name) {
  if (isDnsSubdomain(name)) return std::string(name);
  std::string out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = name.find('.', start);
    std::string part =
        sanitizedPart(name.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (!part.empty()) {
      if (out.size() + part.size() + 1 > 253) break;
      out += (out.empty() ? "" : ".") + part;
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return out;
}

std::map<std::string, std::string> k8sObjectNames(const std::vector<std::string>& names) {
  std::map<std::string, std::vector<std::string>> bySanitized;
  for (const auto& n : names) {
    std::string s = sanitizedObjectName(n);
    if (!s.empty()) bySanitized[s].push_back(n);
  }
  std::map<std::string, std::string> out;
  for (const auto& [s, raws] : bySanitized) {
    for (const auto& raw : raws) {
      if (raw == s || raws.size() == 1) {
        out[raw] = s;
        continue;
      }
      // Sanitizing collided: the suffix comes from the original name alone.
      std::string base = s.substr(0, std::min<std::size_t>(s.size(), 244));
      while (!base.empty() && !lowerAlnum(base.back())) base.pop_back();
      out[raw] = base + "-" + hashSuffix(raw);
    }
  }
  return out;
}

}  // namespace ibfabric::scheduler_hooks
