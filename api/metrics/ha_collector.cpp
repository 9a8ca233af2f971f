// The HA collector: this daemon's role among the instances on its subnet
// (api/service/role_election.h) and the peers it polls (ha.mode lowest_guid).
#include "api/metrics/collectors.h"

namespace ibfabric::api {
namespace {

constexpr MetricFamily kActive{
    "ibfabric_ha_active",
    "1 while this daemon is the active one on its subnet (sweeps counters); 0 while standby",
    "gauge"};
constexpr MetricFamily kInfo{"ibfabric_ha_info", "The HA mode (ha.mode) and the current role",
                             "gauge"};
constexpr MetricFamily kChanges{"ibfabric_ha_role_changes_total",
                                "Role changes (active <-> standby) after the first decision",
                                "counter"};
constexpr MetricFamily kPeerLive{
    "ibfabric_ha_peer_live",
    "1 while the peer (ha.peers) answered GET /api/v1/health within ha.peer_timeout", "gauge"};

class HaCollector final : public Collector {
 public:
  std::string_view name() const override { return "ha"; }
  void collect(const CollectContext& c, MetricWriter& out) const override {
    const HaStatus& ha = c.state.ha;
    out.family(kActive);
    out.sampleU(kActive.name, "", ha.role == HaRole::kActive ? 1 : 0);
    out.family(kInfo);
    out.sampleU(kInfo.name, Labels("mode", toString(ha.mode)).add("role", toString(ha.role)), 1);
    out.family(kChanges);
    out.sampleU(kChanges.name, "", ha.roleChanges);
    if (ha.peers.empty()) return;
    out.family(kPeerLive);
    for (const PeerView& p : ha.peers) out.sampleU(kPeerLive.name, Labels("peer", p.url), p.live);
  }
};

}  // namespace

CollectorPtr haCollector() { return std::make_unique<HaCollector>(); }

}  // namespace ibfabric::api
