// The GPU pool allocator on generated fabrics with the leaf-packing placer: allocation (training
// whole hosts, inference packing, MIG slices), freeing, idempotency, preemption order and
// victims, quota windows on a fake wall clock, fault-driven degraded state with a replacement
// suggestion (the host the placer ranks best: the placement engine, or leaf packing), and
// durability (restart, torn last record, compaction).
#include "scheduler_hooks/pool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>

#include "discovery/net_topology.h"
#include "discovery/topogen.h"
#include "routing/placement_engine.h"
#include "routing/synthetic_tables.h"
#include "scheduler_hooks/pool/journal_file.h"
#include "scheduler_hooks/pool_placer.h"
#include "tests/support/fabrics.h"
#include "tests/support/subprocess.h"

namespace ibfabric::scheduler_hooks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace std::chrono_literals;
using SysClock = std::chrono::system_clock;

/// 16 hosts dgx0001..dgx0016, four per leaf (leaf-01..leaf-04), one HCA each.
GeneratedTopology twoLevel() { return testing::generate(testing::twoLevel(4, 2, 4)); }

PoolHost h100Host(const std::string& name, int gpus = 8) {
  return hostFromJson(
      name,
      {{"gpu_count", gpus}, {"model", "H100-80GB"}, {"memory_gb", 80}, {"mig_capable", true}});
}

AllocationRequest req(std::string job, int gpus, JobClass c, int priority = 0,
                      bool preemptible = false, int perHost = 0,
                      std::string sharing = "exclusive") {
  AllocationRequest r;
  r.jobId = std::move(job);
  r.gpus = gpus;
  r.jobClass = c;
  r.priority = priority;
  r.preemptible = preemptible;
  r.gpusPerHost = perHost;
  r.sharing = std::move(sharing);
  return r;
}

std::vector<std::string> hostsOf(const Allocation& a) {
  std::vector<std::string> out;
  for (const auto& g : a.hosts) out.push_back(g.host);
  return out;
}

std::vector<std::string> idsOf(const std::vector<Allocation>& v) {
  std::vector<std::string> out;
  for (const auto& a : v) out.push_back(a.request.jobId);
  return out;
}

PoolError::Kind errorKind(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const PoolError& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no PoolError thrown";
  return PoolError::Kind::kInvalid;
}

/// Clock at 2026-01-05 (a Monday) + hh:mm UTC.
SysClock::time_point at(int hh, int mm) {
  return SysClock::time_point(std::chrono::seconds(1767571200)) + std::chrono::hours(hh) +
         std::chrono::minutes(mm);
}

class PoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    topology_ = topologyFromNetFabric(twoLevel().fabric);
    clockNow_ = at(12, 0);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  PoolOptions options() {
    PoolOptions o;
    o.placer = makeLeafPackingPlacer([this] { return topology_; });
    o.clock = [this] { return clockNow_.load(); };
    o.onEvent = [this](const PoolEvent& e) { events_.push_back(e); };
    o.journalDir = dir_;
    return o;
  }
  std::unique_ptr<Pool> makePool(PoolOptions o, int hosts = 16) {
    auto p = std::make_unique<Pool>(std::move(o));
    for (int i = 1; i <= hosts; ++i) {
      char name[16];
      std::snprintf(name, sizeof name, "dgx%04d", i);
      p->putHost(h100Host(name));
    }
    p->setTopology(topology_);
    return p;
  }
  std::unique_ptr<Pool> makePool() { return makePool(options()); }
  /// A link_down event on the first HCA of `host`.
  void linkDown(Pool& pool, const std::string& host) {
    const Node& hca = topology_->node(topology_->findHost(host)->hcas.at(0));
    telemetry::Event e;
    e.type = telemetry::EventType::kLinkDown;
    e.end = {hca.guid, hca.description, PortNum(1)};
    pool.observeEvent(e);
  }
  void useJournal() {
    dir_ =
        testing::scratchDir() / ("pool-journal-" + std::to_string(::getpid()) + "-" +
                                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }

  TopologyPtr topology_;
  std::atomic<SysClock::time_point> clockNow_{};
  std::vector<PoolEvent> events_;
  std::filesystem::path dir_;
};

