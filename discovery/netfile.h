// The ibnetdiscover / ibsim fabric text format ("net file"): parse, model, write.
//
// This is the format `ibnetdiscover` prints and `ibsim` loads. ibfabric uses it for generated
// fabrics (topo gen), for the simulator harness (sizing and validating before ibsim starts), for
// the expected topology of `topo compare`, and as an output format of `discover`.
//
// Node ids are the quoted strings after the node type ("S-0002c903000a0b0c" in ibnetdiscover
// output, any unique string in hand-written files). Values only; thread-safe as values.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "discovery/link_rate.h"
#include "discovery/types.h"

namespace ibfabric {

enum class NodeType : std::uint8_t { kCa = 1, kSwitch = 2, kRouter = 3 };
std::string_view toString(NodeType t);  // "CA", "Switch", "Router"

/// One connected port line: `[port] "remote-id"[remote-port] ... # "remote desc" lid N 4xHDR`.
///
/// `rate` is the rate the link comes up at: ibsim enables the widths/speeds named by each end
/// (the "4xHDR" tail, `w=`/`s=`/`e=` options or `width=`/`speed=`/`extspeed=` lines) and the link
/// runs at the best rate both ends enable. The parser stores that result on both ends; it is
/// nullopt when the file says nothing about rates for either end.
/// Equality compares content; `line` is ignored.
struct NetPort {
  PortNum port;
  std::string remoteId;
  PortNum remotePort;
  std::optional<Guid> remotePortGuid;  // "(guid)" after the remote port, when present
  std::string remoteDesc;              // from the comment tail, when present
  std::optional<LinkRate> rate;        // see above
  std::optional<Guid> portGuid;        // "(guid)" after the local port (CA port lines)
  std::optional<Lid> lid;              // own LID on CA port lines ("# lid 3 lmc 0 ...")
  std::optional<Lid> remoteLid;        // "lid N" before the rate in the tail (0 = none)
  int line = 0;                        // 1-based line in the source, 0 when built in memory

  friend bool operator==(const NetPort& a, const NetPort& b);
};

struct NetNode {
  NodeType type = NodeType::kCa;
  int numPorts = 0;
  std::string id;    // unique quoted id
  std::string desc;  // node description ("" when the file gives none)
  std::optional<Guid> guid;
  std::optional<Guid> sysImageGuid;
  std::optional<std::uint32_t> vendorId;
  std::optional<std::uint32_t> deviceId;
  std::optional<Lid> lid;             // base LID from the header comment, when present
  std::optional<bool> enhancedPort0;  // switches: "enhanced port 0" / "base port 0"
  std::vector<NetPort> ports;         // in file order (the writer sorts by port number)
  int line = 0;

  /// Equality compares content; `line` is ignored.
  friend bool operator==(const NetNode& a, const NetNode& b);

  /// The description when there is one, else the id.
  const std::string& name() const { return desc.empty() ? id : desc; }
  const NetPort* port(PortNum p) const;
};

/// A whole fabric file. Links are listed on both ends in well-formed files.
class NetFabric {
 public:
  std::vector<NetNode> nodes;

  /// Rebuilds the id index; call after changing `nodes`.
  void reindex();
  const NetNode* find(std::string_view id) const;

  std::size_t switchCount() const;
  std::size_t caCount() const;
  /// Each cable once (a link listed on both ends counts one).
  std::size_t linkCount() const;

  /// Node by node, in order; ignores source lines.
  friend bool operator==(const NetFabric& a, const NetFabric& b) { return a.nodes == b.nodes; }

 private:
  std::unordered_map<std::string, std::size_t> index_;
};

/// A parse or validation failure; what() is "<source>:<line>: <message>".
class NetFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses and validates (unique ids and GUIDs, port numbers within range, links that name
/// existing nodes and agree on both ends, no port used twice, lines ibsim can read). Throws
/// NetFileError. Accepts `ibnetdiscover` output (also -f and -g output) and hand-written ibsim
/// files (`Hca`/`Ca`/`Switch`/`Rt` records, `vendid=`/`devid=`/`sysimgguid=`/`switchguid=`/
/// `caguid=`/`width=`/`speed=`/`extspeed=` lines, `w=`/`s=`/`e=` port options). GUIDs a file does
/// not give are the ones ibsim assigns (switches from 0x200000, CAs from 0x100000 stepping by
/// ports + 1). ibsim's `include`, `module`, `do` and `@alias` forms are rejected.
NetFabric parseNetText(std::string_view text, std::string_view sourceName);
/// Same, from a file; a missing or unreadable file is a NetFileError too.
NetFabric parseNetFile(const std::filesystem::path& path);

/// Writes a file that `ibsim` loads and `parseNetText` reads back to an equal fabric, in
/// ibnetdiscover's layout (id lines, then the record, ports sorted; a blank line between
/// records). Rates go in the port-line tails ("lid 0 4xHDR") on both ends, which ibsim 0.10
/// honours up to HDR; it knows no NDR/XDR and leaves such links at its default (4x SDR).
std::string formatNetFile(const NetFabric& fabric);

/// ibsim's limits on one line of a net file and on node ids.
inline constexpr std::size_t kNetFileMaxLine = 255;
inline constexpr std::size_t kNetFileMaxId = 64;
inline constexpr std::size_t kNetFileMaxDesc = 63;

}  // namespace ibfabric
