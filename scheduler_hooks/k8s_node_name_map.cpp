#include "scheduler_hooks/k8s_node_name_map.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "scheduler_hooks/k8s_names.h"

namespace ibfabric::scheduler_hooks {
namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

/// The next blank-separated word of `s` (consumed).
std::string_view word(std::string_view& s) {
  s = trim(s);
  std::size_t end = 0;
  while (end < s.size() && !blank(s[end])) ++end;
  std::string_view w = s.substr(0, end);
  s = trim(s.substr(end));
  return w;
}

}  // namespace

K8sNodeNameMap K8sNodeNameMap::parse(std::string_view text, std::string_view sourceName) {
  K8sNodeNameMap map;
  int lineNo = 0;
  auto problem = [&](const std::string& what) {
    map.problems_.push_back(
        Problem{lineNo, std::string(sourceName) + ":" + std::to_string(lineNo) + ": " + what});
  };
  while (!text.empty()) {
    const auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    ++lineNo;
    if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    const std::string_view host = word(line);
    const std::string_view node = word(line);
    if (node.empty()) {
      problem("expected '<host> <node-name>', got \"" + std::string(host) + "\"");
      continue;
    }
    if (!line.empty()) {
      problem("unexpected text after the node name: \"" + std::string(line) + "\"");
      continue;
    }
    if (!isDnsSubdomain(node)) {
      problem("'" + std::string(node) + "' is not a Kubernetes node name (" +
              std::string(kDnsSubdomainRule) + ")");
      continue;
    }
    auto [it, added] = map.nodes_.try_emplace(std::string(host), node);
    if (!added) {
      problem("host " + std::string(host) + " listed again (this entry wins)");
      it->second = std::string(node);
    }
  }
  return map;
}

K8sNodeNameMap K8sNodeNameMap::load(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read Kubernetes node-name map " + path.string());
  std::ostringstream buf;
  buf << in.rdbuf();
  return parse(buf.str(), path.string());
}

const std::string* K8sNodeNameMap::find(std::string_view host) const {
  auto it = nodes_.find(host);
  return it == nodes_.end() ? nullptr : &it->second;
}

}  // namespace ibfabric::scheduler_hooks
