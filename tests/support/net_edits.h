// Edits of a NetFabric (a parsed or generated net file) for tests that compare a plan with a
// changed fabric: find a node by id, take a cable out, put one in. Each edit re-indexes the
// fabric. A missing port is a test failure; a missing node throws std::runtime_error.
//
// Not thread-safe: they change the fabric they are given.
#pragma once

#include <optional>
#include <string>

#include "discovery/netfile.h"

namespace ibfabric::testing {

/// The node whose quoted id is `id`.
NetNode& nodeById(NetFabric& f, const std::string& id);

/// Removes the cable on `id`[port] (both ends).
void unlink(NetFabric& f, const std::string& id, int port);

/// Cables `a`[pa] to `b`[pb], both ends at `rate`.
void link(NetFabric& f, const std::string& a, int pa, const std::string& b, int pb,
          std::optional<LinkRate> rate = LinkRate{LinkWidth::k4x, LinkSpeed::kHdr});

/// `node`'s first port cabled to a switch (a leaf's first up-link); nullptr when none.
const NetPort* firstSwitchPort(const NetFabric& f, const NetNode& node);

}  // namespace ibfabric::testing
