#include "api/service/job_service.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "routing/predicted_bottleneck.h"

namespace ibfabric::api {
namespace {

using Clock = std::chrono::steady_clock;

/// The same jobs (ids, sources, patterns, hosts); the bottlenecks do not count.
bool sameJobs(const std::vector<JobEntry>& a, const std::vector<JobEntry>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].id != b[i].id || a[i].source != b[i].source || a[i].pattern != b[i].pattern ||
        a[i].hosts != b[i].hosts)
      return false;
  }
  return true;
}

std::vector<routing::JobTraffic> trafficOf(const std::vector<JobEntry>& jobs) {
  std::vector<routing::JobTraffic> out;
  out.reserve(jobs.size());
  for (const auto& j : jobs) out.push_back({j.id, j.hosts, j.pattern});
  return out;
}

std::optional<double> bottleneckOf(const routing::PlacementEngine& engine, const JobEntry& job) {
  return routing::predictedBottleneck(engine, job.hosts, job.pattern);
}

std::string percent(double ratio) { return std::to_string(std::lround(ratio * 100.0)) + "%"; }

/// "leaf-01 port 3 -> spine-01 port 1"
std::string linkName(const Topology& t, const routing::LinkLoadModel& load,
                     routing::DirectedLinkId d) {
  const PortRef from = load.sender(d), to = load.receiver(d);
  return t.node(from.node).description + " port " + std::to_string(from.port.value()) + " -> " +
         t.node(to.node).description + " port " + std::to_string(to.port.value());
}

telemetry::EventEnd endOf(const Topology& t, PortRef p) {
  return {t.node(p.node).guid, t.node(p.node).description, p.port};
}

}  // namespace

std::string_view toString(JobSource s) { return s == JobSource::kPool ? "pool" : "reported"; }

std::optional<std::size_t> JobsView::find(std::string_view id) const {
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (jobs[i].id == id) return i;
  return std::nullopt;
}

JobService::JobService(FabricService& fabric, PlacementService& placement, PoolService* pool,
                       JobServiceOptions options)
    : fabric_(fabric),
      placement_(placement),
      pool_(pool),
      options_(std::move(options)),
      registry_(options_.registryFile),
      episodes_(options_.congestedUtilization, options_.clearUtilization) {}

JobService::~JobService() { stop(); }

void JobService::start() {
  stop_ = false;
  follower_ = std::thread([this] { follow(); });
}

