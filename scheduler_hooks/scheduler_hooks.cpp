// scheduler_hooks library: the pool allocator and exports arrive with the scheduler issue.
namespace ibfabric::scheduler_hooks {
int libraryVersion() { return 1; }
}  // namespace ibfabric::scheduler_hooks
