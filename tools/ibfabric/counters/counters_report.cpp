#include "tools/ibfabric/counters/counters_report.h"

#include <cinttypes>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "tools/ibfabric/counters/counters_json.h"

namespace ibfabric::cli {
namespace {

using nlohmann::json;
using namespace ibfabric::telemetry;

void put(std::FILE* out, const std::string& text) { std::fwrite(text.data(), 1, text.size(), out); }

// Members of a non-empty object, without its braces: `{"a":1,"b":2}` -> `"a":1,"b":2`.
std::string members(const json& object) {
  std::string s = object.dump();
  return s.substr(1, s.size() - 2);
}

class JsonReport final : public CountersReport {
 public:
  JsonReport(std::FILE* out, double xmitWaitTickNs) : out_(out), rates_(std::tmpfile()) {
    if (!rates_) throw std::runtime_error("cannot create a temporary file for the rates");
    put(out_, "{" + members(json{{"xmit_wait_tick_ns", xmitWaitTickNs}}) + ",\n\"sweeps\":[");
  }
  ~JsonReport() override { std::fclose(rates_); }

  void beginSweep(bool) override {
    put(out_, sweeps_++ ? ",\n{\"ports\":[" : "\n{\"ports\":[");
    ports_ = 0;
  }
  void port(const PortSample& s) override {
    put(out_, (ports_++ ? ",\n" : "\n") + sampleJson(s).dump());
  }
  void endSweep(const CounterSnapshot& snap) override {
    put(out_, "\n]," + members(sweepSummaryJson(snap)) + "}");
    std::fflush(out_);
  }
  void rates(const CounterSnapshot& snap, const RatesTable& rates) override {
    put(rates_, (intervals_++ ? ",\n{" : "\n{") + members(json{{"sequence", snap.sequence}}) +
                    ",\"ports\":[");
    const char* separator = "\n";
    for (const PortRates& r : rates) {
      put(rates_, separator + ratesJson(r, snap.find(r.key)).dump());
      separator = ",\n";
    }
    put(rates_, "\n]}");
  }
  void finish(const std::vector<LinkHealthReport>& health, const std::vector<Event>& events,
              const mad::MadEngineStats& engine) override {
    put(out_, "\n],\n\"rates\":[");
    copyRates();
    put(out_, "\n],\n\"health\":[");
    for (std::size_t i = 0; i < health.size(); ++i)
      put(out_, (i ? ",\n" : "\n") + healthJson(health[i]).dump());
    put(out_, "\n],\n\"engine\":" + engineJson(engine).dump() + ",\n\"events\":[");
    for (std::size_t i = 0; i < events.size(); ++i)
      put(out_, (i ? ",\n" : "\n") + eventJson(events[i]).dump());
    put(out_, "\n]}\n");
    std::fflush(out_);
  }

 private:
  void copyRates() {
    std::rewind(rates_);
    char buf[1 << 14];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, rates_)) > 0;)
      std::fwrite(buf, 1, n, out_);
  }

  std::FILE* out_;
  std::FILE* rates_;
  std::size_t sweeps_ = 0;
  std::size_t ports_ = 0;
  std::size_t intervals_ = 0;
};

std::string fmtNum(const std::optional<double>& v, double scale, const char* f) {
  if (!v) return "?";
  char buf[32];
  std::snprintf(buf, sizeof buf, f, *v * scale);
  return buf;
}

class TableReport final : public CountersReport {
 public:
  explicit TableReport(std::FILE* out) : out_(out) {}

