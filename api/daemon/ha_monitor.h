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
};

/// GET <url>/api/v1/health within `timeout`: live with its port GUID and role, or not live with
/// why. Must not throw.
using PeerFetcher = std::function<PeerView(const std::string& url, std::chrono::milliseconds)>;

/// The real fetcher: cpp-httplib (http:// and https://; TLS peers' certificates unverified).
PeerFetcher httpPeerFetcher();
/// A peer's health body read: live, "ha.port_guid" and "role" when present.
PeerView peerFromHealth(const std::string& url, const std::string& body);

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
