// StartupSignalGuard: SIGTERM and SIGINT during the daemon's start-up end the process at once.
// The daemon takes its signals with sigwait() in its signal loop, which runs only once the
// services are up; a start-up step can take long (a pool inventory of 100,000 hosts is 100,000
// journal appends, each synced) and cannot be interrupted, so without the guard a SIGTERM sent
// then waited for the whole start-up. Until it is destroyed, a thread of the guard waits for
// SIGTERM/SIGINT (sigtimedwait, 50 ms ticks) and exits the process (code 0) when one comes:
// nothing has been answered yet, and what the pool journal already holds is what a kill at
// that moment would leave (the journal is written for that). SIGHUP stays pending for the loop.
//
// Create it on the thread that blocked the signals, after blocking them (its thread inherits
// the mask); destroy it right before the signal loop. Not copyable; one per process.
#pragma once

#include <atomic>
#include <thread>

namespace ibfabric::api {

class StartupSignalGuard {
 public:
  StartupSignalGuard();
  ~StartupSignalGuard();
  StartupSignalGuard(const StartupSignalGuard&) = delete;
  StartupSignalGuard& operator=(const StartupSignalGuard&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace ibfabric::api
