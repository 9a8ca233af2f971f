// Node-name map: the file ibnetdiscover/iblinkinfo read with --node-name-map, one
// `<guid> "<name>"` entry per line ('#' starts a comment, blank lines are skipped). It gives
// nodes friendlier names than their NodeDescription; TopologyBuilder applies it to descriptions.
//
// Parsing is forgiving: a garbage line is reported with its line number and skipped, the rest of
// the file still applies. Immutable after parsing; thread-safe to read.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "discovery/types.h"

namespace ibfabric {

class NodeNameMap {
 public:
  struct Problem {
    int line = 0;         // 1-based
    std::string message;  // "<source>:<line>: <what>"
  };

  NodeNameMap() = default;

  /// Parses map text. Garbage lines and duplicate GUIDs (the later entry wins) become problems.
  static NodeNameMap parse(std::string_view text, std::string_view sourceName);
  /// Reads and parses a file; throws std::runtime_error when it cannot be read.
  static NodeNameMap load(const std::filesystem::path& path);

  /// The mapped name for a node GUID, if any.
  const std::string* find(Guid guid) const;
  std::size_t size() const { return names_.size(); }
  const std::vector<Problem>& problems() const { return problems_; }

 private:
  std::unordered_map<Guid, std::string> names_;
  std::vector<Problem> problems_;
};

}  // namespace ibfabric
