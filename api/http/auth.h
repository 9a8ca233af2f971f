// The one write check of the HTTP server: every route that changes something (POST, PUT,
// DELETE) asks a BearerAuth before doing anything. Without a configured token writes are
// disabled (403); a request without "Authorization: Bearer <token>" gets 401, a wrong token 403.
// The comparison takes the same time whatever the bytes (no timing oracle on the token).
//
// Owned by RestServer. Thread-safety: authorize() from any server thread, setToken() from any
// other (SIGHUP reload).
#pragma once

#include <mutex>
#include <string>
#include <string_view>

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace ibfabric::api {

/// true when both strings are equal; time depends only on the lengths, not on where they differ.
bool constantTimeEquals(std::string_view a, std::string_view b);

class BearerAuth {
 public:
  explicit BearerAuth(std::string token = {}) : token_(std::move(token)) {}
  void setToken(std::string token);
  /// true: the request may write. false: the error answer is already in `res`.
  bool authorize(const httplib::Request& req, httplib::Response& res) const;

 private:
  mutable std::mutex mu_;
  std::string token_;
};

}  // namespace ibfabric::api
