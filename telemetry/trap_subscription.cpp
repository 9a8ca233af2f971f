#include "telemetry/trap_subscription.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

namespace ibfabric::mad {
namespace {

constexpr std::size_t kRecentReports = 64;
constexpr auto kThreadWait = std::chrono::milliseconds(200);

std::string trapList(const std::vector<Trap>& traps) {
  std::string out;
  for (Trap t : traps) out += (out.empty() ? "" : ",") + std::to_string(static_cast<int>(t));
  return out;
}

}  // namespace

TrapSubscription::TrapSubscription(TransportFactory factory, const Clock& clock, SmLidSource smLid,
                                   NoticeHandler onNotice, StatusHandler onStatus,
                                   TrapSubscriptionOptions options)
    : factory_(std::move(factory)),
      clock_(clock),
      smLid_(std::move(smLid)),
      onNotice_(std::move(onNotice)),
      onStatus_(std::move(onStatus)),
      options_(std::move(options)) {}

TrapSubscription::~TrapSubscription() { stop(); }

void TrapSubscription::start() {
  thread_ = std::thread([this] {
    for (;;) {
      {
        std::lock_guard lock(mu_);
        if (stopping_) break;
      }
      if (!step(kThreadWait)) {  // no port: wait before trying again
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, std::chrono::seconds(1), [&] { return stopping_; });
      }
    }
    unsubscribe();
  });
}

void TrapSubscription::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

TrapSubscriptionStatus TrapSubscription::status() const {
  std::lock_guard lock(statusMu_);
  return status_;
}

void TrapSubscription::publish() {
  TrapSubscriptionStatus now;
  {
    std::lock_guard lock(statusMu_);
    if (status_ == published_) return;
    published_ = status_;
    now = status_;
  }
  if (onStatus_) onStatus_(now);
}

bool TrapSubscription::ensurePort() {
  if (transport_) return true;
  const auto now = clock_.now();
  if (now < nextOpen_) return false;
  nextOpen_ = now + options_.retryAfter;
  transport_ = factory_ ? factory_() : nullptr;
  std::string error = "no transport";
  if (transport_ && transport_->open(error)) {
    {
      std::lock_guard lock(statusMu_);
      status_.portOpen = true;
    }
    publish();
    return true;
  }
  transport_.reset();
  {
    std::lock_guard lock(statusMu_);
    status_.portOpen = false;
    status_.subscribed = false;
    ++status_.failures;
    status_.lastError = "cannot open the SA port: " + error;
  }
  spdlog::warn("trap subscription: cannot open the SA port: {}", error);
  publish();
  return false;
}

void TrapSubscription::dropPort(const std::string& why) {
  if (transport_) transport_->close();
  transport_.reset();
  nextOpen_ = clock_.now() + options_.retryAfter;
  {
    std::lock_guard lock(statusMu_);
    status_.portOpen = false;
    status_.subscribed = false;
    ++status_.failures;
    status_.lastError = why;
  }
  spdlog::warn("trap subscription: {}; the SA port is opened again", why);
  publish();
}

bool TrapSubscription::step(Clock::duration wait) {
  if (!ensurePort()) return false;
  Lid sm = smLid_ ? smLid_() : Lid{};
  if (sm.value() == 0) sm = transport_->smLid();  // as the port reported it when opened
  if (sm.value() != 0 && (clock_.now() >= nextRound_ || sm != subscribedSm_)) {
    subscribe(sm, true);
    if (!transport_) return false;
  }
  const auto deadline = clock_.now() + wait;
  for (auto now = clock_.now(); now < deadline; now = clock_.now()) {
    const ReceiveResult r = transport_->receive(deadline - now);
    if (r.status == ReceiveStatus::kTimeout) break;
    if (r.status == ReceiveStatus::kError) {
      dropPort("the SA port failed: " + r.error);
      return false;
    }
    handle(r.mad, nullptr, nullptr);
  }
  publish();
  return true;
}

void TrapSubscription::handle(const ReceivedMad& m, std::map<std::uint32_t, Trap>* pending,
                              std::vector<std::string>* errors) {
  if (m.umadStatus != 0) return;  // a send the transport gave up on: the round resends
  if (isReport(m.mad)) {
    // Acknowledge every copy (the SM resends until it hears back), handle each Report once.
    if (const int e = transport_->send(saAddress(m.sourceLid), buildReportResponse(m.mad)); e != 0)
      spdlog::debug("trap subscription: ReportResponse to LID {}: {}", m.sourceLid.value(),
                    std::strerror(e));
    const std::uint64_t tid = transactionId(m.mad);
    if (std::find(recentReports_.begin(), recentReports_.end(), tid) != recentReports_.end()) {
      std::lock_guard lock(statusMu_);
      ++status_.duplicates;
      return;
    }
    recentReports_.push_back(tid);
    if (recentReports_.size() > kRecentReports) recentReports_.pop_front();
    const Notice notice = decodeReportNotice(m.mad);
    {
      std::lock_guard lock(statusMu_);
      ++status_.reports[notice.trapNumber];
      status_.lastReport = std::chrono::system_clock::now();
    }
    spdlog::debug("trap subscription: Report of trap {} from LID {} (data LID {})",
                  notice.trapNumber, notice.issuerLid.value(), notice.dataLid.value());
    if (onNotice_) onNotice_(notice);
    return;
  }
  if (!isResponse(m.mad)) return refuse(m);
  if (!pending) return;
  const MadHeader h = decodeHeader(m.mad);
  if (h.mgmtClass != static_cast<std::uint8_t>(MgmtClass::kSubnAdm)) return;
  const auto it = pending->find(lowTransactionId(h.transactionId));
  if (it == pending->end()) return;  // a late answer of an earlier attempt
  const Trap trap = it->second;
  pending->erase(it);
  const std::string name = "trap " + std::to_string(static_cast<int>(trap));
  if (const auto st = madStatus(m.mad); st != 0) {
    errors->push_back(name + ": the SM refused the subscription: " + saStatusText(st));
    return;
  }
  const InformInfo got = decodeInformInfo(m.mad);
  if (got.trapNumber != static_cast<std::uint16_t>(trap))
    errors->push_back(name + ": the SM answered for trap " + std::to_string(got.trapNumber));
}

