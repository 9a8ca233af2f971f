// FederationServer: the REST face of ibfabric-federate. It merges the /api/v1 views of several
// ibfabricd daemons (one per subnet) and routes jobs to one subnet; it holds no state of its
// own beyond the MemberBoard's caches. Every request fans out to the members it needs with each
// member's timeout (member_client.h): a member that is down, slow or answers garbage marks its
// subnet unavailable in the answer ("unavailable": [{subnet, error, age_seconds}]) and the
// others are still served. Routes (docs/scale-out.md "Federation"):
//
//   GET  /api/v1/health, /health/live, /health/ready   per subnet availability, status, role
//   GET  /api/v1/fabric (= /api/v1/topology)           per subnet summary + totals
//   GET  /api/v1/subnets                               the members as configured and seen
//   GET  /api/v1/hosts, /api/v1/links                  items tagged "subnet"; the daemon's
//        filters pass through, `subnet=a,b` selects subnets, limit/cursor page across subnets
//        (in configuration order), links?sort= ranks the merged list
//   GET  /api/v1/hosts/{name}                          the host with its subnet
//   GET  /api/v1/events                                merged by time, ids "<subnet>:<id>",
//        since/last_id a per-subnet cursor (merged_events.h)
//   GET  /api/v1/export/slurm-topology, /export/volcano-hypernodes   merged_exports.h; 503
//        when a subnet is unavailable unless partial=true
//   POST /api/v1/placement                             routed to one subnet (job_routing.h)
//   GET  /api/v1/pool, /pool/hosts, /pool/hosts/{name}, /pool/allocations,
//        /pool/allocations/{job}                       merged, tagged
//   POST /api/v1/pool/allocations, DELETE /pool/allocations/{job}   routed to one subnet
//        (the federation's api_token; the member's token towards the member)
//
// Thread-safety: bind() then run() on one thread; stop() from any other.
#pragma once

#include <memory>
#include <string>

#include "api/federation/federation_config.h"
#include "api/federation/member_board.h"

namespace httplib {
class Server;
}

namespace ibfabric::api::federation {

class FederationServer {
 public:
  explicit FederationServer(FederationConfig config);
  ~FederationServer();
  FederationServer(const FederationServer&) = delete;
  FederationServer& operator=(const FederationServer&) = delete;

  /// Binds; port 0 picks a free port. The bound port, or -1 on failure.
  int bind(const std::string& host, int port);
  /// Serves until stop().
  void run();
  void stop();
  /// Asks every member's /health once (learns the subnet names members report).
  void probeMembers();

  MemberBoard& board() { return board_; }

 private:
  class Routes;
  MemberBoard board_;
  std::unique_ptr<httplib::Server> server_;
  std::unique_ptr<Routes> routes_;
};

}  // namespace ibfabric::api::federation
