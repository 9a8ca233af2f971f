// Slurm topology.yaml (Slurm 25.05 and later, topology.yaml(5)) from an ExportLayout, and a
// checker of such files. One file holds several named topologies; a partition picks one with
// `Topology=<name>` in slurm.conf, the first with `cluster_default: true` serves the others.
//
// Entries (docs/scheduler.md "topology.yaml"), in the order asked, the first the cluster default:
//   tree    <prefix>-tree: the switches of topology.conf's tree (slurmTreeSwitches)
//   block   <prefix>-block: the blocks and block_sizes of topology.conf's block
//   flat    <prefix>-flat: `flat: true`, for partitions that should ignore the fabric
//   groups  <prefix>-sg01, ...: one tree per spine group (a pod, a scalable unit of a large
//           superpod) holding that group's leaves and the switches wholly inside it, for
//           partitions confined to one group. Added by default when there are several groups.
// topology.conf (export_slurm.h) stays the default export for Slurm before 25.05.
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler_hooks/export_layout.h"

namespace ibfabric::scheduler_hooks {

enum class SlurmYamlEntry { kTree, kBlock, kFlat, kGroups };

struct SlurmYamlOptions {
  /// What to write, in order; empty = tree, block, flat, then groups when there are several.
  std::vector<SlurmYamlEntry> entries;
  /// Topology names are "<prefix>-tree", ...: letters, digits, '-', '_' and '.'.
  std::string prefix = "ibfabric";
};

/// "tree,block,flat,groups" (any subset, any order, no repeats); the problem as one line.
std::optional<std::string> parseSlurmYamlEntries(std::string_view text,
                                                 std::vector<SlurmYamlEntry>& out);
/// Why `prefix` cannot name topologies, or nullopt.
std::optional<std::string> slurmYamlPrefixProblem(std::string_view prefix);

/// The file text. Throws std::invalid_argument when no host is left to export.
std::string slurmTopologyYaml(const ExportLayout& layout, const SlurmYamlOptions& options = {});

/// Problems of a topology.yaml by the rules of topology.yaml(5) (empty = accepted): a sequence of
/// mappings whose first key is `topology` (a unique name), `cluster_default` a boolean, exactly
/// one of block / flat / ring / torus3d / tree, known keys only; tree switches and blocks are
/// then held to every rule checkSlurmTopologyConf() applies to topology.conf.
std::vector<std::string> checkSlurmTopologyYaml(std::string_view text);

}  // namespace ibfabric::scheduler_hooks
