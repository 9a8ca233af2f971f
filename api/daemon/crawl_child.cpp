#include "api/daemon/crawl_child.h"

#include <cstdio>

#include "discovery/formats.h"

namespace ibfabric::api {

int runCrawlChild(const CrawlOptions& options) {
  try {
    auto topology = makeSmpCrawler(options)->discover();
    // Streamed: the document is never whole in the child's memory either.
    writeJson(*topology,
              [](std::string_view piece) { std::fwrite(piece.data(), 1, piece.size(), stdout); });
    std::fputc('\n', stdout);
    return std::fflush(stdout) == 0 ? 0 : 3;
  } catch (const CrawlError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 3;
  }
}

}  // namespace ibfabric::api
