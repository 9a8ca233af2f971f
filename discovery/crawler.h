// Discovery sources: where Topology snapshots come from.
//
// TopologySource is the seam between the fabric and everything above discovery: the real one
// crawls the subnet with SMPs (libibnetdisc, through umad: a real HCA or ibsim's umad2sim), and
// tests feed fixed snapshots (e.g. built from a net file, see net_topology.h).
//
// A source is used from one thread at a time; the snapshots it returns are immutable and
// thread-safe.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "discovery/topology.h"

namespace ibfabric {

/// The fabric could not be crawled (no umad device, unknown CA, simulator not running, crawl
/// failure). what() is one line.
class CrawlError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Knobs of an SMP crawl. Zero means "libibnetdisc's default" for timeout and retries.
struct CrawlOptions {
  std::string ca;  // umad device name ("mlx5_0"); empty = the first one
  int caPort = 0;  // 0 = the first active port
  // SMPs in flight. libibnetdisc's own default is 2; 32 crawled a 2,048-HCA ibsim fabric in
  // ~0.09-0.12 s against ~0.3 s at 2 (same MAD count).
  unsigned maxSmps = 32;
  unsigned timeoutMs = 0;
  unsigned retries = 0;
  unsigned maxHops = 0;  // 0 = unlimited
  /// Also query Mellanox ExtendedPortInfo (needed to tell FDR10 from QDR). Off by default: it
  /// costs an extra SMP per port on Mellanox nodes.
  bool mellanoxExtPortInfo = false;
  std::shared_ptr<const NodeNameMap> nodeNameMap;
};

class TopologySource {
 public:
  virtual ~TopologySource() = default;
  /// Produces a fresh snapshot; throws CrawlError when the fabric cannot be read.
  virtual TopologyPtr discover() = 0;
  /// "ibnetdisc mlx5_0:1", "fixed <name>" — for logs.
  virtual std::string describe() const = 0;
};
using TopologySourcePtr = std::unique_ptr<TopologySource>;

/// The real crawler (libibnetdisc). Checks for a umad device up front so that a missing
/// device or simulator is a clear CrawlError rather than a library message.
TopologySourcePtr makeSmpCrawler(CrawlOptions options);

/// A source that always returns the same snapshot (for tests and replay).
TopologySourcePtr makeFixedSource(TopologyPtr topology, std::string name = "fixed");

}  // namespace ibfabric
