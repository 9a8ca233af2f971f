// The Prometheus HTTP API as Prometheus, VictoriaMetrics and vmalert serve it, for tests:
// GET a path on 127.0.0.1:PORT and return the answer's "data" object.
//
//   nlohmann::json d = promApiData(port, "/api/v1/query?query=" + encoded, "victoria-metrics");
//
// Throws std::runtime_error (naming `who`, the path, the status and the body) when there is no
// answer, the status is not 200, the body is not JSON or its "status" is not "success".
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ibfabric::testing {

nlohmann::json promApiData(int port, const std::string& pathAndQuery, const std::string& who);

/// "/api/v1/query?query=<promql, URL-encoded>".
std::string instantQueryPath(const std::string& promql);

}  // namespace ibfabric::testing
