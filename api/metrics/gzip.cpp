#include "api/metrics/gzip.h"

#include <zlib.h>

namespace ibfabric::api {

std::string gzipCompress(std::string_view data, int level) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
  std::string out;
  out.resize(deflateBound(&z, static_cast<uLong>(data.size())) + 64);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
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

}  // namespace ibfabric::api
