// Streaming gzip (RFC 1952) for the documents the REST API renders once and keeps compressed
// (api/http/document_cache.h): GzipWriter compresses while a document is written, piece by piece
// or through a std::ostream (GzipWriter::Stream, for `os << json`), so the plain text never
// exists whole; GunzipReader inflates such a document chunk by chunk for a client that does not
// accept gzip, so serving it needs no plain copy either.
//
// Each object is owned by one thread at a time (not thread-safe); the compressed bytes a
// GunzipReader reads must outlive it.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

namespace ibfabric::api {

class GzipWriter {
 public:
  /// zlib `level` (1: fastest; the documents compress ~10x at level 1).
  explicit GzipWriter(int level = 1);
  ~GzipWriter();
  GzipWriter(const GzipWriter&) = delete;
  GzipWriter& operator=(const GzipWriter&) = delete;

  void append(std::string_view data);
  /// Ends the stream and gives the compressed bytes; the writer is spent afterwards. Throws
  /// std::runtime_error when zlib failed (out of memory).
  std::string finish();
  /// Uncompressed bytes appended so far.
  std::size_t plainSize() const { return plainSize_; }

  /// A std::ostream that appends to a GzipWriter through a 16 KiB buffer, flushed by flush()
  /// and when the stream is destroyed: destroy (or flush) it before calling finish().
  class Stream : private std::streambuf, public std::ostream {
   public:
    explicit Stream(GzipWriter& writer);
    ~Stream() override;

   private:
    std::streambuf::int_type overflow(std::streambuf::int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;
    int sync() override;
    GzipWriter& writer_;
    char buffer_[16 * 1024];
  };

 private:
  void deflateAll(int flush);
  z_stream z_{};
  bool ok_ = false;
  bool finished_ = false;
  std::size_t plainSize_ = 0;
  std::string out_;
};

class GunzipReader {
 public:
  explicit GunzipReader(std::string_view gzip);
  ~GunzipReader();
  GunzipReader(const GunzipReader&) = delete;
  GunzipReader& operator=(const GunzipReader&) = delete;

  /// Up to `max` (> 0) inflated bytes into `out`; 0 at the end of the stream. Throws
  /// std::runtime_error on a corrupt stream.
  std::size_t read(char* out, std::size_t max);
  /// Inflated bytes handed out so far.
  std::size_t position() const { return position_; }
  /// Back to the first byte.
  void rewind();

 private:
  std::string_view gzip_;
  z_stream z_{};
  bool ended_ = false;
  std::size_t position_ = 0;
};

}  // namespace ibfabric::api