void JobService::stop() {
  {
    std::lock_guard lock(wakeMu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (follower_.joinable()) follower_.join();
}

std::vector<JobEntry> JobService::currentJobs() const {
  std::vector<JobEntry> jobs;
  if (pool_) {
    for (const auto& a : pool_->pool().list()) {
      JobEntry e{a.request.jobId, JobSource::kPool, routing::CommPattern::kRingAllreduce, {},
                 a.created,       std::nullopt};
      for (const auto& g : a.hosts) e.hosts.push_back(g.host);
      if (auto it = firstSeen_.find(e.id); it != firstSeen_.end()) e.bottleneckAtStart = it->second;
      jobs.push_back(std::move(e));
    }
  }
  for (auto& r : registry_.list()) {
    jobs.push_back({std::move(r.id), JobSource::kReported, r.pattern, std::move(r.hosts),
                    r.registered, r.bottleneckAtRegistration});
  }
  return jobs;
}

JobsViewPtr JobService::view() {
  std::lock_guard lock(mu_);
  ServiceStatePtr state = fabric_.state();
  const std::uint64_t version = registry_.version();
  auto jobs = currentJobs();
  if (view_ && view_->state == state && version == viewRegistryVersion_ &&
      sameJobs(view_->jobs, jobs))
    return view_;
  view_ = refresh(state, std::move(jobs));
  viewRegistryVersion_ = version;
  return view_;
}

JobsViewPtr JobService::latest() const {
  std::lock_guard lock(mu_);
  return view_;
}

JobsViewPtr JobService::refresh(const ServiceStatePtr& state, std::vector<JobEntry> jobs) {
  auto v = std::make_shared<JobsView>();
  v->jobs = std::move(jobs);
  v->state = state;
  if (v->jobs.empty()) return v;  // nothing to attribute: the engine is not even asked for
  try {
    v->engine = placement_.engine();
  } catch (const routing::PlacementError& e) {
    v->notReady = e.what();
    return v;
  }
  attribute(*v, view_.get());
  noteBottlenecks(*v);
  join(*v);
  return v;
}

void JobService::attribute(JobsView& v, const JobsView* previous) {
  if (previous && previous->attribution && &previous->engine->index() == &v.engine->index() &&
      sameJobs(previous->jobs, v.jobs)) {
    v.attribution = previous->attribution;
    return;
  }
  const auto t0 = Clock::now();
  v.attribution = std::make_shared<const routing::JobAttribution>(
      routing::JobAttribution::compute(v.engine->index(), trafficOf(v.jobs)));
  ++stats_.attributions;
  stats_.lastAttributionSeconds = std::chrono::duration<double>(Clock::now() - t0).count();
}

void JobService::noteBottlenecks(JobsView& v) {
  std::map<std::string, std::optional<double>, std::less<>> seen;
  for (auto& j : v.jobs) {
    if (j.source != JobSource::kPool) continue;
    auto it = firstSeen_.find(j.id);
    const auto b = it != firstSeen_.end() ? it->second : bottleneckOf(*v.engine, j);
    j.bottleneckAtStart = b;
    seen[j.id] = b;
  }
  firstSeen_ = std::move(seen);  // released allocations leave
}

void JobService::join(JobsView& v) {
  const auto t0 = Clock::now();
  const auto& routed = v.attribution->jobs();
  v.hottest.resize(routed.size());
  for (std::size_t i = 0; i < routed.size(); ++i)
    v.hottest[i] = routing::hottestLinks(routed[i], v.engine->load(), options_.hottestLinks);
  ++stats_.joins;
  stats_.lastJoinSeconds = std::chrono::duration<double>(Clock::now() - t0).count();
}

void JobService::checkCongestion(const JobsView& v) {
  std::vector<std::pair<std::string, double>> now;
  now.reserve(v.jobs.size());
  for (std::size_t i = 0; i < v.jobs.size(); ++i)
    now.emplace_back(v.jobs[i].id, v.hottest[i].empty() ? 0.0 : v.hottest[i][0].load.utilization);
  for (std::size_t i : episodes_.update(now)) appendCongested(v, i);
}

void JobService::appendCongested(const JobsView& v, std::size_t i) {
  const Topology& t = v.engine->index().topology();
  const auto& load = v.engine->load();
  const auto& hottest = v.hottest[i][0];
  const routing::DirectedLinkId d = hottest.use.link;
  std::string shares, neighbours;
  for (const auto& u : v.attribution->jobsOn(d)) {
    const std::string& other = v.jobs[u.job].id;
    shares += (shares.empty() ? "" : ", ") + other + " " + percent(u.share);
    if (u.job != i) neighbours += (neighbours.empty() ? "" : ", ") + other;
  }
  fabric_.events().append(
      telemetry::EventType::kJobCongested, endOf(t, load.sender(d)), endOf(t, load.receiver(d)),
      "job " + v.jobs[i].id + ": hottest link " + linkName(t, load, d) + " at " +
          percent(hottest.load.utilization) + " utilization (threshold " +
          percent(options_.congestedUtilization) + "); neighbours: " +
          (neighbours.empty() ? std::string("none") : neighbours) + "; shares: " + shares);
  std::lock_guard lock(mu_);
  ++stats_.congestedEvents;
}

void JobService::follow() {
  while (!stop_) {
    try {  // a failure is logged; the follower never dies of it
      JobsViewPtr v = view();
      if (v->state != checked_) {
        checked_ = v->state;
        if (v->attribution) checkCongestion(*v);
      }
    } catch (const std::exception& e) {
      spdlog::error("jobs: attribution failed (retried): {}", e.what());
    }
    std::unique_lock lock(wakeMu_);
    wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_.load(); });
  }
}

bool JobService::report(std::string_view id, const nlohmann::json& body) {
  ReportedJob job = reportedJobFromBody(id, body);
  const ServiceStatePtr state = fabric_.state();
  if (!state->topology) throw JobError(503, "no topology yet (first crawl)");
  std::vector<std::string> unknown;
  for (const auto& h : job.hosts)
    if (!state->topology->findHost(h)) unknown.push_back(h);
  if (!unknown.empty()) {
    std::string names;
    for (std::size_t i = 0; i < unknown.size() && i < 20; ++i)
      names += (i ? ", " : "") + unknown[i];
    if (unknown.size() > 20) names += " and " + std::to_string(unknown.size() - 20) + " more";
    throw JobError(404, "unknown hosts: " + names);
  }
  if (pool_ && pool_->pool().get(id))
    throw JobError(409, "job " + job.id + " is a pool allocation (release it through the pool)");
  const auto old = registry_.get(id);
  if (old && old->hosts == job.hosts && old->pattern == job.pattern) {
    job.registered = old->registered;  // the same job reported again
    job.bottleneckAtRegistration = old->bottleneckAtRegistration;
  } else {
    job.registered = std::chrono::system_clock::now();
    try {
      job.bottleneckAtRegistration =
          routing::predictedBottleneck(*placement_.engine(), job.hosts, job.pattern);
    } catch (const routing::PlacementError& e) {
      spdlog::debug("jobs: {} registered without a predicted bottleneck: {}", job.id, e.what());
    }
  }
  const bool created = registry_.put(std::move(job));
  wake_.notify_all();
  return created;
}

bool JobService::remove(std::string_view id) {
  validateJobId(id);
  if (!registry_.get(id) && pool_ && pool_->pool().get(id))
    throw JobError(
        409, "job " + std::string(id) + " is a pool allocation (release it through the pool)");
  const bool removed = registry_.remove(id);
  if (removed) wake_.notify_all();
  return removed;
}

JobStats JobService::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace ibfabric::api
