#include "api/service/job_registry.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace ibfabric::api {
namespace {

using nlohmann::json;

bool idChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::strchr("._:@+=-", c) != nullptr && c != '\0';
}

std::int64_t millis(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

json jobJson(const ReportedJob& j) {
  json out = {{"id", j.id},
              {"hosts", j.hosts},
              {"pattern", std::string(routing::toString(j.pattern))},
              {"registered_ms", millis(j.registered)}};
  if (j.bottleneckAtRegistration) out["bottleneck_bytes_per_second"] = *j.bottleneckAtRegistration;
  return out;
}

/// A stored job (the file's form); throws on anything unexpected.
ReportedJob jobFromStored(const json& j) {
  ReportedJob r = reportedJobFromBody(j.at("id").get<std::string>(),
                                      json{{"hosts", j.at("hosts")}, {"pattern", j.at("pattern")}});
  r.registered = std::chrono::system_clock::time_point(
      std::chrono::milliseconds(j.at("registered_ms").get<std::int64_t>()));
  if (j.contains("bottleneck_bytes_per_second"))
    r.bottleneckAtRegistration = j["bottleneck_bytes_per_second"].get<double>();
  return r;
}

std::string utcStamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

}  // namespace

void validateJobId(std::string_view id) {
  if (id.empty() || id.size() > 128) throw JobError(400, "job id: 1..128 characters required");
  for (char c : id)
    if (!idChar(c))
      throw JobError(400, "job id: only letters, digits and . _ : @ + = - are allowed");
}

ReportedJob reportedJobFromBody(std::string_view id, const json& body) {
  validateJobId(id);
  if (!body.is_object())
    throw JobError(400, R"(the body must be {"hosts": [names], "pattern": "ring_allreduce"})");
  for (const auto& [key, value] : body.items())
    if (key != "hosts" && key != "pattern") throw JobError(400, "unknown field " + key);
  if (!body.contains("hosts") || !body["hosts"].is_array())
    throw JobError(400, "hosts: a list of host names is required");
  const json& hosts = body["hosts"];
  if (hosts.empty()) throw JobError(400, "hosts: at least one host");
  if (hosts.size() > JobRegistry::kMaxHosts)
    throw JobError(400, "hosts: at most " + std::to_string(JobRegistry::kMaxHosts));
  ReportedJob job;
  job.id = std::string(id);
  std::set<std::string, std::less<>> seen;
  for (const auto& h : hosts) {
    if (!h.is_string() || h.get_ref<const std::string&>().empty() ||
        h.get_ref<const std::string&>().size() > 256)
      throw JobError(400, "hosts: each a host name of 1..256 characters");
    const std::string& name = h.get_ref<const std::string&>();
    if (!seen.insert(name).second) throw JobError(400, "hosts: " + name + " is listed twice");
    job.hosts.push_back(name);
  }
  if (!body.contains("pattern") || !body["pattern"].is_string())
    throw JobError(400, R"(pattern: "ring_allreduce" or "alltoall" is required)");
  const auto pattern = routing::parseCommPattern(body["pattern"].get<std::string>());
  if (!pattern || *pattern == routing::CommPattern::kNone)
    throw JobError(400, R"(pattern: "ring_allreduce" or "alltoall")");
  job.pattern = *pattern;
  return job;
}

JobRegistry::JobRegistry(std::filesystem::path file) : file_(std::move(file)) {
  if (!file_.empty()) load();
}

void JobRegistry::load() {
  std::error_code ec;
  if (!std::filesystem::exists(file_, ec)) return;
  try {
    std::ifstream in(file_);
    std::stringstream text;
    text << in.rdbuf();
    const json doc = json::parse(text.str());
    std::map<std::string, ReportedJob, std::less<>> jobs;
    for (const auto& j : doc.at("jobs")) {
      ReportedJob r = jobFromStored(j);
      jobs[r.id] = std::move(r);
    }
    if (jobs.size() > kMaxJobs) throw std::runtime_error("more than the job limit");
    jobs_ = std::move(jobs);
    spdlog::info("jobs: {} reported jobs restored from {}", jobs_.size(), file_.string());
  } catch (const std::exception& e) {
    loadProblem_ = e.what();
    auto aside = file_;
    aside += ".bad-" + utcStamp();
    std::filesystem::rename(file_, aside, ec);
    spdlog::error("jobs: {} unreadable ({}); moved to {}, starting without reported jobs",
                  file_.string(), loadProblem_, aside.string());
  }
}

void JobRegistry::save(const std::map<std::string, ReportedJob, std::less<>>& jobs) const {
  if (file_.empty()) return;
  json list = json::array();
  for (const auto& [id, j] : jobs) list.push_back(jobJson(j));
  const std::string text = json{{"version", 1}, {"jobs", list}}.dump() + "\n";
  auto tmp = file_;
  tmp += ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw JobError(500, "cannot write " + tmp.string() + ": " + std::strerror(errno));
  std::size_t done = 0;
  bool ok = true;
  while (ok && done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  std::error_code ec;
  if (ok) std::filesystem::rename(tmp, file_, ec);
  if (!ok || ec) {
    std::filesystem::remove(tmp, ec);
    throw JobError(500, "cannot write " + file_.string() + ": " +
                            (ok ? ec.message() : std::string(std::strerror(err))));
  }
}

bool JobRegistry::put(ReportedJob job) {
  std::lock_guard lock(mu_);
  const bool created = !jobs_.contains(job.id);
  if (created && jobs_.size() >= kMaxJobs)
    throw JobError(409, "at most " + std::to_string(kMaxJobs) + " reported jobs");
  auto next = jobs_;
  next[job.id] = std::move(job);
  save(next);
  jobs_ = std::move(next);
  ++version_;
  return created;
}

bool JobRegistry::remove(std::string_view id) {
  std::lock_guard lock(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return false;
  auto next = jobs_;
  next.erase(std::string(id));
  save(next);
  jobs_ = std::move(next);
  ++version_;
  return true;
}

std::optional<ReportedJob> JobRegistry::get(std::string_view id) const {
  std::lock_guard lock(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return std::nullopt;
  return it->second;
}

std::vector<ReportedJob> JobRegistry::list() const {
  std::lock_guard lock(mu_);
  std::vector<ReportedJob> out;
  out.reserve(jobs_.size());
  for (const auto& [id, j] : jobs_) out.push_back(j);
  return out;
}

std::uint64_t JobRegistry::version() const {
  std::lock_guard lock(mu_);
  return version_;
}

}  // namespace ibfabric::api
