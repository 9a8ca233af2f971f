#include "api/metrics/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <stdexcept>

namespace ibfabric::api {
namespace {

constexpr int kGzipWindow = 15 + 16;  // 32 KB window, gzip header and trailer

Bytef* bytes(const char* p) { return reinterpret_cast<Bytef*>(const_cast<char*>(p)); }

}  // namespace

std::string gzipCompress(std::string_view data, int level) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, kGzipWindow, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
  std::string out;
  out.resize(deflateBound(&z, static_cast<uLong>(data.size())) + 64);
  z.next_in = bytes(data.data());
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  // Inputs above 4 GiB do not occur here (avail_in is 32-bit): /metrics is far below.
  const int rc = deflate(&z, Z_FINISH);
  const auto written = out.size() - z.avail_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return {};
  out.resize(written);
  return out;
}

GzipMemberWriter::GzipMemberWriter(int level, std::size_t chunkBytes)
    : z_(std::make_unique<z_stream>()), chunkBytes_(chunkBytes) {
  *z_ = z_stream{};
  if (deflateInit2(z_.get(), level, Z_DEFLATED, kGzipWindow, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    z_.reset();
    throw std::runtime_error("gzip: deflateInit2 failed");
  }
}

GzipMemberWriter::~GzipMemberWriter() {
  if (z_) deflateEnd(z_.get());
}

void GzipMemberWriter::deflateAll(int flush) {
  for (;;) {
    if (chunks_.empty() || z_->avail_out == 0) {
      chunks_.emplace_back(chunkBytes_, '\0');
      z_->next_out = reinterpret_cast<Bytef*>(chunks_.back().data());
      z_->avail_out = static_cast<uInt>(chunkBytes_);
    }
    const int rc = deflate(z_.get(), flush);
    if (rc == Z_STREAM_END) return;
    if (rc != Z_OK && rc != Z_BUF_ERROR) throw std::runtime_error("gzip: deflate failed");
    // Input consumed and room left: zlib has nothing more to give until the next input.
    if (flush == Z_NO_FLUSH && z_->avail_in == 0 && z_->avail_out > 0) return;
  }
}

void GzipMemberWriter::write(std::string_view text) {
  if (!z_) throw std::runtime_error("gzip: member already finished");
  textBytes_ += text.size();
  while (!text.empty()) {  // avail_in is 32-bit
    const std::size_t n = std::min<std::size_t>(text.size(), 1u << 30);
    z_->next_in = bytes(text.data());
    z_->avail_in = static_cast<uInt>(n);
    deflateAll(Z_NO_FLUSH);
    text.remove_prefix(n);
  }
}

std::vector<std::string> GzipMemberWriter::finish() {
  if (!z_) throw std::runtime_error("gzip: member already finished");
  z_->next_in = nullptr;
  z_->avail_in = 0;
  deflateAll(Z_FINISH);
  chunks_.back().resize(chunkBytes_ - z_->avail_out);
  chunks_.back().shrink_to_fit();
  if (chunks_.back().empty()) chunks_.pop_back();
  deflateEnd(z_.get());
  z_.reset();
  return std::move(chunks_);
}

GunzipStream::GunzipStream() : z_(std::make_unique<z_stream>()) {
  *z_ = z_stream{};
  if (inflateInit2(z_.get(), kGzipWindow) != Z_OK) {
    z_.reset();
    throw std::runtime_error("gzip: inflateInit2 failed");
  }
}

GunzipStream::~GunzipStream() {
  if (z_) inflateEnd(z_.get());
}

std::size_t GunzipStream::inflate(std::string_view& in, char* out, std::size_t max) {
  std::size_t written = 0;
  while (written < max && !in.empty()) {
    if (memberEnded_) {  // the next member starts
      if (inflateReset(z_.get()) != Z_OK) throw std::runtime_error("gzip: inflateReset failed");
      memberEnded_ = false;
    }
    const std::size_t n = std::min<std::size_t>(in.size(), 1u << 30);
    z_->next_in = bytes(in.data());
    z_->avail_in = static_cast<uInt>(n);
    z_->next_out = reinterpret_cast<Bytef*>(out + written);
    z_->avail_out = static_cast<uInt>(std::min<std::size_t>(max - written, 1u << 30));
    const uInt outBefore = z_->avail_out;
    const int rc = ::inflate(z_.get(), Z_NO_FLUSH);
    in.remove_prefix(n - z_->avail_in);
    written += outBefore - z_->avail_out;
    if (rc == Z_STREAM_END) {
      memberEnded_ = true;
    } else if (rc != Z_OK && !(rc == Z_BUF_ERROR && in.empty())) {
      throw std::runtime_error("gzip: corrupt stream");
    }
  }
  return written;
}

}  // namespace ibfabric::api
