// StateStore: the remembered fabric's tables (fabric_nodes, fabric_ports, fabric_cables; see
// state_store.h). Writes are diffs against the model last written: a steady fabric costs one
// meta row per write, a crawl that finds one cable missing one cable row.
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "api/service/sqlite_db.h"
#include "api/service/state_store.h"

namespace ibfabric::api {
namespace {

using SysTime = std::chrono::system_clock::time_point;
using End = std::pair<Guid, PortNum>;

std::int64_t sql(Guid g) { return static_cast<std::int64_t>(g.value()); }
Guid guidAt(const Statement& q, int column) {
  return Guid(static_cast<std::uint64_t>(q.intAt(column)));
}

/// A cable as stored: its ends ordered by (GUID, port).
struct CableKey {
  End a;
  End b;
  friend bool operator==(const CableKey&, const CableKey&) = default;
};

CableKey keyOf(const Topology& t, const Link& l) {
  End a{t.node(l.a.node).guid, l.a.port};
  End b{t.node(l.b.node).guid, l.b.port};
  if (b < a) std::swap(a, b);
  return {a, b};
}

/// The cable of `t` with this key, or nullptr.
const Link* findCable(const Topology& t, const CableKey& k) {
  const Node* n = t.findNode(k.a.first);
  const Port* p = n ? n->port(k.a.second) : nullptr;
  if (!p || !p->link) return nullptr;
  const Link& l = t.links()[*p->link];
  return keyOf(t, l) == k ? &l : nullptr;
}

bool samePorts(const Node& x, const Node& y) {
  if (x.ports.size() != y.ports.size()) return false;
  for (std::size_t i = 0; i < x.ports.size(); ++i) {
    const auto& p = x.ports[i];
    const auto& q = y.ports[i];
    if (p.has_value() != q.has_value()) return false;
    if (p && std::tie(p->guid, p->widthSupported, p->widthEnabled, p->speedSupported,
                      p->speedEnabled) != std::tie(q->guid, q->widthSupported, q->widthEnabled,
                                                   q->speedSupported, q->speedEnabled))
      return false;
  }
  return true;
}

bool sameNode(const Node& x, const Node& y) {
  return std::tie(x.type, x.description, x.nodeDescription, x.sysImageGuid, x.vendorId, x.deviceId,
                  x.revision, x.numPorts, x.missing) ==
             std::tie(y.type, y.description, y.nodeDescription, y.sysImageGuid, y.vendorId,
                      y.deviceId, y.revision, y.numPorts, y.missing) &&
         samePorts(x, y);
}

void bindAbsence(Statement& s, int first, const std::optional<Absence>& a) {
  if (a) {
    s.bind(first, storeMillis(a->since)).bind(first + 1, storeMillis(a->lastSeen));
  } else {
    s.bindNull(first).bindNull(first + 1);
  }
}

std::optional<Absence> absenceAt(const Statement& q, int first) {
  if (q.nullAt(first)) return std::nullopt;
  return Absence{fromStoreMillis(q.intAt(first)), q.nullAt(first + 1)
                                                      ? fromStoreMillis(q.intAt(first))
                                                      : fromStoreMillis(q.intAt(first + 1))};
}

}  // namespace

std::size_t StateStore::writeFabric(const Topology* before, const Topology& now, SysTime seenAt) {
  try {
    Transaction tx(*db_);
    Statement putNode = db_->prepare(
        "INSERT OR REPLACE INTO fabric_nodes(guid, type, description, node_description, "
        "sys_image_guid, vendor_id, device_id, revision, num_ports, missing_since_ms, "
        "last_seen_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    Statement dropNode = db_->prepare("DELETE FROM fabric_nodes WHERE guid = ?1");
    Statement dropPorts = db_->prepare("DELETE FROM fabric_ports WHERE node_guid = ?1");
    Statement putPort = db_->prepare(
        "INSERT OR REPLACE INTO fabric_ports(node_guid, port, port_guid, width_supported, "
        "width_enabled, speed_supported, speed_enabled) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    Statement putCable = db_->prepare(
        "INSERT OR REPLACE INTO fabric_cables(a_guid, a_port, b_guid, b_port, missing_since_ms, "
        "last_seen_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    Statement dropCable =
        db_->prepare("DELETE FROM fabric_cables WHERE a_guid = ?1 AND a_port = ?2");
    std::size_t rows = 0;
    if (!before)
      db_->exec(
          "DELETE FROM fabric_nodes; DELETE FROM fabric_ports; "
          "DELETE FROM fabric_cables;");  // written anew, whole

    for (const Node& n : now.nodes()) {
      const Node* was = before ? before->findNode(n.guid) : nullptr;
      if (was && sameNode(*was, n)) continue;
      putNode.bind(1, sql(n.guid))
          .bind(2, static_cast<std::int64_t>(n.type))
          .bind(3, n.description)
          .bind(4, n.nodeDescription)
          .bind(5, sql(n.sysImageGuid))
          .bind(6, n.vendorId)
          .bind(7, n.deviceId)
          .bind(8, n.revision)
          .bind(9, n.numPorts);
      bindAbsence(putNode, 10, n.missing);
      putNode.run();
      dropPorts.bind(1, sql(n.guid)).run();
      for (const auto& p : n.ports) {
        if (!p) continue;
        putPort.bind(1, sql(n.guid))
            .bind(2, p->num.value())
            .bind(3, sql(p->guid))
            .bind(4, p->widthSupported)
            .bind(5, p->widthEnabled)
            .bind(6, p->speedSupported)
            .bind(7, p->speedEnabled)
            .run();
      }
      ++rows;
    }
    if (before) {
      for (const Node& n : before->nodes()) {
        if (now.findNode(n.guid)) continue;
        dropNode.bind(1, sql(n.guid)).run();
        dropPorts.bind(1, sql(n.guid)).run();
        ++rows;
      }
    }
    for (const Link& l : now.links()) {
      const CableKey k = keyOf(now, l);
      const Link* was = before ? findCable(*before, k) : nullptr;
      if (was && was->missing == l.missing) continue;
      putCable.bind(1, sql(k.a.first))
          .bind(2, k.a.second.value())
          .bind(3, sql(k.b.first))
          .bind(4, k.b.second.value());
      bindAbsence(putCable, 5, l.missing);
      putCable.run();
      ++rows;
    }
    if (before) {
      for (const Link& l : before->links()) {
        const CableKey k = keyOf(*before, l);
        if (findCable(now, k)) continue;
        dropCable.bind(1, sql(k.a.first)).bind(2, k.a.second.value()).run();
        ++rows;
      }
    }
    Statement seen =
        db_->prepare("INSERT OR REPLACE INTO meta(key, value) VALUES ('fabric_seen_at_ms', ?1)");
    seen.bind(1, storeMillis(seenAt)).run();
    tx.commit();
    return rows;
  } catch (const SqliteError& e) {
    throw StoreError("state: writing the fabric failed: " + std::string(e.what()));
  }
}

std::optional<StoredFabric> StateStore::loadFabric() {
  try {
    if (db_->queryInt("SELECT count(*) FROM fabric_nodes") == 0) return std::nullopt;
    StoredFabric out;
    out.seenAt = fromStoreMillis(db_->queryInt(
        "SELECT coalesce((SELECT value FROM meta WHERE key = 'fabric_seen_at_ms'), 0)"));

    // Ends of cables present when last written: their ports come back Active.
    std::set<End> up;
    Statement cables = db_->prepare(
        "SELECT a_guid, a_port, b_guid, b_port, missing_since_ms, last_seen_ms "
        "FROM fabric_cables");
    struct Row {
      End a, b;
      std::optional<Absence> missing;
    };
    std::vector<Row> rows;
    while (cables.step()) {
      Row r{{guidAt(cables, 0), PortNum(static_cast<std::uint8_t>(cables.intAt(1)))},
            {guidAt(cables, 2), PortNum(static_cast<std::uint8_t>(cables.intAt(3)))},
            absenceAt(cables, 4)};
      if (!r.missing) {
        up.insert(r.a);
        up.insert(r.b);
      }
      rows.push_back(r);
    }

    TopologyBuilder b;
    std::set<Guid> nodes;
    Statement q = db_->prepare(
        "SELECT guid, type, description, node_description, sys_image_guid, vendor_id, device_id, "
        "revision, num_ports, missing_since_ms, last_seen_ms FROM fabric_nodes");
    while (q.step()) {
      TopologyBuilder::NodeInfo info;
      info.guid = guidAt(q, 0);
      const auto type = q.intAt(1);
      if (type < 1 || type > 3)
        throw StoreError("state: fabric node of unknown type " + std::to_string(type));
      info.type = static_cast<NodeType>(type);
      info.nodeDescription = q.textAt(3);
      info.sysImageGuid = guidAt(q, 4);
      info.vendorId = static_cast<std::uint32_t>(q.intAt(5));
      info.deviceId = static_cast<std::uint32_t>(q.intAt(6));
      info.revision = static_cast<std::uint32_t>(q.intAt(7));
      info.numPorts = static_cast<int>(q.intAt(8));
      b.addNode(info);
      b.setDescription(info.guid, q.textAt(2));
      if (const auto missing = absenceAt(q, 9)) b.markMissing(info.guid, *missing);
      nodes.insert(info.guid);
    }
    Statement ports = db_->prepare(
        "SELECT node_guid, port, port_guid, width_supported, width_enabled, speed_supported, "
        "speed_enabled FROM fabric_ports");
    while (ports.step()) {
      const Guid node = guidAt(ports, 0);
      if (!nodes.count(node)) continue;
      Port p;
      p.num = PortNum(static_cast<std::uint8_t>(ports.intAt(1)));
      p.guid = guidAt(ports, 2);
      p.widthSupported = static_cast<WidthMask>(ports.intAt(3));
      p.widthEnabled = static_cast<WidthMask>(ports.intAt(4));
      p.speedSupported = static_cast<SpeedMask>(ports.intAt(5));
      p.speedEnabled = static_cast<SpeedMask>(ports.intAt(6));
      const bool active = up.count({node, p.num});
      p.state = active ? PortState::kActive : PortState::kDown;
      p.physState = active ? PhysPortState::kLinkUp : PhysPortState::kPolling;
      b.addPort(node, p);
    }
    for (const Row& r : rows) {
      if (!nodes.count(r.a.first) || !nodes.count(r.b.first)) continue;
      if (r.missing)
        b.connectMissing(r.a.first, r.a.second, r.b.first, r.b.second, *r.missing);
      else
        b.connect(r.a.first, r.a.second, r.b.first, r.b.second);
    }
    CrawlStats stats;
    stats.source = "state store " + opened_.path.string();
    b.setStats(std::move(stats));
    out.topology = b.build();
    return out;
  } catch (const SqliteError& e) {
    throw StoreError("state: reading the fabric failed: " + std::string(e.what()));
  } catch (const std::invalid_argument& e) {
    throw StoreError("state: the stored fabric is inconsistent: " + std::string(e.what()));
  }
}

}  // namespace ibfabric::api
