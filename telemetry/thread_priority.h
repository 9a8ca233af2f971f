// Thread priority for the daemon's background work.
//
// On a 2-core management host the daemon's CPU-heavy background work (rendering the /metrics
// page: ~74 MB of text and its gzip after every sweep at 10,240 HCAs) competes with the threads
// that answer HTTP requests. Background threads that only ever produce something readers fetch
// later lower their own priority (a per-thread nice value on Linux), so a REST page or a
// liveness probe is scheduled first and the background work takes the idle time.
//
// Not for the MAD engine's I/O thread or the processes it talks to (a delayed reply read is a
// timeout), and not for threads that spawn children (children inherit the value). Thread-safe.
#pragma once

namespace ibfabric::telemetry {

/// Nice value added to a background thread's own (see lowerThisThreadPriority).
inline constexpr int kBackgroundNice = 5;

/// Raises the calling thread's nice value by `increment` (Linux: per thread). Returns false if
/// the system refused (the thread runs as before).
bool lowerThisThreadPriority(int increment = kBackgroundNice);

/// The calling thread's nice value.
int thisThreadNice();

}  // namespace ibfabric::telemetry
