#include "api/http/auth.h"

#include <httplib.h>

#include "api/http/http_json.h"

namespace ibfabric::api {

bool constantTimeEquals(std::string_view a, std::string_view b) {
  // Every byte of the longer string is read whatever the contents; the length is not secret.
  const std::size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

void BearerAuth::setToken(std::string token) {
  std::lock_guard lock(mu_);
  token_ = std::move(token);
}

bool BearerAuth::authorize(const httplib::Request& req, httplib::Response& res) const {
  std::string expected;
  {
    std::lock_guard lock(mu_);
    expected = token_;
  }
  constexpr std::string_view kScheme = "Bearer ";
  const std::string auth = req.get_header_value("Authorization");
  if (expected.empty()) {
    sendError(res, 403, "writes are disabled (no api_token set)");
  } else if (auth.compare(0, kScheme.size(), kScheme) != 0) {
    sendError(res, 401, "bearer token required");
  } else if (!constantTimeEquals(std::string_view(auth).substr(kScheme.size()), expected)) {
    sendError(res, 403, "wrong token");
  } else {
    return true;
  }
  return false;
}

}  // namespace ibfabric::api
