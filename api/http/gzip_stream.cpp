#include "api/http/gzip_stream.h"

#include <algorithm>
#include <stdexcept>

namespace ibfabric::api {
namespace {

constexpr std::size_t kOutStep = 64 * 1024;
constexpr int kGzipWindow = 15 + 16;  // zlib: a gzip header and trailer, 32 KiB window

}  // namespace

GzipWriter::GzipWriter(int level) {
  ok_ = deflateInit2(&z_, level, Z_DEFLATED, kGzipWindow, 8, Z_DEFAULT_STRATEGY) == Z_OK;
}

GzipWriter::~GzipWriter() {
  if (ok_) deflateEnd(&z_);
}

void GzipWriter::deflateAll(int flush) {
  if (!ok_) throw std::runtime_error("gzip: deflateInit2 failed");
  for (;;) {
    const std::size_t used = out_.size();
    out_.resize(used + kOutStep);
    z_.next_out = reinterpret_cast<Bytef*>(out_.data() + used);
    z_.avail_out = static_cast<uInt>(kOutStep);
    const int rc = deflate(&z_, flush);
    out_.resize(out_.size() - z_.avail_out);
    if (rc == Z_STREAM_END) return;
    if (rc != Z_OK && rc != Z_BUF_ERROR) throw std::runtime_error("gzip: deflate failed");
    // Z_NO_FLUSH: done once zlib took all the input and had room to spare.
    if (flush == Z_NO_FLUSH && z_.avail_in == 0 && z_.avail_out > 0) return;
  }
}

void GzipWriter::append(std::string_view data) {
  if (finished_) throw std::logic_error("gzip: append after finish");
  plainSize_ += data.size();
  while (!data.empty()) {
    // avail_in is 32 bits wide: feed large pieces in slices.
    const std::size_t n = std::min<std::size_t>(data.size(), 1u << 30);
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z_.avail_in = static_cast<uInt>(n);
    deflateAll(Z_NO_FLUSH);
    data.remove_prefix(n);
  }
}

std::string GzipWriter::finish() {
  if (finished_) throw std::logic_error("gzip: finish twice");
  z_.next_in = nullptr;
  z_.avail_in = 0;
  deflateAll(Z_FINISH);
  finished_ = true;
  out_.shrink_to_fit();
  return std::move(out_);
}

GzipWriter::Stream::Stream(GzipWriter& writer) : std::ostream(this), writer_(writer) {
  setp(buffer_, buffer_ + sizeof buffer_);
}

GzipWriter::Stream::~Stream() { sync(); }

std::streambuf::int_type GzipWriter::Stream::overflow(std::streambuf::int_type c) {
  sync();
  using traits = std::streambuf::traits_type;
  if (c != traits::eof()) {
    *pptr() = traits::to_char_type(c);
    pbump(1);
  }
  return traits::not_eof(c);
}

std::streamsize GzipWriter::Stream::xsputn(const char* s, std::streamsize n) {
  if (n > epptr() - pptr()) {
    sync();
    writer_.append(std::string_view(s, static_cast<std::size_t>(n)));
    return n;
  }
  std::copy(s, s + n, pptr());
  pbump(static_cast<int>(n));
  return n;
}

int GzipWriter::Stream::sync() {
  if (pptr() > pbase()) writer_.append(std::string_view(pbase(), pptr() - pbase()));
  setp(buffer_, buffer_ + sizeof buffer_);
  return 0;
}

GunzipReader::GunzipReader(std::string_view gzip) : gzip_(gzip) {
  if (inflateInit2(&z_, kGzipWindow) != Z_OK) throw std::runtime_error("gunzip: init failed");
  rewind();
}

GunzipReader::~GunzipReader() { inflateEnd(&z_); }

void GunzipReader::rewind() {
  inflateReset(&z_);
  z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gzip_.data()));
  z_.avail_in = static_cast<uInt>(gzip_.size());
  ended_ = gzip_.empty();
  position_ = 0;
}

std::size_t GunzipReader::read(char* out, std::size_t max) {
  std::size_t got = 0;
  while (!ended_ && got < max) {
    z_.next_out = reinterpret_cast<Bytef*>(out + got);
    z_.avail_out = static_cast<uInt>(std::min<std::size_t>(max - got, 1u << 30));
    const uInt room = z_.avail_out;
    const int rc = inflate(&z_, Z_NO_FLUSH);
    got += room - z_.avail_out;
    if (rc == Z_STREAM_END) {
      // Concatenated members (RFC 1952 2.2) continue the document.
      if (z_.avail_in == 0)
        ended_ = true;
      else
        inflateReset(&z_);
    } else if (rc != Z_OK || (z_.avail_in == 0 && room == z_.avail_out)) {
      throw std::runtime_error("gunzip: corrupt or truncated stream");
    }
  }
  position_ += got;
  return got;
}

}  // namespace ibfabric::api
