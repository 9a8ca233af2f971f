// HaMonitor: decides, every poll interval, whether this daemon is active or standby on its
// subnet (api/service/role_election.h) and tells the FabricService (setRole).
//
// It reads what the service knows (the local port's LID and SM LID, our port and node GUIDs and
// the SM's from the topology, the OpenSM plugin's SM state) and, for lowest_guid, polls every
// peer's GET /api/v1/health (in parallel, each bounded by the peer timeout): a peer that answers
// is live, with the port GUID and role it reports (health "ha"). Detection of a dead active
// therefore takes at most one poll interval plus the peer timeout; the service then sweeps at
// once (docs/scale-out.md).
//
// Owns one thread between start() and stop(). The peer fetcher is injected (tests give fakes).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/service/fabric_service.h"
#include "api/service/role_election.h"

namespace ibfabric::api {

struct HaMonitorOptions {
  HaMode mode = HaMode::kAlways;
  std::vector<std::string> peers;
  std::chrono::milliseconds peerTimeout{2'000};
  std::chrono::milliseconds pollInterval{1'000};
  /// lowest_guid: a standby does not become active while a live peer that started less than
  /// this long ago does not know its port GUID yet (it may be the lower one: two instances
  /// started together would both sweep until its first crawl).
  std::chrono::milliseconds peerStartupGrace{30'000};
};

/// One peer's answer: what the role election reads, and how long the peer has run.
struct PeerAnswer {
  PeerView view;
  std::optional<double> uptimeSeconds;
};

/// GET <url>/api/v1/health within `timeout`: live with its port GUID, role and uptime, or not
/// live with why. Must not throw.
using PeerFetcher = std::function<PeerAnswer(const std::string& url, std::chrono::milliseconds)>;

/// The real fetcher: cpp-httplib (http:// and https://; TLS peers' certificates unverified).
PeerFetcher httpPeerFetcher();
/// A peer's health body read: live, "ha.port_guid", "role" and "uptime_seconds" when present.
PeerAnswer peerFromHealth(const std::string& url, const std::string& body);

/// lowest_guid, while standby: standby (and why) when a live peer younger than `grace` does not
/// know its port GUID yet; nullopt otherwise (the role election decides). An active instance is
/// never held: a peer that restarts does not make it step down before it knows its GUID.
std::optional<RoleDecision> holdForStartingPeers(HaRole current,
                                                 const std::vector<PeerAnswer>& answers,
                                                 std::chrono::milliseconds grace);

/// What the service's state says for a decision (peers not included).
RoleInputs roleInputs(HaMode mode, const ServiceState& state);

class HaMonitor {
 public:
  HaMonitor(FabricService& service, HaMonitorOptions options,
            PeerFetcher fetch = httpPeerFetcher());
  ~HaMonitor();
  HaMonitor(const HaMonitor&) = delete;
  HaMonitor& operator=(const HaMonitor&) = delete;

  void start();
  void stop();
  /// One decision (the thread's step; tests call it directly).
  RoleDecision pollOnce();

 private:
  void run();

  FabricService& service_;
  HaMonitorOptions options_;
  PeerFetcher fetch_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ibfabric::api