TEST_F(PoolTest, TrainingTakesWholeFreeHostsOnTheFewestLeaves) {
  auto pool = makePool();
  auto r = pool->allocate(req("train-1", 32, JobClass::kTraining, 0, false, 8));
  EXPECT_TRUE(r.created);
  EXPECT_TRUE(r.victims.empty());
  // Four hosts of one leaf (leaf-01 holds dgx0001..dgx0004).
  EXPECT_THAT(hostsOf(r.allocation), ElementsAre("dgx0001", "dgx0002", "dgx0003", "dgx0004"));
  for (const auto& g : r.allocation.hosts) EXPECT_THAT(g.gpus, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_DOUBLE_EQ(r.allocation.gpuEquivalents, 32.0);
  // A host with one GPU taken is not a whole host for training.
  pool->allocate(req("inf-1", 1, JobClass::kInference));
  auto t2 = pool->allocate(req("train-2", 16, JobClass::kTraining, 0, false, 8));
  for (const auto& h : hostsOf(t2.allocation))
    EXPECT_NE(h, hostsOf(pool->get("inf-1").value()).at(0));
  auto u = pool->usage();
  EXPECT_EQ(u.totalGpus, 128);
  EXPECT_DOUBLE_EQ(u.byClass[JobClass::kTraining].gpus, 48.0);
  EXPECT_EQ(u.byClass[JobClass::kTraining].allocations, 2);
}

TEST_F(PoolTest, InferencePacksPartialHostsAndFreeingReturnsGpus) {
  auto pool = makePool();
  auto a = pool->allocate(req("inf-a", 2, JobClass::kInference)).allocation;
  auto b = pool->allocate(req("inf-b", 3, JobClass::kInference)).allocation;
  ASSERT_EQ(a.hosts.size(), 1u);
  ASSERT_EQ(b.hosts.size(), 1u);
  EXPECT_EQ(a.hosts[0].host, b.hosts[0].host) << "the partly used host is filled first";
  EXPECT_THAT(a.hosts[0].gpus, ElementsAre(0, 1));
  EXPECT_THAT(b.hosts[0].gpus, ElementsAre(2, 3, 4));
  EXPECT_EQ(pool->host(a.hosts[0].host)->freeGpus, 3);
  // 4 GPUs do not fit there any more: another host; "gpus per host" splits.
  auto c = pool->allocate(req("inf-c", 4, JobClass::kInference, 0, false, 2)).allocation;
  ASSERT_EQ(c.hosts.size(), 2u);
  EXPECT_EQ(c.hosts[0].gpus.size(), 2u);
  EXPECT_TRUE(pool->release("inf-b"));
  EXPECT_FALSE(pool->release("inf-b"));
  EXPECT_FALSE(pool->get("inf-b"));
  EXPECT_EQ(pool->host(a.hosts[0].host)->freeGpus,
            6 - (c.hosts[0].host == a.hosts[0].host ? 2 : 0));
  EXPECT_THAT(idsOf(pool->list()), ElementsAre("inf-a", "inf-c"));
}

TEST_F(PoolTest, MigSlicesPackOntoPartitionedGpus) {
  auto pool = makePool();
  auto a = pool->allocate(req("mig-a", 7, JobClass::kInference, 0, false, 0, "1g.10gb"));
  ASSERT_EQ(a.allocation.hosts.size(), 1u);
  EXPECT_THAT(a.allocation.hosts[0].gpus, ElementsAre(0, 0, 0, 0, 0, 0, 0));  // 7 x 1g on one GPU
  EXPECT_DOUBLE_EQ(a.allocation.gpuEquivalents, 1.0);
  auto b = pool->allocate(req("mig-b", 2, JobClass::kInference, 0, false, 0, "3g.40gb"));
  EXPECT_EQ(b.allocation.hosts[0].host, a.allocation.hosts[0].host);
  EXPECT_THAT(b.allocation.hosts[0].gpus, ElementsAre(1, 1));  // two 3g.40gb share GPU 1
  auto c = pool->allocate(req("mig-c", 1, JobClass::kInference, 0, false, 0, "1g.10gb"));
  // GPU 1 has a compute slice left but no memory slice (2 x 3g.40gb take all 8): GPU 2.
  EXPECT_THAT(c.allocation.hosts[0].gpus, ElementsAre(2));
  // Partitioned GPUs are not whole: a whole-GPU request on that host gets GPUs 3..7.
  auto d = pool->allocate(req("whole", 5, JobClass::kInference));
  EXPECT_EQ(d.allocation.hosts[0].host, a.allocation.hosts[0].host);
  EXPECT_THAT(d.allocation.hosts[0].gpus, ElementsAre(3, 4, 5, 6, 7));
  // Profiles a GPU does not allow, and MIG for training, are refused.
  EXPECT_EQ(
      errorKind([&] { pool->allocate(req("x", 1, JobClass::kInference, 0, false, 0, "5g.bad")); }),
      PoolError::Kind::kInvalid);
  EXPECT_EQ(
      errorKind([&] { pool->allocate(req("x", 1, JobClass::kTraining, 0, false, 0, "1g.10gb")); }),
      PoolError::Kind::kInvalid);
  EXPECT_EQ(
      errorKind([&] { pool->allocate(req("x", 1, JobClass::kInference, 0, false, 0, "2g.35gb")); }),
      PoolError::Kind::kCapacity);
}

TEST_F(PoolTest, IdempotentOnJobId) {
  auto pool = makePool();
  auto first = pool->allocate(req("job-7", 8, JobClass::kTraining, 5));
  auto again = pool->allocate(req("job-7", 8, JobClass::kTraining, 5));
  EXPECT_TRUE(first.created);
  EXPECT_FALSE(again.created);
  EXPECT_EQ(again.allocation.hosts, first.allocation.hosts);
  EXPECT_EQ(again.allocation.sequence, first.allocation.sequence);
  EXPECT_EQ(errorKind([&] { pool->allocate(req("job-7", 16, JobClass::kTraining, 5)); }),
            PoolError::Kind::kConflict);
  EXPECT_EQ(pool->list().size(), 1u);
  // After freeing, the id may ask for something else.
  ASSERT_TRUE(pool->release("job-7"));
  EXPECT_TRUE(pool->allocate(req("job-7", 16, JobClass::kTraining, 5)).created);
}

TEST_F(PoolTest, BadRequestsAreClearErrors) {
  auto pool = makePool();
  EXPECT_EQ(errorKind([&] { pool->allocate(req("", 1, JobClass::kTraining)); }),
            PoolError::Kind::kInvalid);
  EXPECT_EQ(errorKind([&] { pool->allocate(req("a b", 1, JobClass::kTraining)); }),
            PoolError::Kind::kInvalid);
  EXPECT_EQ(errorKind([&] { pool->allocate(req("z", 0, JobClass::kTraining)); }),
            PoolError::Kind::kInvalid);
  EXPECT_EQ(errorKind([&] { pool->allocate(req("z", 1000, JobClass::kTraining)); }),
            PoolError::Kind::kCapacity);
  EXPECT_EQ(errorKind([] { requestFromJson(nlohmann::json::parse(R"({"job_id":"a"})")); }),
            PoolError::Kind::kInvalid);
  EXPECT_EQ(errorKind([] {
              requestFromJson(nlohmann::json::parse(R"({"job_id":"a","gpus":2,"class":"batch"})"));
            }),
            PoolError::Kind::kInvalid);
  auto ok = requestFromJson(nlohmann::json::parse(
      R"({"job_id":"a","gpus":2,"gpus_per_host":"any","class":"inference","priority":3,
          "sharing":"1g.10gb","preemptible":true})"));
  EXPECT_EQ(ok.gpusPerHost, 0);
  EXPECT_EQ(ok.sharing, "1g.10gb");
  EXPECT_EQ(requestFromJson(toJson(ok)), ok);
  // No topology yet: not ready.
  Pool empty(options());
  empty.putHost(h100Host("dgx0001"));
  EXPECT_EQ(errorKind([&] { empty.allocate(req("a", 1, JobClass::kInference)); }),
            PoolError::Kind::kNotReady);
}

TEST_F(PoolTest, HostsUnknownToTheFabricAreReportedAndNeverUsed) {
  auto pool = makePool(options(), 1);  // dgx0001 only
  pool->putHost(h100Host("ghost01"));
  auto v = pool->host("ghost01");
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->inFabric);
  EXPECT_THAT(v->healthReason, HasSubstr("unknown to the fabric"));
  EXPECT_THAT(pool->usage().unknownHosts, ElementsAre("ghost01"));
  EXPECT_EQ(pool->usage().totalGpus, 8);
  auto r = pool->allocate(req("a", 8, JobClass::kInference));
  EXPECT_THAT(hostsOf(r.allocation), ElementsAre("dgx0001"));
  EXPECT_THAT(r.warnings, ElementsAre(HasSubstr("ghost01")));
  EXPECT_EQ(errorKind([&] { pool->allocate(req("b", 1, JobClass::kInference)); }),
            PoolError::Kind::kCapacity);
  // A host's GPUs cannot change under its allocations.
  EXPECT_EQ(errorKind([&] { pool->putHost(h100Host("dgx0001", 4)); }), PoolError::Kind::kConflict);
  EXPECT_FALSE(pool->putHost(h100Host("dgx0001"))) << "same host again: no change";
}

