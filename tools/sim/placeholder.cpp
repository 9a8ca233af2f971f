namespace ibfabric::sim {
int harnessVersion() { return 1; }
}  // namespace ibfabric::sim
