// DocumentCache: the REST documents that are large at scale (/topology/full, /topology/
// ibnetdiscover, /topology/dot, the unfiltered /nodes and /links: 1–40 MB at 10k HCAs; the
// fabric map of the web view, /fabric/map), each
// rendered once per snapshot it depends on and then served as is.
//
// A document is rendered lazily, by the first request that finds the kept one stale, straight into
// a GzipWriter (api/http/gzip_stream.h): only its gzip form is kept (about a tenth of the text),
// and only the newest per slot, so the cache holds a few MB at 10k HCAs. sendDocument() sends it
// without a copy: the compressed bytes to a client that accepts gzip, else inflated chunk by chunk
// as the connection takes them. Concurrent requests that find a slot stale wait for one render
// and share it.
//
// A slot is keyed by the snapshot its document is a function of (a Topology, a ServiceState) by
// weak pointer, so the cache never keeps an old snapshot alive; a document in flight is kept
// alive by its responses. Owned by the Router. Thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "api/http/gzip_stream.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace ibfabric::api {

/// One rendered document, gzip-compressed.
struct CachedDocument {
  std::string gzip;
  std::size_t plainSize = 0;
  std::string contentType;
  double renderSeconds = 0;  ///< rendering and compressing
};
using CachedDocumentPtr = std::shared_ptr<const CachedDocument>;

/// Writes a document's text into the writer.
using DocumentRenderer = std::function<void(GzipWriter&)>;

/// The newest document of one endpoint.
class DocumentSlot {
 public:
  /// The document rendered from `source` (and `variant`: a small value the document also
  /// depends on, e.g. the subnet's name beside a topology): the kept one when it was, else
  /// rendered now by `render` and kept instead (the previous one is dropped).
  CachedDocumentPtr get(const std::shared_ptr<const void>& source, const std::string& contentType,
                        const DocumentRenderer& render, const std::string& variant = {});
  /// Renders so far (tests, benchmarks).
  std::uint64_t renders() const { return renders_; }
  /// Compressed bytes kept.
  std::size_t bytes() const;

 private:
  mutable std::mutex mu_;  // held while rendering: latecomers wait and share
  std::weak_ptr<const void> source_;
  std::string variant_;
  CachedDocumentPtr doc_;
  std::atomic<std::uint64_t> renders_{0};
};

class DocumentCache {
 public:
  enum class Kind : std::size_t {
    kTopologyFull,
    kIbnetdiscover,
    kDot,
    kNodes,
    kLinks,
    kFabricMap,
    kCount
  };
  DocumentSlot& slot(Kind kind) { return slots_[static_cast<std::size_t>(kind)]; }
  /// Compressed bytes kept over every slot.
  std::size_t bytes() const;

 private:
  std::array<DocumentSlot, static_cast<std::size_t>(Kind::kCount)> slots_;
};

/// True when the request's Accept-Encoding names gzip (and not with q=0).
bool acceptsGzip(const httplib::Request& req);
/// Answers 200 with `doc`: gzip (Content-Encoding: gzip) when the request accepts it, else the
/// text, inflated while it is sent.
void sendDocument(const httplib::Request& req, httplib::Response& res, CachedDocumentPtr doc);

}  // namespace ibfabric::api
