#include "tests/support/in_process_daemon.h"

#include <utility>

#include "tests/support/subprocess.h"

namespace ibfabric::testing {

using namespace std::chrono_literals;

api::FabricServiceOptions InProcessDaemon::quickService() {
  api::FabricServiceOptions o;
  o.crawlInterval = 1h;
  o.sweepInterval = 30ms;
  return o;
}

InProcessDaemon::InProcessDaemon() : InProcessDaemon(Options{}) {}

InProcessDaemon::InProcessDaemon(Options options) : counters_(std::move(options.counters)) {
  auto source = std::make_unique<api::ScriptedTopologySource>();
  topology_ = source.get();
  api::CounterSourceFactory factory = std::move(options.counterSources);
  if (!factory) {
    factory = [control = counters_]() -> api::CounterSourcePtr {
      return std::make_unique<api::FakeCounterSource>(control);
    };
  }
  service_ =
      std::make_unique<api::FabricService>(std::move(source), std::move(factory), options.service);
  placement_ = std::make_unique<api::PlacementService>(*service_);
}

InProcessDaemon::~InProcessDaemon() {
  stopServing();
  if (jobs_) jobs_->stop();
  service_->stop();
}

api::JobService& InProcessDaemon::startJobs(api::PoolService* pool,
                                            api::JobServiceOptions options) {
  jobs_ = std::make_unique<api::JobService>(*service_, *placement_, pool, std::move(options));
  jobs_->start();
  return *jobs_;
}

int InProcessDaemon::serve(api::RestOptions options, api::PoolService* pool) {
  server_ = std::make_unique<api::RestServer>(services(pool), std::move(options));
  port_ = server_->bind("127.0.0.1", 0);
  if (port_ <= 0) return port_;
  http_ = std::thread([this] { server_->run(); });
  client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
  client_->set_read_timeout(20, 0);
  return port_;
}

bool InProcessDaemon::startAndWaitReady(std::uint64_t sweeps,
                                        const std::function<bool(const api::ServiceState&)>& also,
                                        std::chrono::milliseconds timeout) {
  service_->start();
  return waitFor(
      [&] {
        auto s = service_->state();
        return s->ready() && s->sweep.runs >= sweeps && (!also || also(*s));
      },
      timeout);
}

void InProcessDaemon::stopServing() {
  if (server_) server_->stop();
  if (http_.joinable()) http_.join();
  server_.reset();  // nothing it was given (a pool, say) is read after this
}

}  // namespace ibfabric::testing
