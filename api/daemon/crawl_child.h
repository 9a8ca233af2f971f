// The child side of ChildCrawlSource: `ibfabricd --crawl-once [--ca NAME] [--ca-port N]` crawls
// the fabric once with the SMP crawler and prints the topology's JSON model on stdout.
#pragma once

#include "discovery/crawler.h"

namespace ibfabric::api {

/// Crawls once and prints the JSON model (compact, one line) on stdout. Returns the process
/// exit code: 0 on success, 3 after printing the error on stderr (never throws).
int runCrawlChild(const CrawlOptions& options);

}  // namespace ibfabric::api
