// Fuzz target: the OpenSM event plugin's wire format as the daemon reads it from its socket
// (api/osm/osm_events.h): the byte stream split into lines (LineSplitter, fed in two reads at
// a point the input chooses) and every line parsed (parseOsmEvent).
//
// Any bytes: a line parses or throws OsmEventError, nothing else; an event's derived fields
// are readable.
#include <algorithm>

#include "api/osm/osm_events.h"
#include "tests/fuzz/fuzz_support.h"

using namespace ibfabric;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

namespace {

void parseLines(const std::vector<std::optional<std::string>>& lines) {
  for (const auto& line : lines) {
    if (!line) continue;
    try {
      const api::OsmEvent e = api::parseOsmEvent(*line);
      (void)api::toString(e.type);
      (void)e.trapSwitchLid();
    } catch (const api::OsmEventError&) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes = fuzz::asText(data + 1, size - 1);
  const std::size_t cut = std::min<std::size_t>(data[0] * 4, bytes.size());
  // A small line limit, so overlong lines are reached by small inputs too.
  api::LineSplitter splitter(data[0] % 2 ? 512 : api::kMaxOsmLineBytes);
  parseLines(splitter.feed(bytes.substr(0, cut)));
  parseLines(splitter.feed(bytes.substr(cut)));
  return 0;
}
