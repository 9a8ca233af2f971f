// The pool inventory's parsing: host and inventory JSON forms, host lists, MIG profiles.
#include "scheduler_hooks/pool/inventory.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <type_traits>

#include "discovery/hostlist.h"

namespace ibfabric::scheduler_hooks {
namespace {

using nlohmann::json;

int parseLeadingInt(std::string_view& s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p == s.data()) return -1;
  s.remove_prefix(static_cast<std::size_t>(p - s.data()));
  return v;
}

template <typename T>
T field(const json& j, const char* key, const std::string& where, T fallback) {
  if (!j.contains(key)) return fallback;
  try {
    const json& v = j.at(key);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // Range-checked before narrowing: 4294967296 is out of range, not GPU 0.
      if (!v.is_number_integer())
        throw InventoryError(where + ": \"" + key + "\" has the wrong type");
      const bool fits =
          v.is_number_unsigned()
              ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())
              : v.get<std::int64_t>() >= std::numeric_limits<T>::min() &&
                    v.get<std::int64_t>() <= std::numeric_limits<T>::max();
      if (!fits) throw InventoryError(where + ": \"" + key + "\" is out of range");
    }
    return v.get<T>();
  } catch (const json::exception&) {
    throw InventoryError(where + ": \"" + key + "\" has the wrong type");
  }
}

bool validHostName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

void checkGpu(const Gpu& g, const std::string& where) {
  if (g.index < 0 || g.index > 63) throw InventoryError(where + ": GPU index must be 0..63");
  if (g.memoryGb <= 0 || g.memoryGb > 4096)
    throw InventoryError(where + ": memory_gb must be 1..4096");
  if (g.numaNode < 0 || g.numaNode > 63) throw InventoryError(where + ": numa_node must be 0..63");
  if (g.model.empty()) throw InventoryError(where + ": empty model");
  for (const auto& p : g.migProfiles) {
    if (!g.migCapable)
      throw InventoryError(where + ": mig_profiles on a GPU that is not MIG-capable");
    if (!parseMigProfile(p, g)) throw InventoryError(where + ": bad MIG profile \"" + p + "\"");
  }
}

}  // namespace

int computeSlicesOf(std::string_view model) {
  std::string m(model);
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return std::toupper(c); });
  if (m.rfind("A30", 0) == 0 || m.find("RTX") != std::string::npos) return 4;
  return 7;
}

std::optional<MigProfile> parseMigProfile(std::string_view name, const Gpu& gpu) {
  std::string_view s = name;
  if (s.size() > 3 && s.substr(s.size() - 3) == "+me") s.remove_suffix(3);
  const int compute = parseLeadingInt(s);
  if (compute <= 0 || s.substr(0, 2) != "g.") return std::nullopt;
  s.remove_prefix(2);
  const int mem = parseLeadingInt(s);
  if (mem <= 0 || s != "gb") return std::nullopt;
  const int slices = computeSlicesOf(gpu.model);
  if (compute > slices || mem > gpu.memoryGb + gpu.memoryGb / 16) return std::nullopt;
  const int memSlices = std::clamp(
      static_cast<int>(std::lround(mem * double(kMemorySlices) / gpu.memoryGb)), 1, kMemorySlices);
  return MigProfile{std::string(name), compute, memSlices};
}

std::vector<std::string> defaultMigProfiles(std::string_view model, int memoryGb) {
  std::string m(model);
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return std::toupper(c); });
  const bool known = m.rfind("A100", 0) == 0 || m.rfind("H100", 0) == 0 ||
                     m.rfind("H200", 0) == 0 || m.rfind("H20", 0) == 0 || m.rfind("B200", 0) == 0 ||
                     m.rfind("GB200", 0) == 0;
  if (!known) return {};
  // Memory part of the names scales with the GPU (H100 80GB: 1g.10gb ... 7g.80gb).
  auto gb = [memoryGb](int eighths) {
    return std::to_string(static_cast<int>(std::lround(memoryGb * eighths / 8.0)));
  };
  if (memoryGb == 141) return {"1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"};
  return {"1g." + gb(1) + "gb", "1g." + gb(2) + "gb", "2g." + gb(2) + "gb",
          "3g." + gb(4) + "gb", "4g." + gb(4) + "gb", "7g." + gb(8) + "gb"};
}

