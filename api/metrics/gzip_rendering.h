// renderGzip: the state collectors rendered straight into gzip, never as a whole text. Each
// collector writes through a streaming MetricWriter into a scratch buffer of `pieceBytes`; every
// full piece is deflated into that collector's own gzip member and the buffer is reused. A
// collector that throws loses its member (what it wrote is never on the page) and reports
// success false, as runCollector promises; the members of the others, concatenated, are the
// page (RFC 1952 section 2.2), their text byte for byte what renderState would have written.
//
// Memory of a rendering: the compressed page (in chunks, no reallocation copies), one piece of
// text, zlib's deflate state (~300 KB); the scratch goes when the function returns. Pure
// function of its inputs; thread-safe as the collectors are.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "api/metrics/collector.h"

namespace ibfabric::api {

struct GzipRendering {
  /// The gzip members of the collectors that succeeded, in order, as chunks of compressed bytes.
  std::vector<std::string> chunks;
  std::size_t bytes = 0;                    ///< compressed, every chunk
  std::size_t textBytes = 0;                ///< the text the chunks decompress to
  std::vector<CollectorResult> collectors;  ///< one per collector, in order
  std::size_t scratchBytes = 0;             ///< the text buffer's capacity at its largest
};

/// Text pieces deflated at a time.
inline constexpr std::size_t kRenderPieceBytes = 256 * 1024;

GzipRendering renderGzip(const std::vector<CollectorPtr>& collectors, const CollectContext& context,
                         std::size_t pieceBytes = kRenderPieceBytes);

}  // namespace ibfabric::api
