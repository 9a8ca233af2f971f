// The placement engine over HTTP: the request's JSON form in, the PlacementService's ranked
// answer out (400 invalid, 422 unsatisfiable, 503 not ready); each answered request is recorded
// in the service's PlacementStats. Open to anyone (a placement changes nothing).
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "api/http/http_json.h"
#include "api/http/placement_json.h"
#include "api/http/router.h"
#include "api/http/routes/routes.h"

namespace ibfabric::api {

using nlohmann::json;
using routing::PlacementError;
using Kind = routing::PlacementError::Kind;

void addPlacementRoutes(Router& r) {
  PlacementService& placer = r.services().placement;
  r.post("/api/v1/placement", Access::kOpen,
         [&placer](const httplib::Request& req, httplib::Response& res) {
           const auto start = std::chrono::steady_clock::now();
           auto elapsed = [&] {
             return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
           };
           auto fail = [&](int status, std::string_view result, const std::string& message) {
             placer.record(result, elapsed());
             res.status = status;
             json body = {{"error", {{"code", status}, {"message", message}}}};
             if (result != "error") body["error"]["reason"] = std::string(result);
             res.set_content(safeDump(body) + "\n", "application/json");
           };
           json body;
           try {
             body = json::parse(req.body);
           } catch (const json::exception& e) {
             return fail(400, "invalid", std::string("bad JSON: ") + e.what());
           }
           try {
             routing::PlacementRequest request = placementRequestFromJson(body);
             routing::PlacementAnswer answer = placer.place(request);
             json out = placementAnswerToJson(answer);
             out["request"] = placementRequestToJson(request);
             out["duration_seconds"] = elapsed();
             placer.record("ok", elapsed());
             res.status = 200;
             res.set_content(safeDump(out) + "\n", "application/json");
           } catch (const PlacementError& e) {
             switch (e.kind()) {
               case Kind::kInvalidRequest:
                 return fail(400, placementResultOf(e.kind()), e.what());
               case Kind::kUnsatisfiable:
                 return fail(422, placementResultOf(e.kind()), e.what());
               case Kind::kNotReady:
                 return fail(503, placementResultOf(e.kind()),
                             std::string("not ready: ") + e.what());
             }
           } catch (const std::exception& e) {
             spdlog::error("placement: {}", e.what());
             return fail(500, "error", std::string("internal error: ") + e.what());
           }
         });
}

}  // namespace ibfabric::api
