#include "api/daemon/ha_monitor.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <future>
#include <nlohmann/json.hpp>

namespace ibfabric::api {

PeerAnswer peerFromHealth(const std::string& url, const std::string& body) {
  PeerAnswer a;
  PeerView& p = a.view;
  p.url = url;
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    p.error = "the health answer is not JSON";
    return a;
  }
  p.live = true;
  if (auto ha = j.find("ha"); ha != j.end() && ha->is_object()) {
    if (auto g = ha->find("port_guid"); g != ha->end() && g->is_string())
      p.portGuid = parseGuid(g->get<std::string>());
  }
  if (auto r = j.find("role"); r != j.end() && r->is_string())
    p.role = parseHaRole(r->get<std::string>());
  // A peer's uptime is a duration: a negative, non-finite or absurd one is not believed.
  if (auto u = j.find("uptime_seconds"); u != j.end() && u->is_number()) {
    const double up = u->get<double>();
    if (std::isfinite(up) && up >= 0 && up < 1e9) a.uptimeSeconds = up;
  }
  return a;
}

std::optional<RoleDecision> holdForStartingPeers(HaRole current,
                                                 const std::vector<PeerAnswer>& answers,
                                                 std::chrono::milliseconds grace) {
  if (current == HaRole::kActive) return std::nullopt;
  const double graceSeconds = std::chrono::duration<double>(grace).count();
  for (const PeerAnswer& a : answers) {
    if (!a.view.live || a.view.portGuid || !a.uptimeSeconds || *a.uptimeSeconds >= graceSeconds)
      continue;
    return RoleDecision{HaRole::kStandby,
                        "waiting for peer " + a.view.url + " to learn its port GUID (started " +
                            std::to_string(static_cast<int>(*a.uptimeSeconds)) + " s ago)"};
  }
  return std::nullopt;
}

PeerFetcher httpPeerFetcher() {
  return [](const std::string& url, std::chrono::milliseconds timeout) {
    PeerAnswer a;
    PeerView& p = a.view;
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
        return a;
      }
      return peerFromHealth(url, res->body);
    } catch (const std::exception& e) {
      p.error = e.what();
      return a;
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
  const ServiceStatePtr state = service_.state();
  RoleInputs in = roleInputs(options_.mode, *state);
  std::optional<RoleDecision> held;
  if (options_.mode == HaMode::kLowestGuid) {
    std::vector<std::future<PeerAnswer>> pending;
    for (const auto& url : options_.peers)
      pending.push_back(std::async(std::launch::async, fetch_, url, options_.peerTimeout));
    std::vector<PeerAnswer> answers;
    for (auto& p : pending) answers.push_back(p.get());
    for (const auto& a : answers) in.peers.push_back(a.view);
    // Only a standby that would otherwise become active waits for a starting peer.
    if (decideRole(in).role == HaRole::kActive)
      held = holdForStartingPeers(state->ha.role, answers, options_.peerStartupGrace);
  }
  RoleDecision d = held ? *held : decideRole(in);
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