PoolHost hostFromJson(std::string_view name, const json& j) {
  const std::string where = "host " + std::string(name);
  if (!validHostName(name)) throw InventoryError("bad host name \"" + std::string(name) + "\"");
  if (!j.is_object()) throw InventoryError(where + ": must be an object");
  static const std::set<std::string> known = {"name",         "gpus",      "gpu_count",
                                              "model",        "memory_gb", "mig_capable",
                                              "mig_profiles", "numa_nodes"};
  for (const auto& [k, v] : j.items())
    if (!known.count(k)) throw InventoryError(where + ": unknown field \"" + k + "\"");
  PoolHost host;
  host.name = std::string(name);
  Gpu base;
  base.model = field<std::string>(j, "model", where, base.model);
  base.memoryGb = field<int>(j, "memory_gb", where, base.memoryGb);
  base.migCapable = field<bool>(j, "mig_capable", where, false);
  const bool profilesGiven = j.contains("mig_profiles");
  base.migProfiles = field<std::vector<std::string>>(j, "mig_profiles", where, {});
  if (j.contains("gpus")) {
    if (j.contains("gpu_count")) throw InventoryError(where + ": give \"gpus\" or \"gpu_count\"");
    const json& list = j.at("gpus");
    if (!list.is_array()) throw InventoryError(where + ": \"gpus\" must be a list");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const json& g = list[i];
      const std::string gw = where + " gpu " + std::to_string(i);
      if (!g.is_object()) throw InventoryError(gw + ": must be an object");
      for (const auto& [k, v] : g.items())
        if (k != "index" && k != "model" && k != "memory_gb" && k != "mig_capable" &&
            k != "mig_profiles" && k != "numa_node" && k != "hca")
          throw InventoryError(gw + ": unknown field \"" + k + "\"");
      Gpu gpu = base;
      gpu.index = field<int>(g, "index", gw, static_cast<int>(i));
      gpu.model = field<std::string>(g, "model", gw, base.model);
      gpu.memoryGb = field<int>(g, "memory_gb", gw, base.memoryGb);
      gpu.migCapable = field<bool>(g, "mig_capable", gw, base.migCapable);
      const bool own = g.contains("mig_profiles");
      gpu.migProfiles = field<std::vector<std::string>>(g, "mig_profiles", gw, base.migProfiles);
      if (gpu.migCapable && !own && !profilesGiven)
        gpu.migProfiles = defaultMigProfiles(gpu.model, gpu.memoryGb);
      if (!gpu.migCapable && !own) gpu.migProfiles.clear();
      gpu.numaNode = field<int>(g, "numa_node", gw, 0);
      gpu.hca = field<std::string>(g, "hca", gw, "mlx5_" + std::to_string(gpu.index));
      checkGpu(gpu, gw);
      host.gpus.push_back(std::move(gpu));
    }
  } else {
    const int count = field<int>(j, "gpu_count", where, -1);
    if (count < 1 || count > 64) throw InventoryError(where + ": gpu_count must be 1..64");
    const int numa = field<int>(j, "numa_nodes", where, count >= 2 ? 2 : 1);
    if (numa < 1 || numa > count) throw InventoryError(where + ": numa_nodes must be 1..gpu_count");
    if (base.migCapable && !profilesGiven)
      base.migProfiles = defaultMigProfiles(base.model, base.memoryGb);
    for (int i = 0; i < count; ++i) {
      Gpu gpu = base;
      gpu.index = i;
      gpu.numaNode = i * numa / count;
      gpu.hca = "mlx5_" + std::to_string(i);
      checkGpu(gpu, where + " gpu " + std::to_string(i));
      host.gpus.push_back(std::move(gpu));
    }
  }
  if (host.gpus.empty()) throw InventoryError(where + ": no GPUs");
  std::sort(host.gpus.begin(), host.gpus.end(),
            [](const Gpu& a, const Gpu& b) { return a.index < b.index; });
  for (std::size_t i = 1; i < host.gpus.size(); ++i)
    if (host.gpus[i].index == host.gpus[i - 1].index)
      throw InventoryError(where + ": GPU index " + std::to_string(host.gpus[i].index) + " twice");
  return host;
}

json toJson(const PoolHost& host) {
  json gpus = json::array();
  for (const Gpu& g : host.gpus)
    gpus.push_back({{"index", g.index},
                    {"model", g.model},
                    {"memory_gb", g.memoryGb},
                    {"mig_capable", g.migCapable},
                    {"mig_profiles", g.migProfiles},
                    {"numa_node", g.numaNode},
                    {"hca", g.hca}});
  return {{"name", host.name}, {"gpus", gpus}};
}

std::vector<PoolHost> inventoryFromJson(const json& j) {
  if (!j.is_object() || !j.contains("hosts") || !j.at("hosts").is_array())
    throw InventoryError("inventory: expected {\"hosts\": [...]}");
  std::vector<PoolHost> out;
  std::set<std::string> seen;
  for (const json& h : j.at("hosts")) {
    if (!h.is_object() || !h.contains("name") || !h.at("name").is_string())
      throw InventoryError("inventory: every host needs a \"name\"");
    std::vector<std::string> names;
    try {
      names = expandHostlist(h.at("name").get<std::string>(), 100'000);
    } catch (const std::invalid_argument& e) {
      throw InventoryError(std::string("inventory: bad host list: ") + e.what());
    }
    for (const auto& n : names) {
      if (!seen.insert(n).second) throw InventoryError("inventory: host " + n + " listed twice");
      out.push_back(hostFromJson(n, h));
    }
  }
  return out;
}

std::vector<PoolHost> loadInventoryFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InventoryError("inventory: cannot read " + path.string());
  std::ostringstream buf;
  buf << in.rdbuf();
  json j = json::parse(buf.str(), nullptr, false);
  if (j.is_discarded()) throw InventoryError("inventory: " + path.string() + " is not JSON");
  try {
    return inventoryFromJson(j);
  } catch (const InventoryError& e) {
    throw InventoryError(path.string() + ": " + e.what());
  }
}

}  // namespace ibfabric::scheduler_hooks
