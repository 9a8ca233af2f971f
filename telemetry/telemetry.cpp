// telemetry library: the counter sweeps arrive with the telemetry issue.
namespace ibfabric::telemetry {
int libraryVersion() { return 1; }
}  // namespace ibfabric::telemetry
