// The readiness checks at the top of the routes: the ServiceState snapshot a handler renders
// from, or nullptr with the 503 JSON answer already sent. Thread-safe (one state() read each).
#pragma once

#include "api/service/fabric_service.h"

namespace httplib {
struct Response;
}

namespace ibfabric::api {

/// How a 503 before the first crawl is worded.
enum class CrawlError {
  kShow,  ///< "... has not completed (last error: <the crawl's error>)"
  kHide,  ///< "... has not completed"
};

/// The state, or nullptr with 503 "not ready: the first crawl has not completed" sent.
ServiceStatePtr requireTopology(FabricService& service, httplib::Response& res,
                                CrawlError wording = CrawlError::kShow);

/// The state with forwarding tables and their analysis, or nullptr with the 503 sent.
ServiceStatePtr requireTables(FabricService& service, httplib::Response& res);

}  // namespace ibfabric::api
