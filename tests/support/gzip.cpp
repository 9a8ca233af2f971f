#include "tests/support/gzip.h"

#include <gtest/gtest.h>
#include <zlib.h>

namespace ibfabric::testing {

std::string gunzip(const std::string& data) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buf[1 << 16];
  int rc = Z_OK;
  while (z.avail_in > 0 || rc != Z_STREAM_END) {
    if (rc == Z_STREAM_END) inflateReset(&z);  // the next member
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      ADD_FAILURE() << "bad gzip stream: " << rc;
      break;
    }
    out.append(buf, sizeof buf - z.avail_out);
  }
  inflateEnd(&z);
  return out;
}

}  // namespace ibfabric::testing
