#include "telemetry/heap_tuning.h"

#include <malloc.h>

namespace ibfabric::telemetry {
namespace {

// Under ASan or TSan the sanitizer's allocator owns the heap; glibc's malloc_trim then walks
// arenas glibc never set up (a SEGV in mtrim seen in the ASan tree, the sweep and the crawl
// threads trimming at once).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kGlibcHeap = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kGlibcHeap = false;
#else
constexpr bool kGlibcHeap = true;
#endif
#else
constexpr bool kGlibcHeap = true;
#endif

}  // namespace

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

void releaseFreeHeap() {
  if constexpr (kGlibcHeap) malloc_trim(0);
}

HeapUsage heapUsage() {
  const struct mallinfo2 m = mallinfo2();
  return {m.uordblks + m.hblkhd, m.fordblks, m.hblkhd};
}

}  // namespace ibfabric::telemetry
