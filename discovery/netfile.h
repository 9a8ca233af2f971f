// The ibnetdiscover / ibsim fabric text format ("net file"): parse, model, write.
//
// This is the format `ibnetdiscover` prints and `ibsim` loads. ibfabric uses it for generated
// fabrics (topo gen), for the simulator harness (sizing and validating before ibsim starts), for
// the expected topology of `topo compare`, and as an output format of `discover`.
//
// Node ids are the quoted strings after the node type ("S-0002c903000a0b0c" in ibnetdiscover
// output, any unique string in hand-written files). Values only; thread-safe as values.
#pragma once

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
struct NetPort {
  PortNum port;
  std::string remoteId;
  PortNum remotePort;
  std::optional<Guid> remotePortGuid;  // "(guid)" after the remote port, when present
  std::string remoteDesc;              // from the comment tail, when present
  std::optional<LinkRate> rate;        // "4xHDR" from the comment tail, when present
  int line = 0;                        // 1-based line in the source, 0 when built in memory
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
  std::optional<Lid> lid;  // base LID from the header comment, when present
  std::vector<NetPort> ports;
  int line = 0;

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

 private:
  std::unordered_map<std::string, std::size_t> index_;
};

/// A parse or validation failure; what() is "<source>:<line>: <message>".
class NetFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses and validates (unique ids, port numbers within range, links that name existing nodes
/// and agree on both ends, no port used twice). Throws NetFileError.
NetFabric parseNetText(std::string_view text, std::string_view sourceName);
/// Same, from a file; a missing or unreadable file is a NetFileError too.
NetFabric parseNetFile(const std::filesystem::path& path);

/// Writes a file that `ibsim` loads and `parseNetText` reads back to an equal fabric.
std::string formatNetFile(const NetFabric& fabric);

}  // namespace ibfabric