TEST_F(PoolTest, PreemptionTakesLowestPriorityYoungestFirstAndSparesTheRest) {
  auto pool = makePool(options(), 4);  // 32 GPUs: dgx0001..dgx0004 on leaf-01
  // Fill: one host each. Sequence: p1-old, p1-young, p2, p0-keep (not preemptible).
  pool->allocate(req("p1-old", 8, JobClass::kInference, 1, true, 8));
  pool->allocate(req("p1-young", 8, JobClass::kInference, 1, true, 8));
  pool->allocate(req("p2", 8, JobClass::kInference, 2, true, 8));
  pool->allocate(req("p0-keep", 8, JobClass::kInference, 0, false, 8));
  // Equal priority never preempts; capacity error lists the attempt.
  EXPECT_EQ(errorKind([&] { pool->allocate(req("same", 8, JobClass::kTraining, 1, false, 8)); }),
            PoolError::Kind::kCapacity);
  // Priority 5, one host: the youngest of the lowest priority goes.
  auto r = pool->allocate(req("urgent", 8, JobClass::kTraining, 5, false, 8));
  EXPECT_THAT(idsOf(r.victims), ElementsAre("p1-young"));
  EXPECT_FALSE(pool->get("p1-young"));
  // Two more hosts: p1-old then p2 (p0-keep is not preemptible).
  auto r2 = pool->allocate(req("bigger", 16, JobClass::kTraining, 9, false, 8));
  EXPECT_THAT(idsOf(r2.victims), ElementsAre("p1-old", "p2"));
  EXPECT_TRUE(pool->get("p0-keep"));
  EXPECT_TRUE(pool->get("urgent")) << "not preemptible";
  EXPECT_EQ(pool->usage().preemptions, 3u);
  // Nothing left to take.
  EXPECT_EQ(errorKind([&] { pool->allocate(req("more", 8, JobClass::kTraining, 99, false, 8)); }),
            PoolError::Kind::kCapacity);
}

