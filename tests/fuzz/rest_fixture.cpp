#include "tests/fuzz/rest_fixture.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "api/http/rest_server.h"
#include "api/service/fabric_service.h"
#include "api/service/placement_service.h"
#include "api/service/pool_service.h"
#include "discovery/crawler.h"
#include "discovery/net_topology.h"
#include "routing/synthetic_tables.h"
#include "tests/fakes/fake_sources.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/memory_server.h"

namespace ibfabric::fuzz {
namespace {

using namespace std::chrono_literals;

TopologyPtr fixtureTopology() {
  NetFabric fabric = smallTwoLevel(2);
  routing::assignSequentialLids(fabric);  // LIDs, so the fake serves forwarding tables
  fabric.reindex();
  return topologyFromNetFabric(fabric, "fuzz");
}

std::filesystem::path writeInventory() {
  const auto path = std::filesystem::temp_directory_path() /
                    ("ibfabric-fuzz-pool-" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << R"({"hosts": [{"name": "dgx[0001-0004]", "gpu_count": 8}]})";
  return path;
}

api::FabricServiceOptions serviceOptions() {
  api::FabricServiceOptions o;
  o.crawlInterval = 1h;
  o.sweepInterval = 50ms;
  return o;
}

bool waitFor(const std::function<bool()>& done) {
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

}  // namespace

struct RestFixture::Parts {
  std::shared_ptr<api::FakeCounterControl> counters = std::make_shared<api::FakeCounterControl>();
  std::unique_ptr<api::FabricService> service;
  std::unique_ptr<api::PlacementService> placement;
  std::unique_ptr<api::PoolService> pool;
  std::unique_ptr<api::RestServer> server;  // goes before the pool: its routes read it
  MemoryServer* memory = nullptr;           // owned by server

  ~Parts() {
    server.reset();
    if (pool) pool->stop();
    pool.reset();
    if (service) service->stop();
  }
};

RestFixture& RestFixture::instance() {
  static RestFixture* fixture = [] {
    static RestFixture* made = new RestFixture();
    // Registered after the libraries' statics exist, so it runs before they are destroyed: the
    // service's threads stop while everything they use is still there.
    std::atexit([] { delete made; });
    return made;
  }();
  return *fixture;
}

RestFixture::~RestFixture() = default;

RestFixture::RestFixture() : parts_(std::make_unique<Parts>()) {
  spdlog::set_level(spdlog::level::off);
  Parts& p = *parts_;
  p.counters->serveTables = true;  // routes and placement on shortest-path tables
  auto factory = [control = p.counters]() -> api::CounterSourcePtr {
    return std::make_unique<api::FakeCounterSource>(control);
  };
  p.service = std::make_unique<api::FabricService>(makeFixedSource(fixtureTopology(), "fuzz"),
                                                   factory, serviceOptions());
  p.placement = std::make_unique<api::PlacementService>(*p.service);
  p.service->start();
  if (!waitFor([&] {
        auto s = p.service->state();
        return s->ready() && s->forwarding != nullptr;
      })) {
    std::fprintf(stderr, "rest fixture: the fabric service never became ready\n");
    std::abort();
  }
  reset();
}

void RestFixture::reset() {
  Parts& p = *parts_;
  p.server.reset();
  if (p.pool) p.pool->stop();
  api::PoolConfig pc;
  pc.enabled = true;
  const auto inventory = writeInventory();
  pc.inventory = inventory.string();
  p.pool = std::make_unique<api::PoolService>(*p.service, *p.placement, pc);
  std::filesystem::remove(inventory);  // read by the constructor
  p.pool->start();
  if (!waitFor([&] { return p.pool->pool().usage().totalGpus == 32; })) {
    std::fprintf(stderr, "rest fixture: the pool never joined the fabric\n");
    std::abort();
  }
  api::RestOptions ro;
  ro.token = std::string(kToken);
  ro.maxWait = 0s;
  ro.clearTimeout = 200ms;
  auto memory = std::make_unique<MemoryServer>();
  p.memory = memory.get();
  p.server =
      std::make_unique<api::RestServer>(api::DaemonServices{*p.service, *p.placement, p.pool.get()},
                                        std::move(ro), std::move(memory));
  served_ = 0;
}

std::vector<std::string> RestFixture::serve(std::string_view bytes) {
  if (++served_ > kRequestsPerReset) reset();
  static const bool trace = std::getenv("IBFABRIC_FUZZ_TRACE") != nullptr;
  auto answers = parts_->memory->serve(bytes);
  for (const auto& a : answers) {
    if (trace)
      std::fprintf(stderr, "%.*s\n", static_cast<int>(std::min<std::size_t>(a.size(), 160)),
                   a.c_str());
    if (answerStatus(a) == 500) {
      std::fprintf(stderr, "rest fixture: answered 500 (an exception escaped a handler):\n%s\n",
                   a.c_str());
      std::abort();
    }
  }
  return answers;
}

}  // namespace ibfabric::fuzz
