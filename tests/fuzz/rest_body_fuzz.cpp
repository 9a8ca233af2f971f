// Fuzz target: the JSON bodies of the daemon's write and scheduler routes, through the same
// in-memory RestServer as http_request_fuzz (tests/fuzz/rest_fixture.h), with the request
// framed here (method, path, the token, the true Content-Length) so every input reaches the
// body's parser and the handler behind it.
//
// The first byte chooses the route (modulo 6, below 0xF0), the rest is the body:
//   0 POST /api/v1/placement            3 PUT  /api/v1/pool/hosts/fuzz-host
//   1 POST /api/v1/pool/allocations     4 POST /scheduler/filter      (kube-scheduler extender)
//   2 PUT  /api/v1/pool/hosts/dgx0001   5 POST /scheduler/prioritize
// and a first byte of 0xF0 or more: POST /api/v1/whatif (the drain of switches and cables).
// An allocation that was made is freed again (DELETE) so the pool does not fill up.
//
// Any body: answered 2xx or 4xx, never 500, nothing crashes.
#include <array>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/memory_server.h"
#include "tests/fuzz/rest_fixture.h"

using namespace ibfabric;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  (void)fuzz::RestFixture::instance();
  return 0;
}

namespace {

struct Route {
  const char* method;
  const char* path;
};
constexpr std::array<Route, 6> kRoutes = {{{"POST", "/api/v1/placement"},
                                           {"POST", "/api/v1/pool/allocations"},
                                           {"PUT", "/api/v1/pool/hosts/dgx0001"},
                                           {"PUT", "/api/v1/pool/hosts/fuzz-host"},
                                           {"POST", "/scheduler/filter"},
                                           {"POST", "/scheduler/prioritize"}}};
constexpr Route kWhatIf = {"POST", "/api/v1/whatif"};

std::string request(const char* method, const std::string& path, std::string_view body) {
  std::string r = std::string(method) + " " + path + " HTTP/1.1\r\nHost: fuzz\r\n";
  r += "Authorization: Bearer " + std::string(fuzz::RestFixture::kToken) + "\r\n";
  r += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size());
  r += "\r\nConnection: close\r\n\r\n";
  r.append(body);
  return r;
}

/// Frees the allocation a body made (its "job_id"), when it made one.
void freeAllocation(std::string_view body, const std::string& answer) {
  if (fuzz::answerStatus(answer) != 201) return;
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("job_id") || !j["job_id"].is_string()) return;
  const std::string job = j["job_id"].get<std::string>();
  std::string path = "/api/v1/pool/allocations/";
  for (unsigned char c : job) {  // percent-encode the id into the path
    static const char* hex = "0123456789ABCDEF";
    path += '%';
    path += hex[c >> 4];
    path += hex[c & 15];
  }
  (void)fuzz::RestFixture::instance().serve(request("DELETE", path, ""));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t which = data[0] % kRoutes.size();
  const Route& route = data[0] >= 0xF0 ? kWhatIf : kRoutes[which];
  const std::string_view body = fuzz::asText(data + 1, size - 1);
  const auto answers = fuzz::RestFixture::instance().serve(request(route.method, route.path, body));
  if (data[0] < 0xF0 && which == 1 && !answers.empty()) freeAllocation(body, answers.front());
  return 0;
}
