#include "api/federation/merged_exports.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace ibfabric::api::federation {
namespace {

constexpr std::string_view kRoot = "ibfabric-root";

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string prefixed(const std::string& subnet, const std::string& name) {
  return name == kRoot ? subnet : subnet + "-" + name;
}

/// "Key=value" fields of a topology.conf line.
std::vector<std::pair<std::string, std::string>> fields(const std::string& line) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(line);
  for (std::string word; in >> word;) {
    const auto eq = word.find('=');
    out.emplace_back(word.substr(0, eq), eq == std::string::npos ? "" : word.substr(eq + 1));
  }
  return out;
}

/// A comment line of a member's export, marked with its subnet.
std::string commentOf(const std::string& subnet, const std::string& line) {
  const std::size_t text = line.find_first_not_of("# ");
  return "# [" + subnet + "] " + (text == std::string::npos ? "" : line.substr(text)) + "\n";
}

std::string problemLine(const SubnetAnswer& a) {
  std::string error = a.problem.is_object() ? a.problem.value("error", "unavailable") : "";
  std::replace(error.begin(), error.end(), '\n', ' ');
  return "subnet " + a.subnet + " UNAVAILABLE: " + error;
}

}  // namespace

std::string prefixedNames(const std::string& subnet, const std::string& expr) {
  std::string out, item;
  int depth = 0;
  auto flush = [&] {
    if (item.empty()) return;
    out += (out.empty() ? "" : ",") + prefixed(subnet, item);
    item.clear();
  };
  for (char c : expr) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      flush();
      continue;
    }
    item += c;
  }
  flush();
  return out;
}

std::string slurmConfOfSubnet(const std::string& subnet, const std::string& conf,
                              std::vector<std::string>* blockSizes) {
  std::string out;
  bool hasRoot = false;
  std::string lastSwitch;
  for (const std::string& line : lines(conf)) {
    if (line.empty()) continue;
    if (line.front() == '#') {
      out += commentOf(subnet, line);
      continue;
    }
    std::string rewritten;
    for (auto& [key, value] : fields(line)) {
      if (key == "BlockSizes") {
        if (blockSizes) *blockSizes = {value};
        rewritten.clear();
        break;
      }
      if (key == "SwitchName") {
        if (value == kRoot) hasRoot = true;
        lastSwitch = prefixed(subnet, value);
        value = lastSwitch;
      } else if (key == "Switches" || key == "BlockName") {
        value = prefixedNames(subnet, value);
      }
      rewritten += (rewritten.empty() ? "" : " ") + key + (value.empty() ? "" : "=" + value);
    }
    if (!rewritten.empty()) out += rewritten + "\n";
  }
  if (!hasRoot && !lastSwitch.empty())
    out += "SwitchName=" + subnet + " Switches=" + lastSwitch + "\n";
  return out;
}

std::string mergedSlurmConf(const std::vector<SubnetAnswer>& answers) {
  std::string head = "# Slurm topology.conf merged by ibfabric-federate from " +
                     std::to_string(answers.size()) +
                     " subnet(s): one root switch per subnet (jobs never span subnets)\n";
  std::string body;
  std::optional<std::set<int>> sizes;
  for (const SubnetAnswer& a : answers) {
    if (!a.available) {
      head += "# " + problemLine(a) + "\n";
      continue;
    }
    std::vector<std::string> own;
    body += slurmConfOfSubnet(a.subnet, a.text, &own);
    if (own.empty()) continue;
    std::set<int> mine;
    std::istringstream in(own.front());
    for (std::string s; std::getline(in, s, ',');)
      if (!s.empty()) mine.insert(std::stoi(s));
    if (!sizes) {
      sizes = mine;
    } else {
      std::set<int> both;
      std::set_intersection(sizes->begin(), sizes->end(), mine.begin(), mine.end(),
                            std::inserter(both, both.begin()));
      sizes = both;
    }
  }
  if (sizes && !sizes->empty()) {
    std::string line;
    for (int s : *sizes) line += (line.empty() ? "" : ",") + std::to_string(s);
    body += "BlockSizes=" + line + "\n";
  }
  return head + body;
}

std::string hyperNodesOfSubnet(const std::string& subnet, const std::string& yaml) {
  std::string out;
  bool hyperNodeMember = false;
  for (const std::string& line : lines(yaml)) {
    if (line.rfind("  name: ", 0) == 0) {
      out += "  name: " + prefixed(subnet, line.substr(8)) + "\n";
      continue;
    }
    if (line == "  labels:") {
      out += line + "\n    ibfabric.io/subnet: \"" + subnet + "\"\n";
      continue;
    }
    if (line.rfind("  - type: ", 0) == 0) hyperNodeMember = line.substr(10) == "HyperNode";
    const std::string memberName = "        name: \"";
    if (hyperNodeMember && line.rfind(memberName, 0) == 0 && line.size() > memberName.size()) {
      const std::string name = line.substr(memberName.size(), line.size() - memberName.size() - 1);
      out += memberName + prefixed(subnet, name) + "\"\n";
      continue;
    }
    if (!line.empty() && line.front() == '#') {
      out += commentOf(subnet, line);
      continue;
    }
    out += line + "\n";
  }
  return out;
}

std::string mergedHyperNodes(const std::vector<SubnetAnswer>& answers) {
  std::string out = "# Volcano HyperNodes merged by ibfabric-federate from " +
                    std::to_string(answers.size()) + " subnet(s), names prefixed by subnet\n";
  std::string docs;
  for (const SubnetAnswer& a : answers) {
    if (!a.available) {
      out += "# " + problemLine(a) + "\n";
      continue;
    }
    docs += hyperNodesOfSubnet(a.subnet, a.text);
  }
  return out + docs;
}

}  // namespace ibfabric::api::federation
