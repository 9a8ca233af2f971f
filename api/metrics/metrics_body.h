// RenderedMetrics: one rendering of the state collectors for one shard of the page, kept only
// compressed (gzip members in chunks, api/metrics/gzip_rendering.h). MetricsBody: one scrape's
// response body, the rendering followed by the tail this scrape rendered (the live collectors and
// the collector status). A gzip scrape gets the stored chunks as they are, then the tail as one
// more gzip member. A plain-text scrape gets the chunks inflated on the fly, piece by piece, as
// the server asks for them: its memory is one inflate state and one buffer of kPlainPieceBytes
// (about 100 KB), whatever the size of the page.
//
// RenderedMetrics is immutable once made; share it through RenderedMetricsPtr. A MetricsBody is
// owned by one response and read by the server thread sending it: not thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/metrics/collector.h"
#include "api/metrics/gzip_rendering.h"
#include "api/service/service_state.h"

namespace ibfabric::api {

class GunzipStream;

struct RenderedMetrics {
  GzipRendering page;  ///< the state collectors' families, compressed
  std::vector<CollectorResult> fabricReads;
  MetricsShard shard;
  std::weak_ptr<const ServiceState> state;
  std::uint64_t lastEventId = 0;
  double renderSeconds = 0;  ///< rendering and compression, interleaved
};
using RenderedMetricsPtr = std::shared_ptr<const RenderedMetrics>;

class MetricsBody {
 public:
  /// Inflated text handed out at a time by a plain-text body.
  static constexpr std::size_t kPlainPieceBytes = 64 * 1024;

  /// `tail`: this scrape's families, as a gzip member when `gzip`, else as text.
  MetricsBody(RenderedMetricsPtr rendering, bool gzip, std::string tail);
  ~MetricsBody();
  MetricsBody(MetricsBody&&) noexcept;
  MetricsBody& operator=(MetricsBody&&) noexcept;

  /// Content-Encoding gzip.
  bool gzip() const { return gzip_; }
  /// Bytes of the whole body as sent (the text's size for a plain-text body).
  std::size_t size() const { return headSize_ + tail_.size(); }
  /// Up to `max` bytes from `offset` (< size()); empty only when `max` is 0. The view is valid
  /// until the next call. Reading in order is cheapest; a plain-text body asked for an earlier
  /// offset inflates again from the start.
  std::string_view chunk(std::size_t offset, std::size_t max);

 private:
  std::string_view headChunk(std::size_t offset, std::size_t max);
  std::string_view plainChunk(std::size_t offset, std::size_t max);

  RenderedMetricsPtr rendering_;
  bool gzip_;
  std::size_t headSize_;
  std::string tail_;
  // Reading position in the stored chunks: chunk index, and the head offset it starts at.
  std::size_t chunkIndex_ = 0;
  std::size_t chunkStart_ = 0;
  // Plain text: the inflater, the rest of the current chunk, the inflated piece and its offset.
  std::unique_ptr<GunzipStream> inflater_;
  std::string_view pending_;
  std::string piece_;
  std::size_t pieceStart_ = 0;
};

}  // namespace ibfabric::api
