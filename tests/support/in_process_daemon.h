// InProcessDaemon: ibfabricd's service and REST server inside the test process, on the fakes.
//
// A FabricService over a ScriptedTopologySource (topology()) and FakeCounterSources sharing
// counters() (or the counter sources a test makes), the daemon's one PlacementService on it,
// plus, once serve() is called, its RestServer on 127.0.0.1 at a free port, served from a thread,
// with an HTTP client for it. The destructor stops the server, joins its thread and stops the
// service, also when an assertion ended the test early.
//
//   testing::InProcessDaemon d;
//   d.topology().push(testing::fatTreeTopology("", 2, 2, 2));
//   ASSERT_GT(d.serve(), 0);
//   ASSERT_TRUE(d.startAndWaitReady());
//   auto res = d.client().Get("/api/v1/links");
//
// Not thread-safe: one test thread drives it (the service and the server run their own threads).
#pragma once

#include <httplib.h>

#include <chrono>
#include <functional>
#include <memory>
#include <thread>

#include "api/http/rest_server.h"
#include "api/service/daemon_services.h"
#include "api/service/fabric_service.h"
#include "tests/fakes/fake_sources.h"

namespace ibfabric::testing {

class InProcessDaemon {
 public:
  struct Options {
    /// Crawls only at start and when asked; sweeps every 30 ms.
    api::FabricServiceOptions service = quickService();
    /// What the default counter sources report; shared with the test through counters().
    std::shared_ptr<api::FakeCounterControl> counters = std::make_shared<api::FakeCounterControl>();
    /// Makes the sweep thread's counter sources; empty: FakeCounterSources on `counters`.
    api::CounterSourceFactory counterSources;
  };
  static api::FabricServiceOptions quickService();

  InProcessDaemon();
  explicit InProcessDaemon(Options options);
  ~InProcessDaemon();
  InProcessDaemon(const InProcessDaemon&) = delete;
  InProcessDaemon& operator=(const InProcessDaemon&) = delete;

  api::ScriptedTopologySource& topology() { return *topology_; }
  const std::shared_ptr<api::FakeCounterControl>& counters() const { return counters_; }
  api::FabricService& service() { return *service_; }
  api::PlacementService& placement() { return *placement_; }
  /// The services as the daemon's main hands them to the http room (`pool` optional; the jobs
  /// when startJobs() made them).
  api::DaemonServices services(api::PoolService* pool = nullptr) {
    return {*service_, *placement_, pool, jobs_.get()};
  }
  /// Creates and starts the daemon's JobService (over `pool` when given, which must outlive this
  /// daemon's server); call before serve() so its routes and metrics are served.
  api::JobService& startJobs(api::PoolService* pool = nullptr, api::JobServiceOptions options = {});
  api::JobService* jobs() { return jobs_.get(); }

  /// Creates the RestServer (with `pool`'s routes and metrics when given; call stopServing()
  /// before the pool goes), binds 127.0.0.1:0 and serves from a thread. Returns the port, or -1
  /// when the bind failed (then nothing is served). Call once.
  int serve(api::RestOptions options = {}, api::PoolService* pool = nullptr);
  /// After serve().
  api::RestServer& server() { return *server_; }
  /// A client of the served port (read timeout 20 s); after serve().
  httplib::Client& client() { return *client_; }
  int port() const { return port_; }

  /// Starts the service; true once it is ready, has swept at least `sweeps` times and `also`
  /// (if given) holds, false after `timeout`.
  bool startAndWaitReady(std::uint64_t sweeps = 2,
                         const std::function<bool(const api::ServiceState&)>& also = nullptr,
                         std::chrono::milliseconds timeout = std::chrono::seconds(10));
  /// Stops the server, joins its thread and destroys the server (the destructor does it too);
  /// the service runs on.
  void stopServing();

 private:
  std::shared_ptr<api::FakeCounterControl> counters_;
  api::ScriptedTopologySource* topology_ = nullptr;  // owned by service_
  std::unique_ptr<api::FabricService> service_;
  std::unique_ptr<api::PlacementService> placement_;
  std::unique_ptr<api::JobService> jobs_;
  std::unique_ptr<api::RestServer> server_;
  std::thread http_;
  int port_ = -1;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace ibfabric::testing