TEST_F(PoolTest, PreemptionSparesVictimsThatDoNotHelp) {
  auto pool = makePool(options(), 2);  // dgx0001, dgx0002
  // dgx0001: two small preemptible jobs; dgx0002: one 7-GPU preemptible job + 1 GPU free.
  pool->allocate(req("small-a", 4, JobClass::kInference, 1, true, 4));
  pool->allocate(req("small-b", 4, JobClass::kInference, 1, true, 4));
  pool->allocate(req("big", 7, JobClass::kInference, 1, true));
  ASSERT_EQ(pool->get("big")->hosts[0].host, "dgx0002");
  // Needs one whole host. Youngest first: big (frees dgx0002 entirely) suffices.
  auto r = pool->allocate(req("t", 8, JobClass::kTraining, 3, false, 8));
  EXPECT_THAT(idsOf(r.victims), ElementsAre("big"));
  EXPECT_THAT(hostsOf(r.allocation), ElementsAre("dgx0002"));
  // Now only dgx0001 is left: both of its jobs go, youngest first.
  auto r2 = pool->allocate(req("t2", 8, JobClass::kTraining, 3, false, 8));
  EXPECT_THAT(idsOf(r2.victims), ElementsAre("small-b", "small-a"));
}

TEST_F(PoolTest, QuotaWindowsFollowTheInjectedClock) {
  auto o = options();
  o.quotas.push_back(
      quotaFromJson({{"class", "inference"}, {"max_percent", 25}, {"window", "08:00-20:00"}}));
  auto pool = makePool(std::move(o), 4);  // 32 GPUs: inference <= 8 by day
  clockNow_ = at(9, 0);
  auto u = pool->usage();
  ASSERT_EQ(u.quotas.size(), 1u);
  EXPECT_TRUE(u.quotas[0].active);
  EXPECT_DOUBLE_EQ(u.quotas[0].limitGpus, 8.0);
  pool->allocate(req("day-1", 8, JobClass::kInference));
  try {
    pool->allocate(req("day-2", 1, JobClass::kInference));
    ADD_FAILURE() << "quota not enforced";
  } catch (const PoolError& e) {
    EXPECT_EQ(e.kind(), PoolError::Kind::kQuota);
    EXPECT_THAT(e.what(), HasSubstr("08:00-20:00"));
  }
  // MIG slices count by their share of a GPU.
  EXPECT_EQ(errorKind([&] {
              pool->allocate(req("day-mig", 1, JobClass::kInference, 0, false, 0, "1g.10gb"));
            }),
            PoolError::Kind::kQuota);
  // Training is not limited.
  EXPECT_TRUE(pool->allocate(req("train", 8, JobClass::kTraining)).created);
  // At night inference may take the rest.
  clockNow_ = at(21, 30);
  EXPECT_FALSE(pool->usage().quotas[0].active);
  EXPECT_TRUE(pool->allocate(req("night", 16, JobClass::kInference)).created);
  // Next morning the window is active again and shows the excess.
  clockNow_ = at(8, 0);
  u = pool->usage();
  EXPECT_TRUE(u.quotas[0].active);
  EXPECT_TRUE(u.quotas[0].exceeded);
  EXPECT_DOUBLE_EQ(u.quotas[0].usedGpus, 24.0);
  // A wrapping window (20:00-08:00) is active at 23:00 and at 07:59, not at 08:00.
  QuotaRule night =
      quotaFromJson({{"class", "training"}, {"max_fraction", 0.5}, {"window", "20:00-08:00"}});
  EXPECT_TRUE(night.activeAt(at(23, 0)));
  EXPECT_TRUE(night.activeAt(at(7, 59)));
  EXPECT_FALSE(night.activeAt(at(8, 0)));
  EXPECT_THROW(quotaFromJson({{"class", "inference"}, {"max_percent", 160}}),
               std::invalid_argument);
  EXPECT_THROW(quotaFromJson({{"class", "inference"}, {"max_fraction", 0.5}, {"window", "8-20"}}),
               std::invalid_argument);
}

TEST_F(PoolTest, QuotaCanBeMetByPreemptingTheSameClass) {
  auto o = options();
  o.quotas.push_back(quotaFromJson({{"class", "inference"}, {"max_percent", 25}}));  // all day
  auto pool = makePool(std::move(o), 4);
  pool->allocate(req("low", 8, JobClass::kInference, 1, true));
  auto r = pool->allocate(req("high", 8, JobClass::kInference, 5));
  EXPECT_THAT(idsOf(r.victims), ElementsAre("low"));
}

