// MemberClient: one HTTP request to one ibfabricd of the federation, never longer than the
// member's timeout. Each call uses its own httplib::Client (connect, read and write timeouts set
// to the member's timeout) on a worker thread, and the caller waits on a hard deadline (the
// timeout plus a small grace): a member that accepts the connection and then trickles bytes is
// answered "timed out" like one that never answers; its worker finishes (or times out) on its
// own and drops the late answer.
//
// askAll() sends one request to several members at once and returns when every one answered or
// its deadline passed. A JSON request whose answer is not JSON is a failure ("malformed JSON").
// Thread-safe (no shared state).
#pragma once

#include <chrono>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ibfabric::api::federation {

/// Where a member is and how to talk to it.
struct MemberTarget {
  std::string url;  ///< http(s)://host:port[/prefix]
  std::string token;
  std::chrono::milliseconds timeout{5000};
};

struct MemberRequest {
  MemberRequest() = default;
  MemberRequest(std::string m, std::string p, std::string b = {})
      : method(std::move(m)), path(std::move(p)), body(std::move(b)) {}

  std::string method = "GET";  ///< GET, POST, PUT, DELETE
  std::string path;            ///< with its query string, e.g. "/api/v1/hosts?limit=10"
  std::string body;            ///< POST/PUT body (JSON)
  bool json = true;            ///< parse the answer as JSON (else keep the text only)
  bool withToken = false;      ///< send "Authorization: Bearer <token>"
};

/// A member's answer. `error` is empty when the member answered (any HTTP status) with a body
/// of the expected kind; otherwise it says why not and the member counts as unavailable.
struct MemberReply {
  int status = 0;     ///< HTTP status; 0 when nothing answered
  std::string error;  ///< "" or e.g. "connection refused", "timed out after 2 s", "malformed JSON"
  nlohmann::json body;
  std::string text;         ///< the raw body
  std::string contentType;  ///< the answer's Content-Type
  double seconds = 0;       ///< how long it took

  bool answered() const { return status > 0 && error.empty(); }
  /// The member's error message ({"error": {"message"}}) or the first line of its text.
  std::string message() const;
};

/// The request against one member; blocks at most target.timeout (+ grace).
MemberReply askMember(const MemberTarget& target, const MemberRequest& request);

/// The same request against every target at once; replies in the targets' order.
std::vector<MemberReply> askAll(const std::vector<MemberTarget>& targets,
                                const MemberRequest& request);

/// As askAll, with one request per target (requests.size() == targets.size()).
std::vector<MemberReply> askEach(const std::vector<MemberTarget>& targets,
                                 const std::vector<MemberRequest>& requests);

}  // namespace ibfabric::api::federation
