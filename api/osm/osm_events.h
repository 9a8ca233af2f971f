// The daemon's side of the OpenSM event plugin (tools/osm_plugin, docs/opensm-plugin.md): the
// newline-delimited JSON the plugin sends, its parser, and the Unix-socket server that receives
// it.
//
// Wire format: one JSON object per line, at most kMaxOsmLineBytes. Every object has
//   "type"    one of toString(OsmEventType)
//   "seq"     the plugin's sequence number (1, 2, ...; dropped events use numbers too)
//   "time"    unix seconds (fractional) when OpenSM reported the event
//   "dropped" events the plugin has dropped so far (its queue was full or nobody listened)
// and per type:
//   hello              "osm_version", "plugin_version", "sm_state"
//   trap               "trap" (number), "issuer_lid", optional "lid" (the switch of trap 128,
//                      the port's LID of traps 129-131) and "port"
//   subnet_up, heavy_sweep_done   nothing else
//   ucast_routing_done "reason": "heavy_sweep" | "reroute" | "none"
//   lft_change         "switch_guid" ("0x..."), optional "lft_top", optional "block"
//   state_change       "sm_state": "master" | "standby" | "discovering" | "not_active" | ...
//   port_errors        "node_guid", "port", "node", "counters" {name: count}, "interval_s"
// Unknown extra fields are ignored (newer plugins may add some).
//
// OsmEventListener owns one thread that accepts plugin connections on the socket (a new
// connection replaces the previous one: OpenSM restarted) and reads lines; each event goes to
// the handler, each status change to the status sink, both on that thread. Thread-safety:
// start()/stop()/status() from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "api/osm/osm_status.h"
#include "discovery/types.h"

namespace ibfabric::api {

inline constexpr std::size_t kMaxOsmLineBytes = 64 * 1024;

enum class OsmEventType : std::uint8_t {
  kHello,
  kTrap,
  kSubnetUp,
  kHeavySweepDone,
  kUcastRoutingDone,
  kLftChange,
  kStateChange,
  kPortErrors,
};
/// "hello", "trap", "subnet_up", "heavy_sweep_done", "ucast_routing_done", "lft_change",
/// "state_change", "port_errors".
std::string_view toString(OsmEventType t);
std::optional<OsmEventType> parseOsmEventType(std::string_view text);

struct OsmEvent {
  OsmEventType type = OsmEventType::kHello;
  std::uint64_t seq = 0;
  double time = 0;
  std::uint64_t dropped = 0;
  // hello
  std::string osmVersion;
  std::string pluginVersion;
  // hello, state_change
  std::string smState;
  // trap
  std::uint16_t trapNumber = 0;
  Lid issuerLid;
  std::optional<Lid> lid;
  std::optional<PortNum> port;
  // ucast_routing_done
  std::string reason;
  // lft_change
  Guid switchGuid;
  std::optional<std::uint16_t> lftTop;
  std::optional<std::uint32_t> block;
  // port_errors (port above)
  Guid nodeGuid;
  std::string nodeName;
  std::map<std::string, std::uint64_t> counters;
  std::int64_t intervalSeconds = 0;

  /// The switch a trap 128 (PortStateChange) is about: "lid", else the issuer.
  Lid trapSwitchLid() const { return lid && lid->value() != 0 ? *lid : issuerLid; }
};

/// A line that is not a valid event; what() says which field and why, in one line.
class OsmEventError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses one line (without its newline). Throws OsmEventError.
OsmEvent parseOsmEvent(std::string_view line);

/// Splits a byte stream into lines: feed() what read() returned, get back the complete lines.
/// A line longer than kMaxOsmLineBytes is discarded up to its newline and reported as
/// std::nullopt (so the caller can count it). Not thread-safe.
class LineSplitter {
 public:
  explicit LineSplitter(std::size_t maxLine = kMaxOsmLineBytes) : maxLine_(maxLine) {}
  /// Complete lines in `bytes` (and before it); nullopt entries for overlong lines.
  std::vector<std::optional<std::string>> feed(std::string_view bytes);
  void reset() {
    buffer_.clear();
    skipping_ = false;
  }

 private:
  std::size_t maxLine_;
  std::string buffer_;
  bool skipping_ = false;
};

class OsmEventListener {
 public:
  using Handler = std::function<void(const OsmEvent&)>;
  using StatusSink = std::function<void(const OsmLinkStatus&)>;

  OsmEventListener(std::filesystem::path socketPath, Handler handler, StatusSink statusSink);
  /// Stops (see stop()).
  ~OsmEventListener();
  OsmEventListener(const OsmEventListener&) = delete;
  OsmEventListener& operator=(const OsmEventListener&) = delete;

  /// Binds the socket (a stale socket file at the path is replaced; any other file is an error)
  /// and starts the thread. Throws OsmEventError when it cannot listen.
  void start();
  /// Closes the connection and the socket, removes the socket file, joins the thread.
  void stop();
  OsmLinkStatus status() const;

 private:
  void loop();
  void handleLine(const std::optional<std::string>& line);
  void publishStatus();

  std::filesystem::path path_;
  Handler handler_;
  StatusSink statusSink_;
  int listenFd_ = -1;
  int wakeFd_[2] = {-1, -1};
  mutable std::mutex mu_;  // guards status_
  OsmLinkStatus status_;
  std::thread thread_;
};

}  // namespace ibfabric::api
