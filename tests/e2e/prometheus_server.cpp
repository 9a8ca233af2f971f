#include "tests/e2e/prometheus_server.h"

#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;

/// A loopback port that was free a moment ago (the kernel's pick for port 0).
int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("bind");
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

std::string tail(const std::string& s, std::size_t n = 2000) {
  return s.size() <= n ? s : s.substr(s.size() - n);
}

}  // namespace

std::string zeroForDurations(const std::string& text) {
  static const std::regex kFor(R"(^(\s*)for:\s*\S+\s*$)");
  std::istringstream in(text);
  std::ostringstream out;
  std::string line;
  while (std::getline(in, line)) out << std::regex_replace(line, kFor, "$1for: 0s") << "\n";
  return out.str();
}

PrometheusServer::PrometheusServer(const PrometheusOptions& options) {
  static int instance = 0;
  dir_ = scratchDir() / ("prometheus-" + std::to_string(++instance));
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_ / "data");

  std::ostringstream config;
  config << "global:\n  scrape_interval: " << options.scrapeInterval
         << "\n  evaluation_interval: " << options.scrapeInterval << "\nrule_files:\n";
  for (const auto& rules : options.ruleFiles) {
    std::string text = readFile(rules);
    if (options.zeroForDurations) text = zeroForDurations(text);
    const auto copy = dir_ / rules.filename();
    writeFile(copy, text);
    config << "  - " << copy.string() << "\n";
  }
  config << "scrape_configs:\n  - job_name: ibfabric\n    scrape_timeout: "
         << options.scrapeInterval << "\n    static_configs:\n      - targets: [";
  for (std::size_t i = 0; i < options.targets.size(); ++i)
    config << (i ? ", " : "") << "\"" << options.targets[i] << "\"";
  config << "]\n";
  writeFile(dir_ / "prometheus.yml", config.str());

  // The port is picked before Prometheus binds it: retry when another process took it.
  std::string lastLog;
  for (int attempt = 0; attempt < 3 && !process_; ++attempt) {
    port_ = freePort();
    auto p = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{
            "prometheus", "--config.file=" + (dir_ / "prometheus.yml").string(),
            "--storage.tsdb.path=" + (dir_ / "data").string(),
            "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"},
        dir_ / "prometheus.log", dir_);
    httplib::Client c("127.0.0.1", port_);
    c.set_connection_timeout(1, 0);
    const bool ready = waitFor(
        [&] {
          if (!p->running()) return true;
          auto r = c.Get("/-/ready");
          return r && r->status == 200;
        },
        options.startTimeout, std::chrono::milliseconds(100));
    if (ready && p->running()) {
      process_ = std::move(p);
    } else {
      lastLog = p->log();
      p->stop(SIGKILL, std::chrono::seconds(5));
    }
  }
  if (!process_) throw std::runtime_error("prometheus did not start:\n" + tail(lastLog));
}

PrometheusServer::~PrometheusServer() {
  if (process_) process_->stop(SIGTERM, std::chrono::seconds(10));
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

json PrometheusServer::get(const std::string& path) const {
  httplib::Client c("127.0.0.1", port_);
  c.set_read_timeout(30, 0);
  auto r = c.Get(path.c_str());
  if (!r) throw std::runtime_error("GET " + path + ": no answer from prometheus");
  json j = json::parse(r->body, nullptr, false);
  if (j.is_discarded()) throw std::runtime_error("GET " + path + ": not JSON: " + r->body);
  if (j.value("status", "") != "success")
    throw std::runtime_error("GET " + path + ": " + j.value("error", r->body));
  return j["data"];
}

QueryResult PrometheusServer::tryQuery(const std::string& expr) const {
  httplib::Client c("127.0.0.1", port_);
  c.set_read_timeout(30, 0);
  httplib::Params params{{"query", expr}};
  auto r = c.Post("/api/v1/query", params);
  QueryResult q;
  if (!r) {
    q.error = "no answer from prometheus";
    return q;
  }
  json j = json::parse(r->body, nullptr, false);
  if (j.is_discarded()) {
    q.error = "not JSON: " + r->body;
    return q;
  }
  if (j.value("status", "") != "success") {
    q.error = j.value("errorType", "") + ": " + j.value("error", "");
    return q;
  }
  q.ok = true;
  q.data = j["data"]["result"];
  return q;
}

json PrometheusServer::query(const std::string& expr) const {
  auto q = tryQuery(expr);
  if (!q.ok) throw std::runtime_error("query " + expr + ": " + q.error);
  return q.data;
}

json PrometheusServer::alerts() const { return get("/api/v1/alerts")["alerts"]; }

json PrometheusServer::ruleGroups() const { return get("/api/v1/rules")["groups"]; }

std::string PrometheusServer::log() const { return process_ ? process_->log() : ""; }

}  // namespace ibfabric::testing
