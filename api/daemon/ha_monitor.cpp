#include "api/daemon/ha_monitor.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <future>
#include <nlohmann/json.hpp>

namespace ibfabric::api {

PeerView peerFromHealth(const std::string& url, const std::string& body) {
  PeerView p;
  p.url = url;
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    p.error = "the health answer is not JSON";
    return p;
  }
  p.live = true;
  if (auto ha = j.find("ha"); ha != j.end() && ha->is_object()) {
    if (auto g = ha->find("port_guid"); g != ha->end() && g->is_string())
      p.portGuid = parseGuid(g->get<std::string>());
  }
  if (auto r = j.find("role"); r != j.end() && r->is_string())
    p.role = parseHaRole(r->get<std::string>());
  return p;
}

PeerFetcher httpPeerFetcher() {
  return [](const std::string& url, std::chrono::milliseconds timeout) {
    PeerView p;
    p.url = url;
    try {
      httplib::Client client(url);
      const auto sec = timeout.count() / 1000;
      const auto usec = (timeout.count() % 1000) * 1000;
      client.set_connection_timeout(sec, usec);
      client.set_read_timeout(sec, usec);
      client.set_write_timeout(sec, usec);
      client.enable_server_certificate_verification(false);
      auto res = client.Get("/api/v1/health");
      if (!res) {
        p.error = "no answer: " + httplib::to_string(res.error());
        return p;
      }
      return peerFromHealth(url, res->body);
    } catch (const std::exception& e) {
      p.error = e.what();
      return p;
    }
  };
}

RoleInputs roleInputs(HaMode mode, const ServiceState& s) {
  RoleInputs in;
  in.mode = mode;
  in.localLid = s.subnet.localLid;
  in.smLid = s.subnet.smLid;
  in.localNodeGuid = s.ha.localNodeGuid;
  in.localPortGuid = s.ha.localPortGuid;
  in.smNodeGuid = s.subnetId.smNodeGuid;
  if (s.osm.link.connected && !s.osm.link.smState.empty()) in.osmSmState = s.osm.link.smState;
  return in;
}

HaMonitor::HaMonitor(FabricService& service, HaMonitorOptions options, PeerFetcher fetch)
    : service_(service), options_(std::move(options)), fetch_(std::move(fetch)) {}

HaMonitor::~HaMonitor() { stop(); }

void HaMonitor::start() {
  thread_ = std::thread([this] { run(); });
}

void HaMonitor::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

RoleDecision HaMonitor::pollOnce() {
  RoleInputs in = roleInputs(options_.mode, *service_.state());
  if (options_.mode == HaMode::kLowestGuid) {
    std::vector<std::future<PeerView>> answers;
    for (const auto& url : options_.peers)
      answers.push_back(std::async(std::launch::async, fetch_, url, options_.peerTimeout));
    for (auto& a : answers) in.peers.push_back(a.get());
  }
  RoleDecision d = decideRole(in);
  service_.setRole(d, std::move(in.peers));
  return d;
}

void HaMonitor::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    const auto next = std::chrono::steady_clock::now() + options_.pollInterval;
    try {
      pollOnce();
    } catch (const std::exception& e) {  // a decision that cannot be made keeps the role
      spdlog::warn("ha: role decision failed: {}", e.what());
    }
    lock.lock();
    cv_.wait_until(lock, next, [&] { return stopping_; });
  }
}

}  // namespace ibfabric::api
