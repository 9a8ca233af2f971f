// `ibfabric place` without --server: crawl, read every switch's forwarding table, sweep the
// counters twice `interval` apart for the link load and health, then place.
#pragma once

#include "discovery/crawler.h"
#include "routing/placement.h"

namespace ibfabric::cli {

/// Throws CliError for fabric access problems, routing::PlacementError from the engine.
routing::PlacementAnswer placeLocally(const CrawlOptions& crawl, double intervalSeconds,
                                      const routing::PlacementRequest& request);

}  // namespace ibfabric::cli
