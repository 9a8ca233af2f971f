// getJson: GET a path of a test daemon and check the answer's status and shape — the body is JSON
// and an error carries {"error": {"code", "message"}} — with gtest expectations. Test support.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>

#include <string>

namespace ibfabric::testing {

/// The parsed body (null when there was no answer).
nlohmann::json getJson(httplib::Client& client, const std::string& path, int status);

}  // namespace ibfabric::testing
