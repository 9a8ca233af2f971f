// JSON answers of the REST endpoints: one body shape for results and one for errors, so every
// endpoint file answers alike. {"error": {"code": <HTTP status>, "message": "..."}} is the error
// body documented in api/http/openapi.json.
//
// Every JSON text the server writes goes through safeDump(): a string that is not valid UTF-8
// (a path, query or body echoed back, a node description from the fabric) is written with the
// replacement character U+FFFD instead of making nlohmann::json throw. Pure functions.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>

namespace ibfabric::api {

/// `j` as compact JSON text; invalid UTF-8 in its strings becomes U+FFFD (never throws on it).
inline std::string safeDump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// The JSON body `j` (safeDump, a newline after it) with `status`.
inline void sendJsonText(httplib::Response& res, const nlohmann::json& j, int status) {
  res.status = status;
  res.set_content(safeDump(j) + "\n", "application/json");
}

inline void sendJson(httplib::Response& res, const nlohmann::json& body, int status = 200) {
  sendJsonText(res, body, status);
}

inline void sendError(httplib::Response& res, int status, const std::string& message) {
  sendJson(res, {{"error", {{"code", status}, {"message", message}}}}, status);
}

}  // namespace ibfabric::api
