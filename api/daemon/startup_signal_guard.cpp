#include "api/daemon/startup_signal_guard.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <cstdlib>

namespace ibfabric::api {

StartupSignalGuard::StartupSignalGuard() {
  thread_ = std::thread([this] {
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    const timespec tick{0, 50'000'000};
    while (!done_) {
      const int sig = sigtimedwait(&stop, nullptr, &tick);
      if (sig <= 0) continue;
      spdlog::info("signal {} during start-up: exiting", sig);
      spdlog::default_logger()->flush();
      std::_Exit(0);
    }
  });
}

StartupSignalGuard::~StartupSignalGuard() {
  done_ = true;
  thread_.join();
}

}  // namespace ibfabric::api
