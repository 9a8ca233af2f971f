#include "tests/fakes/fake_mad_transport.h"

#include <cerrno>

namespace ibfabric::mad {

FakeMadTransport::FakeMadTransport(FakeClock& clock, Responder responder)
    : clock_(clock), responder_(std::move(responder)) {}

MadBuffer FakeMadTransport::responseTo(const MadBuffer& request) {
  MadBuffer reply = request;
  MadHeader h = decodeHeader(request);
  h.method = static_cast<std::uint8_t>(MadMethod::kGetResponse);
  h.transactionId = lowTransactionId(h.transactionId) | (std::uint64_t{kAgentId} << 32);
  encodeHeader(reply, h);
  return reply;
}

bool FakeMadTransport::open(std::string& /*error*/) {
  std::lock_guard lock(mu_);
  open_ = true;
  return true;
}

void FakeMadTransport::close() {
  std::lock_guard lock(mu_);
  open_ = false;
}

bool FakeMadTransport::isOpen() const {
  std::lock_guard lock(mu_);
  return open_;
}

int FakeMadTransport::send(const MadAddress& to, const MadBuffer& mad) {
  std::lock_guard lock(mu_);
  if (!open_) return EBADF;
  if (failSends_ > 0) {
    --failSends_;
    return failError_;
  }
  const int index = static_cast<int>(sent_.size());
  if (dieAt_ >= 0 && index >= dieAt_) {
    if (fatal_.empty()) fatal_ = dieWhy_;
    return EPIPE;
  }
  const auto now = clock_.now();
  sent_.push_back(SentMad{now, to, mad});
  unanswered_.insert(lowTransactionId(transactionId(mad)));
  maxUnanswered_ = std::max(maxUnanswered_, unanswered_.size());
  for (const Reply& r : responder_(to, mad, index)) {
    ReceivedMad rm;
    rm.sourceLid = to.lid;
    rm.umadStatus = r.umadStatus;
    rm.mad = r.umadStatus != 0 ? mad : (r.mad ? *r.mad : responseTo(mad));
    queue_.emplace(std::make_pair(now + r.delay, seq_++), rm);
  }
  return 0;
}

ReceiveResult FakeMadTransport::receive(std::chrono::nanoseconds timeout) {
  std::lock_guard lock(mu_);
  ReceiveResult result;
  if (!open_ || !fatal_.empty()) {
    result.status = ReceiveStatus::kError;
    result.error = open_ ? fatal_ : "closed";
    return result;
  }
  const auto deadline = clock_.now() + std::max(timeout, std::chrono::nanoseconds::zero());
  if (queue_.empty() || queue_.begin()->first.first > deadline) {
    clock_.advanceTo(deadline);
    result.status = ReceiveStatus::kTimeout;
    return result;
  }
  auto it = queue_.begin();
  clock_.advanceTo(it->first.first);
  result.status = ReceiveStatus::kMad;
  result.mad = it->second;
  queue_.erase(it);
  unanswered_.erase(lowTransactionId(transactionId(result.mad.mad)));
  return result;
}

void FakeMadTransport::deliver(const MadBuffer& mad, Lid from, std::chrono::nanoseconds delay) {
  std::lock_guard lock(mu_);
  ReceivedMad rm;
  rm.mad = mad;
  rm.sourceLid = from;
  queue_.emplace(std::make_pair(clock_.now() + delay, seq_++), rm);
}

std::vector<FakeMadTransport::SentMad> FakeMadTransport::sent() const {
  std::lock_guard lock(mu_);
  return sent_;
}

std::size_t FakeMadTransport::maxUnanswered() const {
  std::lock_guard lock(mu_);
  return maxUnanswered_;
}

void FakeMadTransport::failNextSends(int count, int error) {
  std::lock_guard lock(mu_);
  failSends_ = count;
  failError_ = error;
}

void FakeMadTransport::dieAtSend(int index, std::string why) {
  std::lock_guard lock(mu_);
  dieAt_ = index;
  dieWhy_ = std::move(why);
}

std::string FakeMadTransport::fatalError() const {
  std::lock_guard lock(mu_);
  return fatal_;
}

}  // namespace ibfabric::mad
