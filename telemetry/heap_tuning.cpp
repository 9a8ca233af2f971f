#include "telemetry/heap_tuning.h"

#include <malloc.h>

namespace ibfabric::telemetry {

bool keepLargeBuffersInHeap() {
  constexpr int kThreshold = 256 << 20;
  const bool mmapOk = mallopt(M_MMAP_THRESHOLD, kThreshold) == 1;
  const bool trimOk = mallopt(M_TRIM_THRESHOLD, kThreshold) == 1;
  return mmapOk && trimOk;
}

bool mapLargeBuffers(std::size_t threshold) {
  return mallopt(M_MMAP_THRESHOLD, static_cast<int>(threshold)) == 1;
}

bool limitHeapArenas(int arenas) { return mallopt(M_ARENA_MAX, arenas) == 1; }

void releaseFreeHeap() { malloc_trim(0); }

HeapUsage heapUsage() {
  const struct mallinfo2 m = mallinfo2();
  return {m.uordblks + m.hblkhd, m.fordblks, m.hblkhd};
}

}  // namespace ibfabric::telemetry
