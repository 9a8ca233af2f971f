// gzip (RFC 1952) of /metrics: a whole text at once (gzipCompress), a member compressed as its
// text arrives (GzipMemberWriter, the page's renderer) and concatenated members decompressed
// piece by piece (GunzipStream, plain-text scrapes of a page that is kept compressed).
// Members concatenated form one valid gzip stream (RFC 1952 section 2.2).
//
// gzipCompress is a pure function. GzipMemberWriter and GunzipStream are owned by one rendering
// or one scrape and are not thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/metrics/metric_writer.h"

struct z_stream_s;

namespace ibfabric::api {

/// gzip of `data` at zlib level `level`, one member; empty on failure.
std::string gzipCompress(std::string_view data, int level = 1);

/// One gzip member, deflated as its text arrives (a TextSink for a streaming MetricWriter). The
/// compressed bytes go into chunks of at most `chunkBytes`, each allocated once at its final
/// size but the last: the member grows without copying what it holds.
class GzipMemberWriter final : public TextSink {
 public:
  static constexpr std::size_t kChunkBytes = 256 * 1024;

  explicit GzipMemberWriter(int level = 1, std::size_t chunkBytes = kChunkBytes);
  ~GzipMemberWriter() override;
  GzipMemberWriter(const GzipMemberWriter&) = delete;
  GzipMemberWriter& operator=(const GzipMemberWriter&) = delete;

  /// Deflates `text`; throws std::runtime_error when zlib fails.
  void write(std::string_view text) override;
  /// Ends the member and gives its chunks (the last one trimmed to its size); throws
  /// std::runtime_error when zlib fails. The writer is spent after.
  std::vector<std::string> finish();
  /// Text bytes written so far.
  std::size_t textBytes() const { return textBytes_; }

 private:
  void deflateAll(int flush);

  std::unique_ptr<z_stream_s> z_;
  const std::size_t chunkBytes_;
  std::vector<std::string> chunks_;  // the last one is being filled
  std::size_t textBytes_ = 0;
};

/// Decompresses one or several concatenated gzip members given in pieces, into a caller's
/// buffer: memory is zlib's inflate state (about 40 KB) whatever the size of the text.
class GunzipStream {
 public:
  GunzipStream();
  ~GunzipStream();
  GunzipStream(const GunzipStream&) = delete;
  GunzipStream& operator=(const GunzipStream&) = delete;

  /// Inflates from `in` (advanced past what was consumed) into `out[0, max)`; returns the bytes
  /// written (0 only when `in` is used up or `max` is 0). Throws std::runtime_error on a
  /// corrupt stream.
  std::size_t inflate(std::string_view& in, char* out, std::size_t max);

 private:
  std::unique_ptr<z_stream_s> z_;
  bool memberEnded_ = false;
};

}  // namespace ibfabric::api
