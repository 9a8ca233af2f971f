// Slurm topology.conf from an ExportLayout, for the topology/tree and topology/block plugins
// (topology.conf(5); docs/scheduler.md), and a strict checker of such files.
//
// tree:  one "leaf switch" line per leaf set (`SwitchName=leaf-01 Nodes=dgx[0001-0032]`; on a
//        rail-optimized fabric one per scalable unit, `SwitchName=su01 ...`, so every node is on
//        exactly one leaf as Slurm wants), then every spine and core switch with the switches it
//        reaches downwards (`SwitchName=spine-01 Switches=su[01-04]`), and a synthetic
//        `SwitchName=ibfabric-root` over the top switches when there is more than one, so that
//        exactly one switch reaches every node (otherwise Slurm warns "no switch can reach all
//        nodes through its descendants" and jobs cannot span the top switches).
// block: one `BlockName=<leaf set> Nodes=...` per leaf set, ordered by spine group so that
//        neighbouring blocks share spines, and `BlockSizes=` the smallest block, then doubling
//        up to the largest power-of-two number of blocks.
// Hosts left out (unhealthy on request) are listed in comments. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scheduler_hooks/export_layout.h"

namespace ibfabric::scheduler_hooks {

enum class SlurmPlugin { kTree, kBlock };
std::optional<SlurmPlugin> parseSlurmPlugin(std::string_view text);  // "tree" | "block"
std::string_view toString(SlurmPlugin p);

/// One switch of the tree: a leaf (leaf set) with its nodes, or a switch with its children.
struct SlurmSwitch {
  std::string name;
  std::vector<std::string> nodes;     ///< hosts (leaf sets), sorted
  std::vector<std::string> switches;  ///< child switch names, sorted
  int group = -1;                     ///< spine group of everything below it; -1 when several
};
/// The tree, leaves first, each switch after its children (topology.conf and topology.yaml).
std::vector<SlurmSwitch> slurmTreeSwitches(const ExportLayout& layout);

/// The blocks (one per leaf set: name, hosts) and the block sizes.
struct SlurmBlocks {
  std::vector<std::pair<std::string, std::vector<std::string>>> blocks;
  std::vector<std::size_t> sizes;
};
SlurmBlocks slurmBlocks(const ExportLayout& layout);

/// The file text. Throws std::invalid_argument when no host is left to export.
std::string slurmTopologyConf(const ExportLayout& layout, SlurmPlugin plugin);

/// Problems found in a topology.conf (empty = accepted): unknown keys, names over 64 characters,
/// duplicate or undefined switches/blocks, bad hostlists, lines over 1024 characters, a node on
/// several leaf switches or blocks, switch loops, not exactly one top switch reaching every node
/// (tree); a missing or malformed BlockSizes, blocks below the base size (block).
std::vector<std::string> checkSlurmTopologyConf(std::string_view text, SlurmPlugin plugin);

}  // namespace ibfabric::scheduler_hooks
