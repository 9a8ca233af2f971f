#include "tests/support/prometheus_fixture.h"

#include <fcntl.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <thread>

#include "tests/support/free_port.h"
#include "tests/support/prom_api.h"
#include "tests/support/subprocess.h"

extern char** environ;

namespace ibfabric::testing {
namespace {

constexpr const char* kBinary = "/usr/bin/prometheus";

/// Reaps `pid` if it exited; true when it is gone.
bool reaped(pid_t pid) {
  int st = 0;
  return ::waitpid(pid, &st, WNOHANG) == pid;
}

}  // namespace

PrometheusFixture::~PrometheusFixture() {
  stop();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

bool PrometheusFixture::available() { return ::access(kBinary, X_OK) == 0; }

std::string PrometheusFixture::scrapeConfig(const std::string& target,
                                            std::chrono::seconds interval) {
  const std::string s = std::to_string(interval.count()) + "s";
  return "global:\n  scrape_interval: " + s + "\n  evaluation_interval: " + s +
         "\n  scrape_timeout: " + s +
         "\nscrape_configs:\n  - job_name: ibfabric\n    metrics_path: /metrics\n"
         "    static_configs:\n      - targets: [\"" +
         target + "\"]\n";
}

std::string PrometheusFixture::start(const std::string& configYaml,
                                     const std::vector<std::filesystem::path>& rulesFiles) {
  if (pid_ > 0) throw std::runtime_error("prometheus already started");
  static int serial = 0;
  dir_ = scratchDir() / ("prometheus-" + std::to_string(++serial));
  std::filesystem::create_directories(dir_ / "data");
  {
    std::ofstream cfg(dir_ / "prometheus.yml", std::ios::trunc);
    cfg << configYaml;
    if (!configYaml.empty() && configYaml.back() != '\n') cfg << '\n';
    if (!rulesFiles.empty()) {
      cfg << "rule_files:\n";
      for (const auto& r : rulesFiles)
        cfg << "  - \"" << std::filesystem::absolute(r).string() << "\"\n";
    }
  }
  const auto logPath = dir_ / "prometheus.log";
  for (int attempt = 0; attempt < 3; ++attempt) {
    port_ = freeLoopbackPort();
    std::vector<std::string> argv = {kBinary,
                                     "--config.file=" + (dir_ / "prometheus.yml").string(),
                                     "--storage.tsdb.path=" + (dir_ / "data").string(),
                                     "--web.listen-address=127.0.0.1:" + std::to_string(port_),
                                     "--storage.tsdb.retention.time=1h",
                                     "--log.level=warn"};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, logPath.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
    posix_spawn_file_actions_addchdir_np(&fa, dir_.c_str());
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    const int rc = ::posix_spawn(&pid_, kBinary, &fa, &attr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
      pid_ = -1;
      throw std::runtime_error("cannot start " + std::string(kBinary));
    }
    url_ = "http://127.0.0.1:" + std::to_string(port_);
    bool exited = false;
    const bool up = waitFor(
        [&] {
          if (reaped(pid_)) {
            exited = true;
            return true;
          }
          httplib::Client c("127.0.0.1", port_);
          c.set_connection_timeout(1, 0);
          c.set_read_timeout(2, 0);
          auto res = c.Get("/-/ready");
          return res && res->status == 200;
        },
        std::chrono::seconds(60), std::chrono::milliseconds(100));
    if (up && !exited) return url_;
    if (!exited) {
      stop();
      break;
    }
    pid_ = -1;  // exited (port taken between freePort() and bind?): try another port
  }
  throw std::runtime_error("prometheus did not become ready:\n" + log());
}

nlohmann::json PrometheusFixture::getData(const std::string& pathAndQuery) const {
  if (pid_ <= 0) throw std::runtime_error("prometheus is not running");
  return promApiData(port_, pathAndQuery, "prometheus");
}

nlohmann::json PrometheusFixture::query(const std::string& promql) const {
  return getData(instantQueryPath(promql));
}

nlohmann::json PrometheusFixture::alerts() const { return getData("/api/v1/alerts"); }

nlohmann::json PrometheusFixture::targets() const { return getData("/api/v1/targets"); }

bool PrometheusFixture::waitForTargets(std::size_t count, std::chrono::milliseconds timeout) const {
  return waitFor(
      [&] {
        try {
          std::size_t up = 0;
          const auto all = targets();  // keep the document alive while iterating
          for (const auto& t : all["activeTargets"]) up += t.value("health", "") == "up";
          return up >= count;
        } catch (const std::exception&) {
          return false;
        }
      },
      timeout, std::chrono::milliseconds(200));
}

void PrometheusFixture::stop() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGTERM);
  if (!waitFor([&] { return reaped(pid_); }, std::chrono::seconds(10),
               std::chrono::milliseconds(20))) {
    ::kill(-pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
  }
  pid_ = -1;
}

std::string PrometheusFixture::log() const {
  std::ifstream in(dir_ / "prometheus.log");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace ibfabric::testing
