#include "tests/support/victoria_metrics_stack.h"

#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <stdexcept>

#include "tests/support/free_port.h"
#include "tests/support/prom_api.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

constexpr const char* kVm = "/usr/bin/victoria-metrics";
constexpr const char* kVmalert = "/usr/bin/vmalert";

bool healthy(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(1, 0);
  c.set_read_timeout(2, 0);
  auto res = c.Get("/health");
  return res && res->status == 200;
}

}  // namespace

VictoriaMetricsStack::~VictoriaMetricsStack() {
  stop();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

bool VictoriaMetricsStack::available() {
  return ::access(kVm, X_OK) == 0 && ::access(kVmalert, X_OK) == 0;
}

std::unique_ptr<BackgroundProcess> VictoriaMetricsStack::startServer(const std::string& name,
                                                                     std::vector<std::string> argv,
                                                                     int& port) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    port = freeLoopbackPort();
    std::vector<std::string> args = argv;
    args.push_back("-httpListenAddr=127.0.0.1:" + std::to_string(port));
    auto p = std::make_unique<BackgroundProcess>(args, dir_ / (name + ".log"), dir_);
    const bool up = waitFor([&] { return !p->running() || healthy(port); },
                            std::chrono::seconds(60), std::chrono::milliseconds(100));
    if (up && p->running()) return p;
    p->stop(SIGTERM, std::chrono::seconds(5));  // exited (the port taken meanwhile?) or hung
  }
  throw std::runtime_error(name + " did not become healthy:\n" + logs());
}

void VictoriaMetricsStack::start(const std::vector<std::filesystem::path>& rulesFiles,
                                 const std::string& notifierUrl,
                                 std::chrono::seconds evaluationInterval) {
  if (vm_) throw std::runtime_error("victoria-metrics already started");
  static int serial = 0;
  dir_ = scratchDir() / ("victoria-metrics-" + std::to_string(++serial));
  std::filesystem::create_directories(dir_);
  // Samples visible 1 s after they arrive (default 30 s) and no result cache: the test reads
  // what was just written.
  vm_ = startServer("victoria-metrics",
                    {kVm, "-storageDataPath=" + (dir_ / "data").string(), "-retentionPeriod=1d",
                     "-search.latencyOffset=1s", "-search.disableCache", "-loggerLevel=WARN"},
                    vmPort_);
  const std::string vmUrl = "http://127.0.0.1:" + std::to_string(vmPort_);
  std::vector<std::string> argv = {
      kVmalert,
      "-datasource.url=" + vmUrl,
      "-remoteWrite.url=" + vmUrl,
      "-notifier.url=" + notifierUrl,
      "-evaluationInterval=" + std::to_string(evaluationInterval.count()) + "s",
      "-loggerLevel=WARN"};
  for (const auto& r : rulesFiles) argv.push_back("-rule=" + std::filesystem::absolute(r).string());
  vmalert_ = startServer("vmalert", argv, vmalertPort_);
}

void VictoriaMetricsStack::stop() {
  for (auto* p : {&vmalert_, &vm_}) {
    if (*p) (*p)->stop(SIGTERM, std::chrono::seconds(10));
    p->reset();
  }
}

std::string VictoriaMetricsStack::remoteWriteUrl() const {
  return "http://127.0.0.1:" + std::to_string(vmPort_) + "/api/v1/write";
}

nlohmann::json VictoriaMetricsStack::query(const std::string& promql) const {
  return promApiData(vmPort_, instantQueryPath(promql), "victoria-metrics");
}

nlohmann::json VictoriaMetricsStack::alerts() const {
  return promApiData(vmalertPort_, "/api/v1/alerts", "vmalert");
}

nlohmann::json VictoriaMetricsStack::ruleGroups() const {
  return promApiData(vmalertPort_, "/api/v1/rules", "vmalert")["groups"];
}

std::string VictoriaMetricsStack::logs() const {
  std::string out;
  for (const auto& [name, p] :
       {std::pair{"victoria-metrics", &vm_}, std::pair{"vmalert", &vmalert_}})
    out +=
        std::string("--- ") + name + " ---\n" + (*p ? (*p)->log() : std::string("(not running)\n"));
  return out;
}

}  // namespace ibfabric::testing
