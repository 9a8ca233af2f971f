// The scheduler exports of several subnets as one document, pure functions of the members'
// texts. Jobs never span subnets, so no document joins them:
//   Slurm topology.conf (tree): each subnet's switches prefixed "<subnet>-" and its root (the
//     daemon's "ibfabric-root", or its one top switch) renamed to "<subnet>": one root per
//     subnet, no common parent, so Slurm never places a job across two subnets.
//   Slurm topology.conf (block): each subnet's blocks prefixed; BlockSizes = the sizes every
//     subnet lists.
//   Volcano HyperNodes: each subnet's HyperNodes prefixed (names and HyperNode members), the
//     daemon's root renamed "<subnet>", labelled ibfabric.io/subnet.
// Host (node) names are not changed: they are the cluster's. Thread-safe (pure).
#pragma once

#include <string>
#include <vector>

#include "api/federation/subnet_answer.h"

namespace ibfabric::api::federation {

/// One subnet's topology.conf (either plugin) rewritten as described above.
std::string slurmConfOfSubnet(const std::string& subnet, const std::string& conf,
                              std::vector<std::string>* blockSizes = nullptr);
/// The merged topology.conf of the available answers (texts), with a comment line per subnet
/// (and per unavailable subnet, with its error).
std::string mergedSlurmConf(const std::vector<SubnetAnswer>& answers);

/// One subnet's HyperNode YAML (the daemon's export) rewritten as described above.
std::string hyperNodesOfSubnet(const std::string& subnet, const std::string& yaml);
/// The merged HyperNode documents of the available answers.
std::string mergedHyperNodes(const std::vector<SubnetAnswer>& answers);

/// `expr` (a Slurm host-list expression, e.g. "leaf-[01-04],spine-01") with every top-level
/// item prefixed "<subnet>-", and "ibfabric-root" named `subnet`.
std::string prefixedNames(const std::string& subnet, const std::string& expr);

}  // namespace ibfabric::api::federation