  void beginSweep(bool raw) override {
    raw_ = raw;
    if (!raw_) return;
    std::fprintf(out_, "%-32s %4s %5s %-11s %20s %20s %14s %14s %12s  %s\n", "node", "port", "lid",
                 "status", "xmit_data", "rcv_data", "xmit_pkts", "rcv_pkts", "xmit_wait", "errors");
  }
  void port(const PortSample& s) override {
    if (!raw_) return;
    auto val = [&](Counter c) {
      if (!s.counters.has(c)) return std::string("-");
      return std::to_string(s.counters.get(c)) + (s.counters.saturated(c) ? "(sat)" : "");
    };
    std::string errors;
    for (Counter c : kAllCounters) {
      if (!isErrorCounter(c) || !s.counters.has(c) || s.counters.get(c) == 0) continue;
      errors += std::string(ibName(c)) + "=" + val(c) + " ";
    }
    if (s.status != PortStatus::kOk) errors = s.detail;
    std::fprintf(out_, "%-32.32s %4u %5u %-11s %20s %20s %14s %14s %12s  %s\n",
                 s.nodeDescription.c_str(), s.key.port.value(), s.lid.value(),
                 std::string(toString(s.status)).c_str(), val(Counter::kXmitData).c_str(),
                 val(Counter::kRcvData).c_str(), val(Counter::kXmitPkts).c_str(),
                 val(Counter::kRcvPkts).c_str(), val(Counter::kXmitWait).c_str(), errors.c_str());
  }
  void endSweep(const CounterSnapshot& snap) override {
    if (!raw_) return;
    std::fprintf(out_, "sweep %" PRIu64 ": %zu/%zu ports ok in %.3f s, %zu retries\n",
                 snap.sequence, snap.stats.portsOk, snap.stats.ports,
                 std::chrono::duration<double>(snap.stats.duration).count(), snap.stats.retries);
    for (const auto& f : snap.failures) {
      std::fprintf(out_, "target lid %u (%s): %d/%d requests failed, %d sends: %s\n", f.lid.value(),
                   f.nodeDescription.c_str(), f.failedRequests, f.requests, f.attempts,
                   f.reason.c_str());
    }
    std::fflush(out_);
  }
  void rates(const CounterSnapshot& snap, const RatesTable& rates) override;
  void finish(const std::vector<LinkHealthReport>& health, const std::vector<Event>& events,
              const mad::MadEngineStats&) override;

 private:
  std::FILE* out_;
  bool raw_ = false;
};

void TableReport::rates(const CounterSnapshot& snap, const RatesTable& rates) {
  std::fprintf(out_, "interval ending at sweep %" PRIu64 "\n", snap.sequence);
  std::fprintf(out_, "%-32s %4s %12s %12s %7s %7s %7s  %s\n", "node", "port", "tx MB/s", "rx MB/s",
               "tx %", "rx %", "cong %", "errors/s, resets, saturated");
  for (const auto& r : rates) {
    const PortSample* s = snap.find(r.key);
    std::string notes;
    for (Counter c : kAllCounters) {
      if (isErrorCounter(c) && r[c].ok() && r[c].delta > 0) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s=%.3g/s ", std::string(ibName(c)).c_str(),
                      r[c].perSecond);
        notes += buf;
      }
    }
    for (Counter c : r.resets()) notes += "reset:" + std::string(ibName(c)) + " ";
    for (Counter c : r.saturated()) notes += "saturated:" + std::string(ibName(c)) + " ";
    std::fprintf(
        out_, "%-32.32s %4u %12s %12s %7s %7s %7s  %s\n", s ? s->nodeDescription.c_str() : "",
        r.key.port.value(), fmtNum(r.txBytesPerSecond, 1e-6, "%.3f").c_str(),
        fmtNum(r.rxBytesPerSecond, 1e-6, "%.3f").c_str(),
        fmtNum(r.txUtilization, 100, "%.2f").c_str(), fmtNum(r.rxUtilization, 100, "%.2f").c_str(),
        fmtNum(r.congestion, 100, "%.2f").c_str(), notes.c_str());
  }
  std::fflush(out_);
}

void TableReport::finish(const std::vector<LinkHealthReport>& health,
                         const std::vector<Event>& events, const mad::MadEngineStats&) {
  if (!health.empty()) {
    std::fprintf(out_, "link health\n");
    for (const auto& h : health) {
      std::fprintf(out_, "%-9s \"%s\"[%u] <-> \"%s\"[%u]", std::string(toString(h.state)).c_str(),
                   h.aDescription.c_str(), h.a.port.value(), h.bDescription.c_str(),
                   h.b.port.value());
      for (const auto& x : h.reasons)
        std::fprintf(out_, "  %s: %s;", x.code.c_str(), x.text.c_str());
      std::fprintf(out_, "\n");
    }
  }
  for (const auto& e : events) {
    std::string remote;
    if (e.remote) {
      remote = " <-> \"" + e.remote->description + "\"[" + std::to_string(e.remote->port.value()) +
               "] (" + toString(e.remote->node) + ")";
    }
    std::fprintf(out_, "event %" PRIu64 " %s \"%s\"[%u] (%s)%s: %s\n", e.id,
                 std::string(toString(e.type)).c_str(), e.end.description.c_str(),
                 e.end.port.value(), toString(e.end.node).c_str(), remote.c_str(),
                 e.message.c_str());
  }
  std::fflush(out_);
}

}  // namespace

std::unique_ptr<CountersReport> makeJsonReport(std::FILE* out, double xmitWaitTickNs) {
  return std::make_unique<JsonReport>(out, xmitWaitTickNs);
}

std::unique_ptr<CountersReport> makeTableReport(std::FILE* out) {
  return std::make_unique<TableReport>(out);
}

}  // namespace ibfabric::cli
