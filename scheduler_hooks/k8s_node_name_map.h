// K8sNodeNameMap: the Kubernetes node name of fabric hosts whose node names are not what kubelet
// would make of their HCA host names (kubelet registers a node as its lower-cased hostname unless
// started with --hostname-override). A file of `<host> <node-name>` lines ('#' starts a comment,
// blank lines are skipped), given with `k8s_node_name_map` in the daemon's configuration or
// `--k8s-node-name-map` to `ibfabric export` (docs/scheduler.md "Node and object names").
//
// Parsing is forgiving like NodeNameMap's: a bad line (no node name, a node name the API server
// would reject) is reported with its line number and skipped; a host listed twice keeps the later
// entry. Immutable after parsing; thread-safe to read.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ibfabric::scheduler_hooks {

class K8sNodeNameMap {
 public:
  struct Problem {
    int line = 0;         ///< 1-based
    std::string message;  ///< "<source>:<line>: <what>"
  };

  K8sNodeNameMap() = default;

  /// Parses map text.
  static K8sNodeNameMap parse(std::string_view text, std::string_view sourceName);
  /// Reads and parses a file; throws std::runtime_error when it cannot be read.
  static K8sNodeNameMap load(const std::filesystem::path& path);

  /// The node name given for a fabric host (exact host name), or null.
  const std::string* find(std::string_view host) const;
  std::size_t size() const { return nodes_.size(); }
  const std::vector<Problem>& problems() const { return problems_; }

 private:
  std::map<std::string, std::string, std::less<>> nodes_;  // host -> node name
  std::vector<Problem> problems_;
};

}  // namespace ibfabric::scheduler_hooks
