#include "tests/support/prom_api.h"

#include <httplib.h>

#include <stdexcept>

namespace ibfabric::testing {

nlohmann::json promApiData(int port, const std::string& pathAndQuery, const std::string& who) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(2, 0);
  c.set_read_timeout(10, 0);
  auto res = c.Get(pathAndQuery.c_str());
  if (!res) throw std::runtime_error(who + ": no answer to " + pathAndQuery);
  auto j = nlohmann::json::parse(res->body, nullptr, false);
  if (res->status != 200 || j.is_discarded() || j.value("status", "") != "success")
    throw std::runtime_error(who + ": " + pathAndQuery + " -> " + std::to_string(res->status) +
                             " " + res->body);
  return j["data"];
}

std::string instantQueryPath(const std::string& promql) {
  return "/api/v1/query?query=" + httplib::detail::encode_query_param(promql);
}

}  // namespace ibfabric::testing
