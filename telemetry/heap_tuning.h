// Heap settings for processes that sweep large fabrics.
//
// A counter sweep of a 10,240-HCA fabric allocates a few large arrays every sweep (122,880 MAD
// requests and as many results, ~36 MB each, and the port samples). glibc serves allocations that
// size with fresh mmap()s and unmaps them on free, so every sweep paid page faults and the kernel
// zeroing ~100 MB again (measured: building the requests and the result array took 2-3x longer
// than with reused memory). keepLargeBuffersInHeap() raises the mmap and trim thresholds to
// 256 MB so those arrays are carved from the heap and their pages stay mapped between sweeps;
// the price is that the process keeps its high-water mark of such memory. Call it once, early in
// main(), before threads start.
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

/// Gives the free pages of every arena back to the kernel (malloc_trim): after a sweep, a crawl
/// or a rendering freed their large temporaries. Costs a walk of the free lists (about a
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
