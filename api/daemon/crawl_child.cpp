#include "api/daemon/crawl_child.h"

#include <cstdio>

#include "discovery/formats.h"

namespace ibfabric::api {

int runCrawlChild(const CrawlOptions& options) {
  try {
    auto topology = makeSmpCrawler(options)->discover();
    std::string text = toJson(*topology).dump();
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
    return std::fflush(stdout) == 0 ? 0 : 3;
  } catch (const CrawlError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 3;
  }
}

}  // namespace ibfabric::api
