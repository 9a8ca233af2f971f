#include "api/metrics/metrics_body.h"

#include <algorithm>
#include <stdexcept>

#include "api/metrics/gzip.h"

namespace ibfabric::api {

MetricsBody::MetricsBody(RenderedMetricsPtr rendering, bool gzip, std::string tail)
    : rendering_(std::move(rendering)),
      gzip_(gzip),
      headSize_(gzip ? rendering_->page.bytes : rendering_->page.textBytes),
      tail_(std::move(tail)) {}

MetricsBody::~MetricsBody() = default;
MetricsBody::MetricsBody(MetricsBody&&) noexcept = default;
MetricsBody& MetricsBody::operator=(MetricsBody&&) noexcept = default;

std::string_view MetricsBody::chunk(std::size_t offset, std::size_t max) {
  if (offset >= headSize_) {
    const std::size_t at = std::min(offset - headSize_, tail_.size());
    return std::string_view(tail_).substr(at, max);
  }
  return gzip_ ? headChunk(offset, max) : plainChunk(offset, max);
}

std::string_view MetricsBody::headChunk(std::size_t offset, std::size_t max) {
  const auto& chunks = rendering_->page.chunks;
  if (offset < chunkStart_) chunkIndex_ = chunkStart_ = 0;  // asked for an earlier part
  while (offset >= chunkStart_ + chunks[chunkIndex_].size()) {
    chunkStart_ += chunks[chunkIndex_].size();
    ++chunkIndex_;
  }
  return std::string_view(chunks[chunkIndex_]).substr(offset - chunkStart_, max);
}

std::string_view MetricsBody::plainChunk(std::size_t offset, std::size_t max) {
  const auto& chunks = rendering_->page.chunks;
  if (!inflater_ || offset < pieceStart_) {  // the start, or an earlier part: inflate anew
    inflater_ = std::make_unique<GunzipStream>();
    chunkIndex_ = 0;
    pending_ = {};
    piece_.clear();
    pieceStart_ = 0;
  }
  while (offset >= pieceStart_ + piece_.size()) {
    pieceStart_ += piece_.size();
    piece_.resize(kPlainPieceBytes);
    std::size_t n = 0;
    while (n < piece_.size() && (!pending_.empty() || chunkIndex_ < chunks.size())) {
      if (pending_.empty()) pending_ = chunks[chunkIndex_++];
      n += inflater_->inflate(pending_, piece_.data() + n, piece_.size() - n);
    }
    piece_.resize(n);
    if (n == 0) throw std::runtime_error("metrics: the stored page ends before its size");
  }
  return std::string_view(piece_).substr(offset - pieceStart_, max);
}

}  // namespace ibfabric::api
