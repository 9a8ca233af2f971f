#include "api/federation/federation_config.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

namespace ibfabric::api::federation {
namespace {

using Error = FederationConfigError;

template <typename T>
T scalar(const YAML::Node& node, const std::string& key) {
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    throw Error(key + ": bad value");
  }
}

std::chrono::milliseconds seconds(const YAML::Node& node, const std::string& key, bool zeroOk) {
  const double s = scalar<double>(node, key);
  if (!(s >= 0.0) || (!zeroOk && s == 0.0) || s > 3600.0)
    throw Error(key + ": must be a number of seconds in " + (zeroOk ? "0" : "(0") + "..3600]");
  return std::chrono::milliseconds(static_cast<std::int64_t>(s * 1000.0 + 0.5));
}

void checkKeys(const YAML::Node& map, const std::string& where,
               const std::set<std::string>& known) {
  for (const auto& kv : map) {
    const auto key = kv.first.as<std::string>();
    if (!known.count(key)) throw Error(where + "unknown key '" + key + "'");
  }
}

std::string readFile(const std::filesystem::path& path, const std::string& key) {
  std::ifstream in(path);
  if (!in) throw Error(key + ": cannot read " + path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

MemberConfig parseMember(const YAML::Node& node, std::size_t index) {
  const std::string where = "members[" + std::to_string(index) + "]";
  if (!node.IsMap()) throw Error(where + ": must be a map with url (and name, token, timeout)");
  checkKeys(node, where + ": ", {"name", "url", "token", "token_file", "timeout"});
  MemberConfig m;
  if (auto n = node["name"]) m.name = scalar<std::string>(n, where + ".name");
  if (auto n = node["url"]) m.url = scalar<std::string>(n, where + ".url");
  if (auto n = node["token"]) m.token = scalar<std::string>(n, where + ".token");
  if (auto n = node["token_file"])
    m.token = readFile(scalar<std::string>(n, where + ".token_file"), where + ".token_file");
  if (auto n = node["timeout"]) m.timeout = seconds(n, where + ".timeout", false);
  return m;
}

}  // namespace

bool validSubnetName(std::string_view name) {
  if (name.empty() || name.size() > 40 || name.front() == '-' || name.back() == '-') return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

std::string sanitizeSubnetName(std::string_view text) {
  std::string out;
  for (char c : text) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9')) ? l : '-';
  }
  if (out.size() > 40) out.resize(40);
  while (!out.empty() && out.front() == '-') out.erase(out.begin());
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

std::pair<std::string, int> parseListen(std::string_view text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == text.size())
    throw Error("listen: expected HOST:PORT, got \"" + std::string(text) + "\"");
  std::string_view host = text.substr(0, colon);
  const std::string_view port = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.empty()) throw Error("listen: empty host in \"" + std::string(text) + "\"");
  int p = -1;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (ec != std::errc() || ptr != port.data() + port.size() || p < 0 || p > 65535)
    throw Error("listen: bad port in \"" + std::string(text) + "\"");
  return {std::string(host), p};
}

void FederationConfig::validate() const {
  if (members.empty()) throw Error("members: at least one ibfabricd is needed");
  std::set<std::string> names, urls;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const MemberConfig& m = members[i];
    const std::string where = "members[" + std::to_string(i) + "]";
    if (m.url.rfind("http://", 0) != 0 && m.url.rfind("https://", 0) != 0)
      throw Error(where + ".url: must start with http:// or https:// (got \"" + m.url + "\")");
    if (!urls.insert(m.url).second) throw Error(where + ".url: listed twice: " + m.url);
    if (m.name.empty()) continue;
    if (!validSubnetName(m.name))
      throw Error(where +
                  ".name: a subnet name is a lower-case DNS label ([a-z0-9-], at most 40)"
                  ", got \"" +
                  m.name + "\"");
    if (!names.insert(m.name).second) throw Error(where + ".name: used twice: " + m.name);
  }
}

FederationConfig parseFederationConfig(std::string_view yaml) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    throw Error(std::string("not YAML: ") + e.what());
  }
  if (!root.IsMap()) throw Error("the configuration must be a map (members: [...])");
  checkKeys(root, "",
            {"listen", "timeout", "cache_ttl", "placement", "api_token", "api_token_file",
             "log_level", "members"});
  FederationConfig c;
  if (auto n = root["listen"]) {
    auto [host, port] = parseListen(scalar<std::string>(n, "listen"));
    c.listenHost = host;
    c.listenPort = port;
  }
  if (auto n = root["timeout"]) c.timeout = seconds(n, "timeout", false);
  if (auto n = root["cache_ttl"]) c.cacheTtl = seconds(n, "cache_ttl", true);
  if (auto n = root["placement"]) {
    const auto p = scalar<std::string>(n, "placement");
    if (p == "best") {
      c.placement = RoutingPolicy::kBest;
    } else if (p == "first") {
      c.placement = RoutingPolicy::kFirst;
    } else {
      throw Error("placement: best or first, got \"" + p + "\"");
    }
  }
  if (auto n = root["api_token"]) c.apiToken = scalar<std::string>(n, "api_token");
  if (auto n = root["api_token_file"])
    c.apiToken = readFile(scalar<std::string>(n, "api_token_file"), "api_token_file");
  if (auto n = root["log_level"]) c.logLevel = scalar<std::string>(n, "log_level");
  if (auto n = root["members"]) {
    if (!n.IsSequence()) throw Error("members: must be a list");
    for (std::size_t i = 0; i < n.size(); ++i) c.members.push_back(parseMember(n[i], i));
  }
  c.validate();
  return c;
}

FederationConfig loadFederationConfigFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot read " + path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return parseFederationConfig(ss.str());
}

}  // namespace ibfabric::api::federation