TEST_F(PoolTest, LinkDownEventDegradesAllocationsAndSuggestsAReplacementOnTheSameLeaf) {
  auto pool = makePool();
  auto job = pool->allocate(req("train", 16, JobClass::kTraining, 0, false, 8)).allocation;
  ASSERT_THAT(hostsOf(job), ElementsAre("dgx0001", "dgx0002"));
  pool->allocate(req("other", 8, JobClass::kInference));  // takes a host
  const Host* victim = topology_->findHost("dgx0002");
  ASSERT_TRUE(victim);
  const Node& hca = topology_->node(victim->hcas.at(0));
  telemetry::Event e;
  e.type = telemetry::EventType::kLinkDown;
  e.end = {hca.guid, hca.description, PortNum(1)};
  pool->observeEvent(e);
  auto a = pool->get("train").value();
  EXPECT_EQ(a.state, AllocationState::kDegraded);
  EXPECT_THAT(a.degradedReason, HasSubstr("dgx0002"));
  EXPECT_THAT(a.degradedReason, HasSubstr("mlx5_0"));
  ASSERT_TRUE(a.replacement);
  // dgx0003/dgx0004 share leaf-01 with dgx0001 (the job's leaf); the inference job took one.
  const std::string other = pool->get("other")->hosts[0].host;
  EXPECT_TRUE(*a.replacement == "dgx0003" || *a.replacement == "dgx0004") << *a.replacement;
  EXPECT_NE(*a.replacement, other);
  EXPECT_THAT(a.replacementNote, HasSubstr("leaf packing"));  // the tests' placer explains
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].jobId, "train");
  EXPECT_EQ(events_[0].host, "dgx0002");
  EXPECT_EQ(events_[0].replacement, a.replacement);
  // The failing host is not used for new work; the event is emitted once.
  EXPECT_EQ(pool->host("dgx0002")->health, HostHealth::kDown);
  pool->observeEvent(e);
  EXPECT_EQ(events_.size(), 1u);
  EXPECT_EQ(pool->usage().byClass[JobClass::kTraining].degradedAllocations, 1);
  // link_up clears the host's fault; the allocation stays degraded until the scheduler acts.
  e.type = telemetry::EventType::kLinkUp;
  pool->observeEvent(e);
  EXPECT_EQ(pool->host("dgx0002")->health, HostHealth::kOk);
  EXPECT_EQ(pool->get("train")->state, AllocationState::kDegraded);
}

TEST_F(PoolTest, TheReplacementIsTheHostThePlacementEngineRanksBest) {
  // The placer is the placement engine on the same fabric (with LIDs and shortest-path tables);
  // dgx0003's HCA link is 90 % used, so a ring through it would get a tenth of a link. By leaf
  // span dgx0003 and dgx0004 tie (the job's leaf) and the name would pick dgx0003; the engine
  // ranks dgx0004 first, then the other leaves' idle hosts (objective ~0.98: one more leaf), the
  // first of them by name dgx0005, and dgx0003 (~0.1) last.
  const TopologyPtr routed = testing::routableTopology(testing::twoLevel(4, 2, 4));
  auto load = std::make_shared<routing::LinkLoadModel>(routed);
  const Node& hot = routed->node(routed->findHost("dgx0003")->hcas.at(0));
  const std::uint32_t link = *hot.port(PortNum(1))->link;
  load->setUtilization(routing::directedLink(link, false), 0.9);
  load->setUtilization(routing::directedLink(link, true), 0.9);
  const routing::PlacementEngine engine(std::make_shared<const routing::PlacementIndex>(
                                            routed, routing::computeShortestPathTables(routed)),
                                        load);
  int asked = 0;
  auto o = options();
  o.placer = [&](const routing::PlacementRequest& r) {
    ++asked;
    return engine.place(r);
  };
  auto pool = makePool(std::move(o));
  pool->allocate(req("train", 16, JobClass::kTraining, 0, false, 8));
  ASSERT_THAT(hostsOf(*pool->get("train")), ElementsAre("dgx0001", "dgx0002"));
  asked = 0;
  linkDown(*pool, "dgx0002");
  const auto a = pool->get("train").value();
  ASSERT_EQ(a.state, AllocationState::kDegraded);
  ASSERT_TRUE(a.replacement);
  EXPECT_EQ(*a.replacement, "dgx0004");
  EXPECT_EQ(asked, 14);  // once per free healthy host
  EXPECT_THAT(a.replacementNote, HasSubstr("ranked best of 14 free hosts by the placement engine"));
  EXPECT_THAT(a.replacementNote, HasSubstr("bottleneck"));  // the engine's explanation
  // The runner-up is a host of another leaf (idle links, one more leaf), not the hot dgx0003.
  EXPECT_THAT(a.replacementNote, HasSubstr("next best dgx0005"));
  // The reason travels with the event (GET of the allocation shows it as `note`).
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].replacement, "dgx0004");
  EXPECT_THAT(events_[0].message, HasSubstr(a.replacementNote));
}

TEST_F(PoolTest, WhenThePlacerPlacesTheJobNowhereThereIsNoReplacementAndTheNoteSaysWhy) {
  auto o = options();
  auto leafPacking = o.placer;
  bool failing = false;
  o.placer = [&](const routing::PlacementRequest& r) -> routing::PlacementAnswer {
    if (failing)
      throw routing::PlacementError(routing::PlacementError::Kind::kUnsatisfiable,
                                    "2 hosts asked, 1 eligible");
    return leafPacking(r);
  };
  auto pool = makePool(std::move(o));
  pool->allocate(req("train", 16, JobClass::kTraining, 0, false, 8));
  failing = true;
  linkDown(*pool, "dgx0002");
  const auto a = pool->get("train").value();
  EXPECT_EQ(a.state, AllocationState::kDegraded);
  EXPECT_FALSE(a.replacement);
  EXPECT_THAT(a.replacementNote, HasSubstr("on none of 14 free hosts: 2 hosts asked, 1 eligible"));
}

