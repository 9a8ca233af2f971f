// The deeper checks of `ibfabricd --check-config`: what loadConfigText cannot see from the text
// alone — the TLS PEM files load (certificate and matching key), the OpenSM-plugin socket path
// fits a Unix socket address and is not some other kind of file, the pool's journal path is a
// directory (or can be created as one), and the pool inventory and the node-name map parse.
//
// Pure function of the configuration and the file system; thread-safe.
#pragma once

#include "api/daemon/service_config.h"

namespace ibfabric::api {

/// Throws ConfigError naming the key and the file at the first problem.
void checkConfigFiles(const ServiceConfig& config);

/// The checks of a Unix socket path (osm_events): at most 107 bytes, its directory exists, and
/// the path is absent or a socket. Throws ConfigError naming `key`.
void checkSocketPath(const std::string& path, const std::string& key);

}  // namespace ibfabric::api
