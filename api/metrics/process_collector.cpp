// The process collector (live): the daemon's own weight, read per scrape — resident memory, CPU
// time, open file descriptors and threads (the names every Prometheus client library exports),
// and the malloc heap split into live data and the free memory the arenas keep
// (telemetry/heap_tuning.h), so a memory alert can tell growth of the model from fragmentation.
#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "api/metrics/collectors.h"
#include "telemetry/heap_tuning.h"

namespace ibfabric::api {
namespace {

constexpr MetricFamily kResident{"process_resident_memory_bytes", "Resident memory size in bytes",
                                 "gauge"};
constexpr MetricFamily kVirtual{"process_virtual_memory_bytes", "Virtual memory size in bytes",
                                "gauge"};
constexpr MetricFamily kCpu{"process_cpu_seconds_total", "User and system CPU time in seconds",
                            "counter"};
constexpr MetricFamily kThreads{"process_threads", "Threads of the process", "gauge"};
constexpr MetricFamily kFds{"process_open_fds", "Open file descriptors", "gauge"};
constexpr MetricFamily kHeap{
    "ibfabric_heap_bytes",
    "malloc heap by state: in_use (live allocations), free (kept in the arenas, not returned)",
    "gauge"};

struct ProcStat {
  bool ok = false;
  double cpuSeconds = 0;
  double virtualBytes = 0, residentBytes = 0;
  long threads = 0;
};

/// /proc/self/stat: fields after the command name (which may hold spaces, in parentheses).
ProcStat readProcStat() {
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream fields(text.substr(close + 2));
  std::string f[22];  // field 3 (state) .. field 24 (rss)
  for (auto& x : f)
    if (!(fields >> x)) return {};
  const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  ProcStat s;
  s.ok = true;
  s.cpuSeconds = (std::stod(f[11]) + std::stod(f[12])) / tick;  // utime, stime
  s.threads = std::stol(f[17]);
  s.virtualBytes = std::stod(f[20]);
  s.residentBytes = std::stod(f[21]) * page;
  return s;
}

long openFds() {
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return -1;
  long n = 0;
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n - 1;  // the directory's own descriptor
}

class ProcessCollector final : public Collector {
 public:
  std::string_view name() const override { return "process"; }
  void collect(const CollectContext&, MetricWriter& out) const override {
    if (const ProcStat s = readProcStat(); s.ok) {
      out.family(kResident);
      out.sample(kResident.name, "", s.residentBytes);
      out.family(kVirtual);
      out.sample(kVirtual.name, "", s.virtualBytes);
      out.family(kCpu);
      out.sample(kCpu.name, "", s.cpuSeconds);
      out.family(kThreads);
      out.sample(kThreads.name, "", static_cast<double>(s.threads));
    }
    if (const long fds = openFds(); fds >= 0) {
      out.family(kFds);
      out.sample(kFds.name, "", static_cast<double>(fds));
    }
    const telemetry::HeapUsage heap = telemetry::heapUsage();
    out.family(kHeap);
    out.sampleU(kHeap.name, Labels("state", "in_use"), heap.inUse);
    out.sampleU(kHeap.name, Labels("state", "free"), heap.free);
  }
};

}  // namespace

CollectorPtr processCollector() { return std::make_unique<ProcessCollector>(); }

}  // namespace ibfabric::api
