// spawnChild: starts a helper process of the daemon (the crawl child, the MAD proxy) with
// posix_spawnp, the way both need it: the given fds mapped onto the child's, stdin (and any
// unmapped stdout) on /dev/null, every other inherited fd closed (the listening socket, the
// umad port), and the signal mask and the dispositions of SIGTERM/SIGINT/SIGHUP/SIGPIPE back to
// their defaults (the daemon blocks them in every thread and takes them with sigwait).
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace ibfabric {

struct ChildFds {
  /// (parent fd, child fd) pairs, e.g. {pipe, STDOUT_FILENO}, applied in order.
  std::vector<std::pair<int, int>> map;
};

/// Starts argv[0] (searched in PATH) with `fds`. Returns 0 and sets `pid`, or the errno value.
int spawnChild(const std::vector<std::string>& argv, const ChildFds& fds, pid_t& pid);

}  // namespace ibfabric
