// The pool's inventory: hosts and their GPUs (index, model, memory, MIG capability and allowed
// profiles, NUMA node, the HCA each GPU uses), and the JSON forms of docs/pool.md (inventory
// file, PUT /api/v1/pool/hosts/{name} body). Pure functions; thread-safe.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ibfabric::scheduler_hooks {

/// Bad inventory or request JSON; what() is one line naming the field.
class InventoryError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct Gpu {
  int index = 0;
  std::string model = "H100-80GB";
  int memoryGb = 80;
  bool migCapable = false;
  std::vector<std::string> migProfiles;  ///< allowed profiles ("1g.10gb", ...)
  int numaNode = 0;
  std::string hca;  ///< "mlx5_<index>" by default
  friend bool operator==(const Gpu&, const Gpu&) = default;
};

struct PoolHost {
  std::string name;
  std::vector<Gpu> gpus;  ///< by index
  friend bool operator==(const PoolHost&, const PoolHost&) = default;
};

/// A MIG profile "<N>g.<M>gb" on a GPU: N of the GPU's compute slices, and memory slices (of 8)
/// in proportion to the GPU's memory.
struct MigProfile {
  std::string name;
  int computeSlices = 0;
  int memorySlices = 0;
};
/// Compute slices of a GPU model: 4 for A30 and RTX PRO parts, else 7.
int computeSlicesOf(std::string_view model);
inline constexpr int kMemorySlices = 8;
/// nullopt when `name` is not "<N>g.<M>gb" (an optional "+me" suffix is accepted) or needs more
/// than the GPU has.
std::optional<MigProfile> parseMigProfile(std::string_view name, const Gpu& gpu);
/// NVIDIA's profiles for known MIG-capable models (H100-80GB, A100-80GB, H200, B200, ...);
/// empty for others.
std::vector<std::string> defaultMigProfiles(std::string_view model, int memoryGb);

/// One host from its JSON form: {"gpus": [{...}, ...]} or the shorthand {"gpu_count": 8,
/// "model": ..., "memory_gb": ..., "mig_capable": ..., "mig_profiles": [...], "numa_nodes": 2}.
PoolHost hostFromJson(std::string_view name, const nlohmann::json& j);
nlohmann::json toJson(const PoolHost& host);
/// {"hosts": [{"name": "dgx[0001-0032]", ...host form...}, ...]}; names may be host lists.
std::vector<PoolHost> inventoryFromJson(const nlohmann::json& j);
/// Reads and parses a file; InventoryError when it cannot be read or is invalid.
std::vector<PoolHost> loadInventoryFile(const std::filesystem::path& path);

}  // namespace ibfabric::scheduler_hooks