void TrapSubscription::refuse(const ReceivedMad& m) {
  // A request this port does not serve (under ibsim, an SM client is asked SMInfo): answered
  // "method/attribute not supported" as an agent must (IBA 13.4.7), so the asker does not wait.
  const MadHeader in = decodeHeader(m.mad);
  const bool dr = in.mgmtClass == static_cast<std::uint8_t>(MgmtClass::kSubnDirected);
  const bool smp = dr || in.mgmtClass == static_cast<std::uint8_t>(MgmtClass::kSubnLid);
  MadBuffer reply = m.mad;
  MadHeader h = in;
  h.method = static_cast<std::uint8_t>(MadMethod::kGetResponse);
  h.status = dr ? 0x800C : 0x000C;  // a directed-route reply carries the direction bit
  encodeHeader(reply, h);
  const MadAddress to = dr    ? directedRouteAddress()
                        : smp ? smpAddress(m.sourceLid)
                              : MadAddress{m.sourceLid, 1, saAddress(m.sourceLid).qkey,
                                           static_cast<MgmtClass>(in.mgmtClass), 0};
  if (const int e = transport_->send(to, reply); e != 0)
    spdlog::debug("trap subscription: refusal to LID {}: {}", m.sourceLid.value(),
                  std::strerror(e));
}

void TrapSubscription::subscribe(Lid sm, bool on) {
  subscribedSm_ = sm;
  std::vector<Trap> todo = options_.traps;
  std::vector<std::string> errors;
  for (int attempt = 0; attempt < std::max(1, options_.attempts) && !todo.empty(); ++attempt) {
    std::map<std::uint32_t, Trap> pending;
    for (Trap trap : todo) {
      InformInfo info;
      info.subscribe = on;
      info.trapNumber = static_cast<std::uint16_t>(trap);
      MadBuffer mad = buildInformInfoSet(info);
      const std::uint32_t tid = nextTid_++;
      setTransactionId(mad, tid);
      if (const int e = transport_->send(saAddress(sm), mad); e != 0) {
        dropPort("InformInfo to SM LID " + std::to_string(sm.value()) +
                 " not sent: " + std::strerror(e));
        return;
      }
      pending[tid] = trap;
    }
    const auto deadline = clock_.now() + options_.replyTimeout;
    for (auto now = clock_.now(); !pending.empty() && now < deadline; now = clock_.now()) {
      const ReceiveResult r = transport_->receive(deadline - now);
      if (r.status == ReceiveStatus::kTimeout) break;
      if (r.status == ReceiveStatus::kError) {
        dropPort("the SA port failed: " + r.error);
        return;
      }
      handle(r.mad, &pending, &errors);
    }
    todo.clear();
    for (const auto& [tid, trap] : pending) todo.push_back(trap);
  }
  if (!todo.empty())
    errors.push_back("no answer from the SM at LID " + std::to_string(sm.value()) +
                     " for trap(s) " + trapList(todo));
  const auto now = clock_.now();
  if (!on) {
    std::lock_guard lock(statusMu_);
    status_.subscribed = false;
    return;
  }
  std::string error;
  for (const auto& e : errors) error += (error.empty() ? "" : "; ") + e;
  bool first = false;
  {
    std::lock_guard lock(statusMu_);
    const Lid previousSm = status_.smLid;
    status_.smLid = sm;
    if (error.empty()) {
      first = !status_.subscribed;
      status_.subscribed = true;
      ++status_.rounds;
      status_.lastError.clear();
      status_.subscribedAt = std::chrono::system_clock::now();
    } else {
      // A periodic round the SM did not answer (busy with a heavy sweep) leaves the earlier
      // subscription at the same SM standing; a new SM has none.
      status_.subscribed = status_.subscribed && previousSm == sm;
      ++status_.failures;
      if (status_.lastError != error)
        spdlog::warn("trap subscription at SM LID {}: {}", sm.value(), error);
      status_.lastError = error;
    }
  }
  nextRound_ = now + (error.empty() ? options_.resubscribeEvery : options_.retryAfter);
  if (first)
    spdlog::info("subscribed to the SM's traps {} (SA InformInfo at LID {})",
                 trapList(options_.traps), sm.value());
  publish();
}

void TrapSubscription::unsubscribe() {
  if (!transport_) return;
  bool subscribed = false;
  {
    std::lock_guard lock(statusMu_);
    subscribed = status_.subscribed;
  }
  if (subscribed && subscribedSm_.value() != 0) {
    options_.attempts = 1;
    subscribe(subscribedSm_, false);
  }
  if (transport_) transport_->close();
  transport_.reset();
  {
    std::lock_guard lock(statusMu_);
    status_.portOpen = false;
  }
  publish();
}

}  // namespace ibfabric::mad
