// The topology generator behind `ibfabric topo gen`: builds fat-tree fabrics (NetFabric values)
// with realistic names that ibsim loads and OpenSM's ftree routing engine routes.
//
// Presets (docs/topogen.md has the wiring and the naming in full):
//   two-level   --leaves L --spines S --hosts-per-leaf H [--links-per-spine K] [--hcas-per-host N]
//   three-level --pods P --leaves-per-pod L --spines-per-pod S --cores C --hosts-per-leaf H
//               [--links-per-spine K] [--links-per-core K2] [--hcas-per-host N]
//   superpod    --sus N   (DGX SuperPOD-like, rail-optimized: 32 nodes x 8 HCAs per SU)
//
// Naming: node ids are the short names ("leaf-01", "spine-p2-03", "leaf-su1-r1", "core-001",
// "dgx0001-mlx5_0"); switch descriptions read like NVIDIA switches
// ("MF0;leaf-su1-r1:MQM9790-NS2F/U1"), HCA descriptions "<hostname> mlx5_<n>". GUIDs follow
// ibsim's convention (switches 0x200000 + i, CAs 0x100000 + 2i, port GUID = node GUID + 1) and
// are written to the file. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "discovery/link_rate.h"
#include "discovery/netfile.h"

namespace ibfabric {

/// Bad generator options; what() is one line naming the option.
class TopoGenError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// A switch product the generator can place.
struct SwitchModel {
  std::string_view name;        // option value: "qm8790"
  std::string_view partNumber;  // in the description: "MQM8790-HS2F"
  int ports;
  std::uint32_t deviceId;
};
/// QM8790 (40-port HDR Quantum) and QM9790 (64-port Quantum-2), smallest first.
const std::vector<SwitchModel>& switchModels();

/// One `--degrade` request: "leaf-su1-r1[33]=1x" or "leaf-01[5]=4xEDR" (both ends change).
struct LinkOverride {
  std::string nodeId;
  PortNum port;
  LinkRate rate;
};
/// Parses "ID[PORT]=RATE"; RATE is a width ("1x": the fabric speed stays) or a full rate.
LinkOverride parseLinkOverride(std::string_view text, LinkRate base);

/// Everything `topo gen` accepts. Each preset requires some fields and rejects the others.
struct TopoOptions {
  std::optional<int> leaves, spines, hostsPerLeaf, linksPerSpine, hcasPerHost;
  std::optional<int> pods, leavesPerPod, spinesPerPod, cores, linksPerCore;
  std::optional<int> sus;
  std::string hostPrefix = "dgx";
  std::string switchModel;           // "" = the smallest model with enough ports
  std::string rate = "4xHDR";        // every link (ibsim 0.10 runs up to HDR)
  std::vector<std::string> degrade;  // "ID[PORT]=RATE"
};

struct GeneratedTopology {
  NetFabric fabric;
  std::string preset;
  std::string commandLine;  // the options as `topo gen` takes them, normalized
  int hosts = 0;
  int hcasPerHost = 0;  // "rails" in the superpod
  int leaves = 0, spines = 0, cores = 0;
  SwitchModel model{};
  LinkRate rate;  // of every link but the degraded ones
  std::vector<LinkOverride> degraded;

  /// Node, switch and port counts for `ibsim -N -S -P` (ibsim counts port 0 of switches).
  int ibsimNodes() const;
  int ibsimSwitches() const;
  int ibsimPorts() const;
  /// "# ..." lines for the top of the file: preset, options, counts, ibsim sizing.
  std::string headerComment() const;
};

std::vector<std::string_view> topoPresets();  // "two-level", "three-level", "superpod"

/// Builds a preset. Throws TopoGenError for an unknown preset, missing/unknown/out-of-range
/// options, switches that would need more ports than the model has, or a bad --degrade.
GeneratedTopology generateTopology(std::string_view preset, const TopoOptions& options);

}  // namespace ibfabric
