#include "discovery/crawler.h"
#include "tools/ibfabric/commands.h"

namespace ibfabric::cli {

void addCrawlOptions(CLI::App& cmd, CrawlOptions& crawl) {
  cmd.add_option("--ca", crawl.ca, "umad device to crawl from (default: the first)");
  cmd.add_option("--ca-port", crawl.caPort, "port of that device (default: first active)");
  cmd.add_option("--max-smps", crawl.maxSmps, "SMPs in flight")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  cmd.add_option("--timeout-ms", crawl.timeoutMs,
                 "SMP timeout in ms (0: libibnetdisc default, 1000)")
      ->capture_default_str();
  cmd.add_option("--retries", crawl.retries, "SMP retries (0: libibnetdisc default, 3)")
      ->capture_default_str();
  cmd.add_option("--hops", crawl.maxHops, "maximum hops to crawl (0: unlimited)")
      ->capture_default_str();
  cmd.add_flag("--mlnx-ext-port-info", crawl.mellanoxExtPortInfo,
               "also query Mellanox ExtendedPortInfo (tells FDR10 from QDR)");
}

}  // namespace ibfabric::cli
