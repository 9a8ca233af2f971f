// Crawl plausibility: a crawl is checked against the last believed topology before it is
// believed.
//
// Why: under MAD loss libibnetdisc returns "successful" crawls with most of the fabric missing
// and no error (a NodeInfo or PortInfo that is lost ends the walk there). Taken as the truth,
// such a crawl turns every missing cable into link_down, every missing port into port_gone and
// every pool allocation on those hosts into degraded. A crawl that lost more than `maxLoss` of
// the last believed nodes or links *while showing that MADs failed* (crawlGaps(): switch ports
// whose PortInfo never came back, or ports whose PortInfo says the link is up but whose remote
// was never read) is implausible: the service retries it once and, if still implausible,
// publishes it as suspect and keeps the last believed topology (CrawlChecker::keep()).
//
// Real removals still show: a crawl without gaps is believed whatever it lost (a cable pulled
// or a node powered off leaves its neighbour's port Down, which is no gap), and a kept model
// still drops the cables of a node missing from `removalAfter` consecutive crawls and the cables
// whose remaining end's PortInfo says the link is down.
//
// Pure functions, and a CrawlChecker owned by the discovery thread (not thread-safe).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "discovery/topology.h"

namespace ibfabric::api {

struct CrawlCheckOptions {
  bool enabled = true;
  /// A crawl that lost more than this fraction of the last believed nodes or links while it
  /// shows gaps is implausible.
  double maxLoss = 0.10;
  /// A node missing from this many consecutive crawls is gone (its cables are removed) even
  /// when those crawls were suspect.
  std::uint32_t removalAfter = 3;
};

/// Evidence in a crawl that its MADs failed.
struct CrawlGaps {
  bool empty = false;               ///< Not even our own node answered (a crawl always has it).
  std::size_t unreadPorts = 0;      ///< Switch ports 1..N without a PortInfo.
  std::size_t unexploredPorts = 0;  ///< Link up (or Active) but no remote node read.
  std::size_t total() const { return (empty ? 1 : 0) + unreadPorts + unexploredPorts; }
};
CrawlGaps crawlGaps(const Topology& t);

/// What a crawl lost against the last believed topology (matched by node GUID and by cable).
struct CrawlLoss {
  std::size_t nodesBefore = 0;
  std::size_t nodesLost = 0;
  std::size_t linksBefore = 0;
  std::size_t linksLost = 0;
  double fraction() const;  ///< The larger of the two lost fractions.
};
CrawlLoss crawlLoss(const Topology& before, const Topology& now);

struct CrawlVerdict {
  bool plausible = true;
  std::string reason;  ///< Set when implausible: what was lost and which gaps showed.
  CrawlLoss loss;
  CrawlGaps gaps;
};
CrawlVerdict judgeCrawl(const Topology& believed, const Topology& now,
                        const CrawlCheckOptions& options);

class CrawlChecker {
 public:
  explicit CrawlChecker(CrawlCheckOptions options = {}) : options_(options) {}

  struct Kept {
    TopologyPtr topology;           ///< `believed`, minus the confirmed removals.
    std::size_t cablesRemoved = 0;  ///< 0: `topology` is `believed` itself.
  };
  /// A suspect crawl `now`: counts one more absence for every believed node it lacks, and
  /// returns the believed topology with the cables removed whose removal is confirmed (a node
  /// missing `removalAfter` times in a row, or an end whose port `now` reads as not up).
  Kept keep(const TopologyPtr& believed, const Topology& now);
  /// A believed crawl: absences start over.
  void believed() { absent_.clear(); }
  const CrawlCheckOptions& options() const { return options_; }

 private:
  CrawlCheckOptions options_;
  std::map<Guid, std::uint32_t> absent_;  ///< Consecutive suspect crawls without the node.
};

}  // namespace ibfabric::api
