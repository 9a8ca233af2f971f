// Heap settings for processes that sweep large fabrics.
//
// keepLargeBuffersInHeap() is for one-shot processes that sweep once or a few times (the CLI,
// benchmarks): large arrays are carved from the heap and their pages stay mapped, so repeated
// sweeps do not pay page faults and the kernel's zeroing again (measured, when a sweep was one
// batch of 122,880 requests and results of ~36 MB each: building them took 2-3x longer with
// fresh mmap()s); the price is keeping the high-water mark. The daemon wants the opposite, its
// memory following its work: few arenas (limitHeapArenas), large blocks in their own mappings
// (mapLargeBuffers), free pages given back after each sweep, crawl and rendering
// (releaseFreeHeap). Call the settings once, early in main(), before threads start.
#pragma once

#include <cstddef>

namespace ibfabric::telemetry {

/// Returns false if the C library refused the setting (the process runs as before).
/// For one-shot processes (the CLI, benchmarks), not for the daemon.
bool keepLargeBuffersInHeap();

/// For a long-running process whose memory must follow its work, not its high-water mark (the
/// daemon): at most `arenas` malloc arenas (every thread that allocates would otherwise get its
/// own, each keeping its free memory). Call once, early in main(), before threads start.
bool limitHeapArenas(int arenas);

/// For the daemon too: blocks of `threshold` bytes or more come from their own mmap() and go back
/// to the kernel when freed (a sweep's samples, the crawl's text, a rates table), instead of
/// glibc's default, which raises the threshold to the largest block freed so far (up to 32 MB)
/// and from then on carves such blocks from the arenas, where they fragment what the arenas keep.
/// Fixes the trim threshold at glibc's default as a side effect. Call once, early in main().
bool mapLargeBuffers(std::size_t threshold);

/// Gives the free pages of every arena back to the kernel (malloc_trim): after a sweep, a crawl
/// or a rendering freed their large temporaries (nothing under ASan or TSan, whose allocator owns
/// the heap). Costs a walk of the free lists (about a
/// millisecond per hundred MB of heap).
void releaseFreeHeap();

/// What malloc holds, over every arena (mallinfo2): bytes handed out and not freed, and free
/// bytes kept in the arenas (the difference between the process's heap and its live data).
struct HeapUsage {
  std::size_t inUse = 0;    ///< allocated from arenas and by mmap, not freed
  std::size_t free = 0;     ///< free chunks kept in the arenas
  std::size_t mmapped = 0;  ///< of inUse: large blocks served by mmap
};
HeapUsage heapUsage();

}  // namespace ibfabric::telemetry