TEST_F(PoolTest, HcaGoneFromANewTopologyDegradesItsHost) {
  auto pool = makePool();
  pool->allocate(req("inf", 2, JobClass::kInference));
  const std::string host = pool->get("inf")->hosts[0].host;
  // The same fabric with that host's HCA cable removed (as after an ibsim Unlink).
  auto gen = twoLevel();
  std::string caId;
  for (auto& n : gen.fabric.nodes)
    if (n.type == NodeType::kCa && n.desc.rfind(host + " ", 0) == 0) {
      caId = n.id;
      n.ports.clear();
    }
  ASSERT_FALSE(caId.empty());
  for (auto& n : gen.fabric.nodes)
    std::erase_if(n.ports, [&](const NetPort& p) { return p.remoteId == caId; });
  gen.fabric.reindex();
  pool->setTopology(topologyFromNetFabric(gen.fabric));
  auto a = pool->get("inf").value();
  EXPECT_EQ(a.state, AllocationState::kDegraded);
  EXPECT_THAT(a.degradedReason, HasSubstr("mlx5_0"));
  ASSERT_TRUE(a.replacement);
  EXPECT_NE(*a.replacement, host);
  EXPECT_EQ(events_.size(), 1u);
  EXPECT_NE(pool->host(host)->health, HostHealth::kOk);
}

TEST_F(PoolTest, JournalRestartLosesNothing) {
  useJournal();
  std::vector<Allocation> before;
  {
    auto pool = makePool();
    pool->allocate(req("t1", 16, JobClass::kTraining, 1, true, 8));
    pool->allocate(req("i1", 3, JobClass::kInference));
    pool->allocate(req("m1", 5, JobClass::kInference, 0, false, 0, "1g.10gb"));
    pool->allocate(req("gone", 1, JobClass::kInference));
    ASSERT_TRUE(pool->release("gone"));
    pool->allocate(req("t2", 8, JobClass::kTraining, 9, false, 8));  // no preemption needed
    before = pool->list();
  }
  auto pool = std::make_unique<Pool>(options());  // replay only: no putHost, no topology
  EXPECT_EQ(pool->hosts().size(), 16u);
  auto after = pool->list();
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].request, before[i].request);
    EXPECT_EQ(after[i].hosts, before[i].hosts);
    EXPECT_EQ(after[i].sequence, before[i].sequence);
    EXPECT_EQ(after[i].created, before[i].created);
  }
  pool->setTopology(topology_);
  // Nothing double-allocated: same usage, and new work avoids the replayed GPUs.
  std::set<std::pair<std::string, int>> taken;
  for (const auto& a : after)
    if (a.request.sharing == "exclusive")
      for (const auto& g : a.hosts)
        for (int i : g.gpus) taken.insert({g.host, i});
  auto fresh = pool->allocate(req("fresh", 8, JobClass::kInference)).allocation;
  for (const auto& g : fresh.hosts)
    for (int i : g.gpus) EXPECT_FALSE(taken.count({g.host, i})) << g.host << " gpu " << i;
  EXPECT_FALSE(pool->allocate(req("t1", 16, JobClass::kTraining, 1, true, 8)).created);
  EXPECT_GT(after.back().sequence, 0u);
  EXPECT_GT(fresh.sequence, after.back().sequence);
}

TEST_F(PoolTest, DegradedStateSurvivesRestart) {
  useJournal();
  {
    auto pool = makePool();
    pool->allocate(req("train", 16, JobClass::kTraining, 0, false, 8));
    const Node& hca = topology_->node(topology_->findHost("dgx0001")->hcas.at(0));
    telemetry::Event e;
    e.type = telemetry::EventType::kErrorThreshold;
    e.end = {hca.guid, hca.description, PortNum(1)};
    pool->observeEvent(e);
    ASSERT_EQ(pool->get("train")->state, AllocationState::kDegraded);
  }
  Pool pool(options());
  auto a = pool.get("train").value();
  EXPECT_EQ(a.state, AllocationState::kDegraded);
  EXPECT_THAT(a.degradedReason, HasSubstr("error_threshold"));
  EXPECT_TRUE(a.replacement);
}

