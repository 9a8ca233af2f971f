// JSON answers of the REST endpoints: one body shape for results and one for errors, so every
// endpoint file answers alike. {"error": {"code": <HTTP status>, "message": "..."}} is the error
// body documented in api/http/openapi.json.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>

namespace ibfabric::api {

inline void sendJson(httplib::Response& res, const nlohmann::json& body, int status = 200) {
  res.status = status;
  res.set_content(body.dump() + "\n", "application/json");
}

inline void sendError(httplib::Response& res, int status, const std::string& message) {
  sendJson(res, {{"error", {{"code", status}, {"message", message}}}}, status);
}

}  // namespace ibfabric::api
