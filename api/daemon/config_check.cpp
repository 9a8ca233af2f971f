#include "api/daemon/config_check.h"

#include <httplib.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <filesystem>

#include "discovery/node_name_map.h"
#include "scheduler_hooks/k8s_node_name_map.h"
#include "scheduler_hooks/pool/inventory.h"
#include "scheduler_hooks/pool/journal_check.h"

namespace ibfabric::api {
namespace {

namespace fs = std::filesystem;

void checkTls(const ServiceConfig& c) {
  if (c.tlsCert.empty() && c.tlsKey.empty()) return;
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
  // The server's own loader: the certificate chain, the key, and that the key is the cert's.
  httplib::SSLServer probe(c.tlsCert.c_str(), c.tlsKey.c_str());
  if (!probe.is_valid())
    throw ConfigError("tls: cannot load the certificate " + c.tlsCert + " with the key " +
                      c.tlsKey + " (not PEM, or the key does not match)");
#else
  throw ConfigError("tls: this build of cpp-httplib has no OpenSSL support");
#endif
}

void checkJournal(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  const auto st = fs::status(dir, ec);
  if (fs::exists(st) && !fs::is_directory(st))
    throw ConfigError("pool.journal: not a directory: " + dir);
  if (!fs::exists(st)) {
    const fs::path parent = fs::absolute(dir, ec).parent_path();
    if (!fs::is_directory(parent, ec))
      throw ConfigError("pool.journal: its parent directory does not exist: " + dir);
    return;
  }
  // Read-only and without the lock: safe beside the running daemon this file configures.
  try {
    scheduler_hooks::verifyJournal(dir);
  } catch (const std::exception& e) {
    throw ConfigError(std::string("pool.journal: ") + e.what());
  }
}

}  // namespace

void checkSocketPath(const std::string& path, const std::string& key) {
  if (path.empty()) return;
  if (path.size() >= sizeof(sockaddr_un{}.sun_path))
    throw ConfigError(key + ": a Unix socket path has at most " +
                      std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes (got " +
                      std::to_string(path.size()) + ")");
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISSOCK(st.st_mode))
    throw ConfigError(key + ": exists and is not a socket: " + path);
  std::error_code ec;
  const fs::path parent = fs::absolute(path, ec).parent_path();
  if (!fs::is_directory(parent, ec))
    throw ConfigError(key + ": its directory does not exist: " + parent.string());
}

void checkConfigFiles(const ServiceConfig& c) {
  checkTls(c);
  checkSocketPath(c.osmEvents, "osm_events");
  checkJournal(c.pool.journal);
  if (!c.pool.inventory.empty()) {
    try {
      scheduler_hooks::loadInventoryFile(c.pool.inventory);
    } catch (const std::exception& e) {
      throw ConfigError("pool.inventory: " + c.pool.inventory + ": " + e.what());
    }
  }
  if (!c.nodeNameMap.empty()) {
    try {
      NodeNameMap::load(c.nodeNameMap);
    } catch (const std::exception& e) {
      throw ConfigError("node_name_map: " + c.nodeNameMap + ": " + e.what());
    }
  }
  if (!c.k8sNodeNameMap.empty()) {
    scheduler_hooks::K8sNodeNameMap map;
    try {
      map = scheduler_hooks::K8sNodeNameMap::load(c.k8sNodeNameMap);
    } catch (const std::exception& e) {
      throw ConfigError("k8s_node_name_map: " + c.k8sNodeNameMap + ": " + e.what());
    }
    if (!map.problems().empty())
      throw ConfigError("k8s_node_name_map: " + map.problems().front().message);
  }
}

}  // namespace ibfabric::api