TEST_F(PoolTest, TornLastRecordIsDetectedAndIgnored) {
  useJournal();
  {
    auto pool = makePool();
    pool->allocate(req("keep", 8, JobClass::kTraining, 0, false, 8));
  }
  // A crash mid-write: a record header promising more bytes than were written.
  const auto log = dir_ / "journal.log";
  const auto goodSize = std::filesystem::file_size(log);
  {
    std::ofstream out(log, std::ios::binary | std::ios::app);
    const char header[8] = {100, 0, 0, 0, 1, 2, 3, 4};
    out.write(header, 8);
    out << R"({"op":"alloc","allocation":{"job_id":"half")";
  }
  {
    Pool pool(options());
    EXPECT_GT(pool.usage().tornBytesAtStart, 0u);
    EXPECT_THAT(idsOf(pool.list()), ElementsAre("keep"));
    EXPECT_EQ(std::filesystem::file_size(log), goodSize) << "the torn tail is cut";
    pool.setTopology(topology_);
    pool.allocate(req("next", 8, JobClass::kTraining, 0, false, 8));
  }
  // A flipped byte inside the last record: its CRC fails, it is dropped, earlier ones stay.
  {
    std::fstream f(log, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(-3, std::ios::end);
    f.put('#');
  }
  Pool pool(options());
  EXPECT_THAT(idsOf(pool.list()), ElementsAre("keep"));
  EXPECT_GT(pool.usage().tornBytesAtStart, 0u);
}

TEST_F(PoolTest, CompactionWritesASnapshotAndReplaysFromIt) {
  useJournal();
  std::vector<Allocation> before;
  {
    auto o = options();
    o.compactEvery = 5;
    auto pool = makePool(std::move(o));  // 16 host records: compacted at 5, 10, 15
    EXPECT_TRUE(std::filesystem::exists(dir_ / "snapshot.json"));
    for (int i = 0; i < 7; ++i)
      pool->allocate(req("j" + std::to_string(i), 2, JobClass::kInference));
    ASSERT_TRUE(pool->release("j3"));
    EXPECT_LT(pool->usage().journalRecords, 5u);
    before = pool->list();
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "snapshot.json.tmp"));
  const auto log = dir_ / "journal.log";
  std::string oldRecords;
  {
    Pool pool(options());
    auto after = pool.list();
    ASSERT_EQ(idsOf(after), idsOf(before));
    for (std::size_t i = 0; i < after.size(); ++i) EXPECT_EQ(after[i].hosts, before[i].hosts);
    // A crash between the snapshot's rename and the journal's truncation leaves records the
    // snapshot already holds: they are skipped, not applied twice.
    std::ifstream in(log, std::ios::binary);
    oldRecords.assign(std::istreambuf_iterator<char>(in), {});
    ASSERT_FALSE(oldRecords.empty());
    pool.compact();
    EXPECT_EQ(pool.usage().journalRecords, 0u);
    EXPECT_EQ(std::filesystem::file_size(log), 0u);
  }
  {
    std::ofstream out(log, std::ios::binary | std::ios::trunc);
    out << oldRecords;
  }
  Pool again(options());
  EXPECT_EQ(idsOf(again.list()), idsOf(before));
  again.setTopology(topology_);
  int free = 0;
  for (const auto& h : again.hosts()) free += h.freeGpus;
  EXPECT_EQ(free, 128 - 2 * 6);
}

