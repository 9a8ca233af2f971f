// checkSlurmTopologyYaml() (export_slurm_yaml.h): the rules of topology.yaml(5) on the file's
// structure; each tree and block topology is then rewritten as topology.conf lines and held to
// checkSlurmTopologyConf(), so both formats obey the same rules.
#include <yaml-cpp/yaml.h>

#include <set>

#include "scheduler_hooks/export_slurm.h"
#include "scheduler_hooks/export_slurm_yaml.h"

namespace ibfabric::scheduler_hooks {
namespace {

using Problems = std::vector<std::string>;

/// A scalar string field, or "" (with a problem when present but not a scalar).
std::string text(const YAML::Node& map, const char* key, const std::string& where, Problems& p) {
  const YAML::Node v = map[key];
  if (!v) return "";
  if (!v.IsScalar()) {
    p.push_back(where + ": " + key + " must be a string");
    return "";
  }
  return v.as<std::string>();
}

void knownKeys(const YAML::Node& map, const std::set<std::string>& known, const std::string& where,
               Problems& p) {
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>();
    if (!known.count(key)) p.push_back(where + ": unknown key '" + key + "'");
  }
}

/// The list `key` of `map`, each item a mapping; empty with a problem otherwise.
std::vector<YAML::Node> items(const YAML::Node& map, const char* key, const std::string& where,
                              Problems& p) {
  const YAML::Node list = map[key];
  if (!list || !list.IsSequence() || list.size() == 0) {
    p.push_back(where + ": " + key + " must be a non-empty list");
    return {};
  }
  std::vector<YAML::Node> out;
  for (const auto& item : list) {
    if (!item.IsMap()) {
      p.push_back(where + ": every item of " + key + " must be a mapping");
      continue;
    }
    out.push_back(item);
  }
  return out;
}

void checkConf(const std::string& conf, SlurmPlugin plugin, const std::string& where, Problems& p) {
  for (const auto& problem : checkSlurmTopologyConf(conf, plugin))
    p.push_back(where + ": " + problem);
}

void checkTree(const YAML::Node& tree, const std::string& where, Problems& p) {
  if (!tree.IsMap()) return p.push_back(where + ": tree must be a mapping");
  knownKeys(tree, {"switches"}, where + ".tree", p);
  std::string conf;
  for (const YAML::Node& sw : items(tree, "switches", where + ".tree", p)) {
    const std::string w = where + ".tree.switches";
    knownKeys(sw, {"switch", "children", "nodes"}, w, p);
    const std::string name = text(sw, "switch", w, p);
    if (name.empty()) p.push_back(w + ": a switch without 'switch' (its name)");
    const std::string children = text(sw, "children", w, p), nodes = text(sw, "nodes", w, p);
    conf += "SwitchName=" + name + (children.empty() ? "" : " Switches=" + children) +
            (nodes.empty() ? "" : " Nodes=" + nodes) + "\n";
  }
  if (!conf.empty()) checkConf(conf, SlurmPlugin::kTree, where, p);
}

void checkBlock(const YAML::Node& block, const std::string& where, Problems& p) {
  if (!block.IsMap()) return p.push_back(where + ": block must be a mapping");
  knownKeys(block, {"block_sizes", "blocks"}, where + ".block", p);
  std::string sizes;
  const YAML::Node bs = block["block_sizes"];
  if (!bs || !bs.IsSequence() || bs.size() == 0) {
    p.push_back(where + ".block: block_sizes must be a non-empty list of sizes");
  } else {
    for (const auto& s : bs) sizes += (sizes.empty() ? "" : ",") + s.as<std::string>();
  }
  std::string conf;
  for (const YAML::Node& b : items(block, "blocks", where + ".block", p)) {
    const std::string w = where + ".block.blocks";
    knownKeys(b, {"block", "nodes"}, w, p);
    const std::string name = text(b, "block", w, p), nodes = text(b, "nodes", w, p);
    if (name.empty()) p.push_back(w + ": a block without 'block' (its name)");
    conf += "BlockName=" + name + (nodes.empty() ? "" : " Nodes=" + nodes) + "\n";
  }
  if (!sizes.empty()) conf += "BlockSizes=" + sizes + "\n";
  if (!conf.empty()) checkConf(conf, SlurmPlugin::kBlock, where, p);
}

void checkFlat(const YAML::Node& flat, const std::string& where, Problems& p) {
  if (flat.IsScalar()) {
    if (flat.as<std::string>() != "true") p.push_back(where + ": flat must be true or a mapping");
    return;
  }
  if (!flat.IsMap()) return p.push_back(where + ": flat must be true or a mapping");
  knownKeys(flat, {"alpha_step_rank"}, where + ".flat", p);
}

void checkEntry(const YAML::Node& e, std::size_t index, std::set<std::string>& names, Problems& p) {
  std::string where = "topology " + std::to_string(index + 1);
  if (!e.IsMap()) return p.push_back(where + ": not a mapping");
  if (e.begin() == e.end() || e.begin()->first.as<std::string>() != "topology")
    p.push_back(where + ": 'topology' must be the first attribute");
  const std::string name = text(e, "topology", where, p);
  if (name.empty()) return p.push_back(where + ": no topology name");
  where = "topology '" + name + "'";
  if (!names.insert(name).second) p.push_back(where + ": defined twice");
  knownKeys(e, {"topology", "cluster_default", "block", "flat", "ring", "torus3d", "tree"}, where,
            p);
  if (const YAML::Node d = e["cluster_default"]) {
    const std::string v = d.IsScalar() ? d.as<std::string>() : "";
    if (v != "true" && v != "false") p.push_back(where + ": cluster_default must be true or false");
  }
  int types = 0;
  for (const char* t : {"block", "flat", "ring", "torus3d", "tree"}) types += e[t] ? 1 : 0;
  if (types != 1) p.push_back(where + ": needs exactly one of block, flat, ring, torus3d, tree");
  if (e["tree"]) checkTree(e["tree"], where, p);
  if (e["block"]) checkBlock(e["block"], where, p);
  if (e["flat"]) checkFlat(e["flat"], where, p);
}

}  // namespace

std::vector<std::string> checkSlurmTopologyYaml(std::string_view yaml) {
  Problems p;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return {std::string("not YAML: ") + e.what()};
  }
  if (!root.IsSequence() || root.size() == 0) return {"the file must be a list of topologies"};
  std::set<std::string> names;
  for (std::size_t i = 0; i < root.size(); ++i) {
    try {
      checkEntry(root[i], i, names, p);
    } catch (const YAML::Exception& e) {
      p.push_back("topology " + std::to_string(i + 1) + ": " + e.what());
    }
  }
  return p;
}

}  // namespace ibfabric::scheduler_hooks
