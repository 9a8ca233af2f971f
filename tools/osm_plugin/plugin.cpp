// libibfabric_osm.so: the OpenSM event plugin (docs/opensm-plugin.md). OpenSM loads it with
//   event_plugin_name ibfabric_osm
//   event_plugin_options /run/ibfabric/osm-events.sock
// and calls report() on its own threads, under its locks: report() copies what matters into a
// PluginEvent and hands it to the EventSender's bounded queue, nothing more. No exception
// leaves any of the three entry points.
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>

// The C struct has a member named `delete`; OpenSM's headers are C.
#define delete delete_
#include <opensm/osm_event_plugin.h>
#include <opensm/osm_node.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_switch.h>
#include <opensm/osm_version.h>
#undef delete

#include "tools/osm_plugin/event_sender.h"
#include "tools/osm_plugin/plugin_event.h"

namespace {

using ibfabric::osm::EventSender;
using ibfabric::osm::PluginEvent;
using ibfabric::osm::PluginEventType;

constexpr const char* kDefaultSocket = "/run/ibfabric/osm-events.sock";

struct Plugin {
  osm_opensm_t* osm = nullptr;
  std::string socket;
  std::unique_ptr<EventSender> sender;
};

double nowSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

const char* smState(const osm_opensm_t* osm) {
  return ibfabric::osm::smStateName(osm ? osm->subn.sm_state : 0xFF);
}

/// event_plugin_options: the socket path (first word); empty = the default path.
std::string socketFromOptions(const char* options) {
  std::string s = options ? options : "";
  const auto begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return kDefaultSocket;
  const auto end = s.find_first_of(" \t", begin);
  return s.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

void* create(osm_opensm_t* osm) {
  try {
    auto p = std::make_unique<Plugin>();
    p->osm = osm;
    p->socket = socketFromOptions(osm ? osm->subn.opt.event_plugin_options : nullptr);
    const std::string socket = p->socket;
    p->sender =
        std::make_unique<EventSender>([socket] { return ibfabric::osm::connectUnixSocket(socket); },
                                      ibfabric::osm::SenderOptions{},
                                      [raw = p.get()] {
                                        PluginEvent hello;
                                        hello.time = nowSeconds();
                                        hello.osmVersion = OSM_VERSION;
                                        hello.smState = smState(raw->osm);
                                        return hello;
                                      });
    p->sender->start();
    std::fprintf(stderr, "ibfabric_osm: sending events to %s\n", socket.c_str());
    return p.release();
  } catch (...) {
    std::fprintf(stderr, "ibfabric_osm: cannot start, plugin disabled\n");
    return nullptr;
  }
}

void destroy(void* data) {
  try {
    delete static_cast<Plugin*>(data);
  } catch (...) {
  }
}

void fillTrap(PluginEvent& e, const ib_mad_notice_attr_t* n) {
  e.issuerLid = cl_ntoh16(n->issuer_lid);
  if (!ib_notice_is_generic(n)) return;
  e.trapNumber = cl_ntoh16(n->g_or_v.generic.trap_num);
  switch (e.trapNumber) {
    case 128:
      e.lid = cl_ntoh16(n->data_details.ntc_128.sw_lid);
      break;
    case 129:
    case 130:
    case 131:
      e.lid = cl_ntoh16(n->data_details.ntc_129_131.lid);
      e.port = n->data_details.ntc_129_131.port_num;
      break;
    case 144:
      e.lid = cl_ntoh16(n->data_details.ntc_144.lid);
      break;
    default:
      break;
  }
}

void report(void* data, osm_epi_event_id_t id, void* eventData) {
  try {
    auto* p = static_cast<Plugin*>(data);
    if (!p || !p->sender) return;
    PluginEvent e;
    e.time = nowSeconds();
    switch (id) {
      case OSM_EVENT_ID_TRAP:
        if (!eventData) return;
        e.type = PluginEventType::kTrap;
        fillTrap(e, static_cast<const ib_mad_notice_attr_t*>(eventData));
        break;
      case OSM_EVENT_ID_SUBNET_UP:
        e.type = PluginEventType::kSubnetUp;
        break;
      case OSM_EVENT_ID_HEAVY_SWEEP_DONE:
        e.type = PluginEventType::kHeavySweepDone;
        break;
      case OSM_EVENT_ID_UCAST_ROUTING_DONE: {
        e.type = PluginEventType::kUcastRoutingDone;
        const auto flag =
            static_cast<osm_epi_ucast_routing_flags_t>(reinterpret_cast<std::uintptr_t>(eventData));
        e.reason = flag == UCAST_ROUTING_HEAVY_SWEEP ? "heavy_sweep"
                   : flag == UCAST_ROUTING_REROUTE   ? "reroute"
                                                     : "none";
        break;
      }
      case OSM_EVENT_ID_LFT_CHANGE: {
        if (!eventData) return;
        const auto* c = static_cast<const osm_epi_lft_change_event_t*>(eventData);
        e.type = PluginEventType::kLftChange;
        if (c->p_sw && c->p_sw->p_node)
          e.switchGuid = cl_ntoh64(osm_node_get_node_guid(c->p_sw->p_node));
        if (c->flags & LFT_CHANGED_LFT_TOP) e.lftTop = c->lft_top;
        if (c->flags & LFT_CHANGED_BLOCK) e.block = c->block_num;
        break;
      }
      case OSM_EVENT_ID_STATE_CHANGE:
        e.type = PluginEventType::kStateChange;
        e.smState = smState(p->osm);
        break;
      case OSM_EVENT_ID_PORT_ERRORS: {
        if (!eventData) return;
        const auto* pe = static_cast<const osm_epi_pe_event_t*>(eventData);
        e.type = PluginEventType::kPortErrors;
        e.nodeGuid = pe->port_id.node_guid;
        e.port = pe->port_id.port_num;
        e.nodeName.assign(pe->port_id.node_name,
                          strnlen(pe->port_id.node_name, OSM_EPI_NODE_NAME_LEN));
        e.counters = {pe->symbol_err_cnt, pe->link_err_recover,    pe->link_downed,
                      pe->rcv_err,        pe->rcv_rem_phys_err,    pe->rcv_switch_relay_err,
                      pe->xmit_discards,  pe->xmit_constraint_err, pe->rcv_constraint_err,
                      pe->link_integrity, pe->buffer_overrun,      pe->vl15_dropped,
                      pe->xmit_wait};
        e.intervalSeconds = static_cast<std::int64_t>(pe->time_diff_s);
        break;
      }
      default:
        return;  // data counters, port select, heavy sweep start, SA DB dumps: not forwarded
    }
    p->sender->report(std::move(e));
  } catch (...) {
  }
}

}  // namespace

extern "C" {
/// What OpenSM looks up (OSM_EVENT_PLUGIN_IMPL_NAME); osm_version must equal the running
/// OpenSM's version string or it refuses to load the plugin.
__attribute__((visibility("default"))) osm_event_plugin_t osm_event_plugin = {
    OSM_VERSION,
    create,
    destroy,
    report,
};
}
