#include "api/http/lft_status.h"

#include "api/http/json_views.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;
using routing::SwitchTableStatus;
using routing::TableState;

json timeOrNull(std::chrono::system_clock::time_point t) {
  return t.time_since_epoch().count() == 0 ? json(nullptr) : json(epochSeconds(t));
}

std::vector<SwitchTableStatus> statusOf(const Topology& t, const routing::ForwardingTables& f) {
  if (!f.switchStatus.empty()) return f.switchStatus;
  std::vector<SwitchTableStatus> out;
  for (const Node& n : t.nodes()) {
    if (!n.isSwitch()) continue;
    SwitchTableStatus s;
    s.node = n.index;
    s.state = f.table(n.index) ? TableState::kOk : TableState::kMissing;
    out.push_back(s);
  }
  return out;
}

json switchJson(const Topology& t, const SwitchTableStatus& s) {
  const Node& n = t.node(s.node);
  json j = {{"switch", n.description},
            {"guid", toString(n.guid)},
            {"lid", n.lid().value()},
            {"state", routing::toString(s.state)},
            {"direct_route", s.directRoute},
            {"table_read_at", timeOrNull(s.tableReadAt)},
            {"failing_since", timeOrNull(s.failingSince)},
            {"consecutive_failures", s.consecutiveFailures},
            {"next_retry", timeOrNull(s.nextRetry)}};
  if (!s.lastError.empty()) j["error"] = s.lastError;
  return j;
}

}  // namespace

json tableStatusJson(const Topology& t, const routing::ForwardingTables& f,
                     std::optional<TableState> only, bool problemsOnly) {
  const auto status = statusOf(t, f);
  std::size_t counts[3] = {0, 0, 0};
  std::size_t direct = 0;
  json switches = json::array();
  for (const auto& s : status) {
    if (s.node >= t.nodes().size()) continue;
    ++counts[static_cast<int>(s.state)];
    direct += s.directRoute && s.state != TableState::kMissing;
    if (only && s.state != *only) continue;
    if (problemsOnly && s.state == TableState::kOk && !s.directRoute) continue;
    switches.push_back(switchJson(t, s));
  }
  return {{"source", f.source()},
          {"ok", counts[0]},
          {"stale", counts[1]},
          {"missing", counts[2]},
          {"direct_route", direct},
          {"full_read", f.fullRead},
          {"refresh_seconds", std::chrono::duration<double>(f.refreshTime).count()},
          {"refresh_mads", f.refreshMads},
          {"switches", switches}};
}

}  // namespace ibfabric::api