TEST_F(PoolTest, ACorruptMiddleRecordRefusesToStartAndKeepsTheJournal) {
  useJournal();
  {
    auto pool = makePool();
    for (int i = 0; i < 6; ++i)
      pool->allocate(req("job" + std::to_string(i), 2, JobClass::kInference));
  }
  const auto log = dir_ / "journal.log";
  std::string bytes;
  {
    std::ifstream in(log, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  // 4 bytes flipped halfway through the file: in some record with good ones after it.
  for (std::size_t i = 0; i < 4; ++i) bytes[bytes.size() / 2 + i] ^= 0x5a;
  {
    std::ofstream out(log, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  try {
    Pool pool(options());
    ADD_FAILURE() << "a corrupt journal was accepted";
  } catch (const PoolError& e) {
    EXPECT_EQ(e.kind(), PoolError::Kind::kStorage);
    EXPECT_THAT(e.what(), HasSubstr(log.string() + " is corrupt at offset "));
    EXPECT_THAT(e.what(), HasSubstr("(record "));
  }
  EXPECT_EQ(std::filesystem::file_size(log), bytes.size()) << "nothing cut";
  std::string after;
  {
    std::ifstream in(log, std::ios::binary);
    after.assign(std::istreambuf_iterator<char>(in), {});
  }
  EXPECT_EQ(crc32(after), crc32(bytes));
}

TEST_F(PoolTest, ASecondPoolOnTheSameJournalIsRefused) {
  useJournal();
  auto first = makePool();
  try {
    Pool second(options());
    ADD_FAILURE() << "two pools on one journal";
  } catch (const PoolError& e) {
    EXPECT_EQ(e.kind(), PoolError::Kind::kStorage);
    EXPECT_THAT(e.what(),
                HasSubstr("in use by another process (pid " + std::to_string(::getpid())));
  }
  EXPECT_EQ(first->hosts().size(), 16u);
}

TEST(PoolJournalFormat, AnUnusableJournalDirectoryIsAStorageError) {
  PoolOptions o;
  o.journalDir = "/proc/ibfabric-no-such-dir/pool";
  try {
    Pool pool(o);
    ADD_FAILURE() << "no error";
  } catch (const PoolError& e) {
    EXPECT_EQ(e.kind(), PoolError::Kind::kStorage);
    EXPECT_EQ(e.httpStatus(), 500);
    EXPECT_THAT(e.what(), HasSubstr("/proc/ibfabric-no-such-dir"));
  }
}

TEST(PoolJournalFormat, Crc32MatchesTheStandardCheckValue) {
  EXPECT_EQ(crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(crc32(""), 0u);
}

TEST(PoolInventory, ShorthandListsAndMigProfiles) {
  auto hosts = inventoryFromJson(nlohmann::json::parse(R"({"hosts": [
      {"name": "dgx[0001-0003]", "gpu_count": 8, "model": "H100-80GB", "memory_gb": 80,
       "mig_capable": true, "numa_nodes": 2},
      {"name": "a30node", "gpus": [{"index": 0, "model": "A30", "memory_gb": 24,
        "mig_capable": true, "mig_profiles": ["1g.6gb", "2g.12gb", "4g.24gb"], "hca": "mlx5_4"}]}
  ]})"));
  ASSERT_EQ(hosts.size(), 4u);
  EXPECT_EQ(hosts[2].name, "dgx0003");
  ASSERT_EQ(hosts[0].gpus.size(), 8u);
  EXPECT_EQ(hosts[0].gpus[5].hca, "mlx5_5");
  EXPECT_EQ(hosts[0].gpus[3].numaNode, 0);
  EXPECT_EQ(hosts[0].gpus[4].numaNode, 1);
  EXPECT_THAT(hosts[0].gpus[0].migProfiles,
              ElementsAre("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"));
  EXPECT_EQ(hosts[3].gpus[0].hca, "mlx5_4");
  const Gpu& h100 = hosts[0].gpus[0];
  EXPECT_EQ(parseMigProfile("1g.10gb", h100)->memorySlices, 1);
  EXPECT_EQ(parseMigProfile("1g.20gb", h100)->memorySlices, 2);
  EXPECT_EQ(parseMigProfile("3g.40gb", h100)->computeSlices, 3);
  EXPECT_EQ(parseMigProfile("7g.80gb", h100)->memorySlices, 8);
  EXPECT_FALSE(parseMigProfile("8g.80gb", h100));
  EXPECT_FALSE(parseMigProfile("nonsense", h100));
  EXPECT_EQ(computeSlicesOf("A30"), 4);
  EXPECT_EQ(defaultMigProfiles("H200", 141).back(), "7g.141gb");
  EXPECT_EQ(defaultMigProfiles("B200", 180).front(), "1g.23gb");
  EXPECT_TRUE(defaultMigProfiles("L40S", 48).empty());
  // Round trip through the JSON form.
  auto back = hostFromJson(hosts[3].name, toJson(hosts[3]));
  EXPECT_EQ(back, hosts[3]);
}

TEST(PoolInventory, BadInventoriesAreOneLineErrors) {
  using nlohmann::json;
  auto err = [](const std::string& text) {
    try {
      inventoryFromJson(json::parse(text));
    } catch (const InventoryError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(err(R"({"hosts": 3})"), HasSubstr("hosts"));
  EXPECT_THAT(err(R"({"hosts": [{"gpu_count": 8}]})"), HasSubstr("name"));
  EXPECT_THAT(err(R"({"hosts": [{"name": "a", "gpu_count": 0}]})"), HasSubstr("gpu_count"));
  EXPECT_THAT(err(R"({"hosts": [{"name": "a", "gpu_count": 8, "colour": 1}]})"),
              HasSubstr("colour"));
  EXPECT_THAT(err(R"({"hosts": [{"name": "a[1-2", "gpu_count": 8}]})"), HasSubstr("host list"));
  EXPECT_THAT(err(R"({"hosts": [{"name": "a", "gpu_count": 8}, {"name": "a", "gpu_count": 8}]})"),
              HasSubstr("twice"));
  EXPECT_THAT(err(R"({"hosts": [{"name": "a", "gpus": [{"index": 0}, {"index": 0}]}]})"),
              HasSubstr("twice"));
  EXPECT_THAT(err(R"({"hosts": [{"name": "a", "gpu_count": 8, "mig_profiles": ["1g.10gb"]}]})"),
              HasSubstr("not MIG-capable"));
  EXPECT_THAT(err(R"({"hosts": [{"name": "a", "gpu_count": "eight"}]})"), HasSubstr("wrong type"));
  EXPECT_THROW(loadInventoryFile("/nonexistent/pool.json"), InventoryError);
}

TEST(PoolPlacer, LeafPackingPrefersOneLeafAndReportsUnknownCandidates) {
  auto t = topologyFromNetFabric(twoLevel().fabric);
  auto placer = makeLeafPackingPlacer([t] { return t; });
  routing::PlacementRequest r;
  r.hosts = 3;
  r.candidates = {"dgx0005", "dgx0001", "dgx0006", "dgx0007", "nohost"};
  auto a = placer(r);
  ASSERT_EQ(a.options.size(), 1u);
  EXPECT_THAT(a.options[0].hosts, ElementsAre("dgx0005", "dgx0006", "dgx0007"));
  EXPECT_EQ(a.options[0].score.leafSwitches, 1);
  EXPECT_THAT(a.warnings, ElementsAre(HasSubstr("nohost")));
  r.hosts = 9;
  EXPECT_THROW(placer(r), routing::PlacementError);
}

}  // namespace
}  // namespace ibfabric::scheduler_hooks
