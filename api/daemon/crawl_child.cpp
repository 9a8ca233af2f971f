#include "api/daemon/crawl_child.h"

#include <cstdio>
#include <exception>

#include "discovery/formats.h"

namespace ibfabric::api {

int runCrawlChild(const CrawlOptions& options) {
  // Whatever goes wrong is one line on stderr and exit code 3 (the parent retries and reports
  // it), never an abort: a description that is not valid UTF-8 is written with U+FFFD by
  // writeJson, anything else thrown is caught here.
  try {
    auto topology = makeSmpCrawler(options)->discover();
    // Streamed: the document is never whole in the child's memory either.
    writeJson(*topology,
              [](std::string_view piece) { std::fwrite(piece.data(), 1, piece.size(), stdout); });
    std::fputc('\n', stdout);
    return std::fflush(stdout) == 0 ? 0 : 3;
  } catch (const CrawlError& e) {
    std::fprintf(stderr, "%s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "crawl failed: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "crawl failed: unknown exception\n");
  }
  return 3;
}

}  // namespace ibfabric::api
