#include "api/http/ha_json.h"

#include "api/http/json_views.h"

namespace ibfabric::api {

using nlohmann::json;

namespace {

json guidOrNull(const std::optional<Guid>& g) { return g ? json(toString(*g)) : json(); }

}  // namespace

json haJson(const ServiceState& s) {
  json peers = json::array();
  for (const PeerView& p : s.ha.peers) {
    json j = {{"url", p.url},
              {"live", p.live},
              {"port_guid", guidOrNull(p.portGuid)},
              {"role", p.role ? json(std::string(toString(*p.role))) : json()}};
    if (!p.error.empty()) j["error"] = p.error;
    peers.push_back(std::move(j));
  }
  return {{"mode", std::string(toString(s.ha.mode))},
          {"role", std::string(toString(s.ha.role))},
          {"reason", s.ha.reason},
          {"decided", s.ha.decided},
          {"since", s.ha.since ? json(epochSeconds(*s.ha.since)) : json()},
          {"role_changes", s.ha.roleChanges},
          {"port_guid", guidOrNull(s.ha.localPortGuid)},
          {"node_guid", guidOrNull(s.ha.localNodeGuid)},
          {"peers", std::move(peers)}};
}

json subnetIdentityJson(const ServiceState& s) {
  const SubnetIdentity& id = s.subnetId;
  return {{"name", id.name.empty() ? json() : json(id.name)},
          {"prefix", id.gidPrefix ? json(formatGidPrefix(*id.gidPrefix)) : json()},
          {"sm_guid", guidOrNull(id.smPortGuid)}};
}

json subnetTagJson(const ServiceState& s) {
  const SubnetIdentity& id = s.subnetId;
  if (!id.name.empty()) return id.name;
  return id.gidPrefix ? json(formatGidPrefix(*id.gidPrefix)) : json();
}

json snapshotAgeJson(const ServiceState& s, std::chrono::system_clock::time_point now) {
  if (!s.crawl.lastSuccess) return json();
  return std::chrono::duration<double>(now - *s.crawl.lastSuccess).count();
}

bool warmStandby(const ServiceState& s) {
  return s.standby() && s.topology && s.crawl.consecutiveFailures == 0;
}

}  // namespace ibfabric::api
