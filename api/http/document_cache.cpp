#include "api/http/document_cache.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <vector>

namespace ibfabric::api {
namespace {

constexpr std::size_t kChunk = 256 * 1024;

/// One plain response's inflation state (a response's provider runs on one thread).
struct Inflating {
  explicit Inflating(CachedDocumentPtr d) : doc(std::move(d)), reader(doc->gzip), buffer(kChunk) {}
  CachedDocumentPtr doc;  // owns what `reader` reads
  GunzipReader reader;
  std::vector<char> buffer;

  /// Inflated bytes from `offset` on (a range request may start anywhere).
  std::size_t at(std::size_t offset, std::size_t max) {
    if (offset < reader.position()) reader.rewind();
    while (reader.position() < offset) {
      const std::size_t skip = std::min(buffer.size(), offset - reader.position());
      if (reader.read(buffer.data(), skip) == 0) return 0;
    }
    return reader.read(buffer.data(), std::min(buffer.size(), max));
  }
};

}  // namespace

CachedDocumentPtr DocumentSlot::get(const std::shared_ptr<const void>& source,
                                    const std::string& contentType, const DocumentRenderer& render,
                                    const std::string& variant) {
  std::lock_guard lock(mu_);
  if (doc_ && source_.lock() == source && variant_ == variant) return doc_;
  doc_.reset();  // the old one goes before the new one is rendered (unless a response holds it)
  const auto t0 = std::chrono::steady_clock::now();
  GzipWriter w;
  render(w);
  auto doc = std::make_shared<CachedDocument>();
  doc->plainSize = w.plainSize();
  doc->gzip = w.finish();
  doc->contentType = contentType;
  doc->renderSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  doc_ = std::move(doc);
  source_ = source;
  variant_ = variant;
  ++renders_;
  return doc_;
}

std::size_t DocumentSlot::bytes() const {
  std::lock_guard lock(mu_);
  return doc_ ? doc_->gzip.size() : 0;
}

std::size_t DocumentCache::bytes() const {
  std::size_t n = 0;
  for (const auto& s : slots_) n += s.bytes();
  return n;
}

bool acceptsGzip(const httplib::Request& req) {
  const std::string v = req.get_header_value("Accept-Encoding");
  std::size_t start = 0;
  while (start < v.size()) {
    std::size_t end = v.find(',', start);
    if (end == std::string::npos) end = v.size();
    std::string part;  // the element without blanks, lower case
    for (std::size_t i = start; i < end; ++i)
      if (v[i] != ' ' && v[i] != '\t') part += static_cast<char>(std::tolower(v[i]));
    start = end + 1;
    const std::size_t semi = part.find(';');
    const std::string coding = part.substr(0, semi);
    if (coding != "gzip" && coding != "x-gzip") continue;
    if (semi == std::string::npos) return true;
    const std::string params = part.substr(semi);
    const std::size_t q = params.find(";q=");
    // q=0, q=0.0, ... refuses it (RFC 9110 12.5.3); any other weight accepts it.
    if (q == std::string::npos) return true;
    const std::string w = params.substr(q + 3, params.find(';', q + 3) - (q + 3));
    return w.find_first_not_of("0.") != std::string::npos;
  }
  return false;
}

void sendDocument(const httplib::Request& req, httplib::Response& res, CachedDocumentPtr doc) {
  res.status = 200;
  res.set_header("Vary", "Accept-Encoding");
  const std::string type = doc->contentType;
  if (acceptsGzip(req)) {
    res.set_header("Content-Encoding", "gzip");
    const std::size_t size = doc->gzip.size();
    res.set_content_provider(
        size, type,
        [doc = std::move(doc)](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
          return sink.write(doc->gzip.data() + offset, std::min(length, kChunk));
        });
    return;
  }
  const std::size_t size = doc->plainSize;
  auto inflating = std::make_shared<Inflating>(std::move(doc));
  res.set_content_provider(
      size, type, [inflating](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
        const std::size_t n = inflating->at(offset, length);
        return n > 0 && sink.write(inflating->buffer.data(), n);
      });
}

}  // namespace ibfabric::api
