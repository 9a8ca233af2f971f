#include "telemetry/thread_priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace ibfabric::telemetry {
namespace {

id_t thisThread() { return static_cast<id_t>(::syscall(SYS_gettid)); }

}  // namespace

int thisThreadNice() {
  errno = 0;
  return ::getpriority(PRIO_PROCESS, thisThread());
}

bool lowerThisThreadPriority(int increment) {
  if (increment <= 0) return true;
  const int now = thisThreadNice();
  return ::setpriority(PRIO_PROCESS, thisThread(), now + increment) == 0;
}

}  // namespace ibfabric::telemetry
