// routing library: forwarding tables and placement arrive with the routing issue.
namespace ibfabric::routing {
int libraryVersion() { return 1; }
}  // namespace ibfabric::routing
