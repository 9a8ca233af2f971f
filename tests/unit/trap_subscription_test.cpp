// SA event subscription: the InformInfo and Notice layouts against IBA 15.2.5.12 / 13.4.8.2 (byte
// positions, not round trips only), and TrapSubscription on a scripted transport and fake clock:
// subscribing, refusals and silence, Reports answered and de-duplicated, re-subscription when
// the SM moves or the period ends, unsubscription, a port that fails.
#include <gtest/gtest.h>
#include <infiniband/mad.h>

#include <cerrno>

#include "telemetry/sa_attributes.h"
#include "telemetry/smp_attributes.h"
#include "telemetry/trap_subscription.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_mad_transport.h"

namespace ibfabric::mad {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t kData = 56;  // SA attribute data (IBA 15.2.1.1)

std::uint32_t be(const MadBuffer& m, std::size_t at, std::size_t bytes) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i) v = (v << 8) | m[at + i];
  return v;
}

/// A Report as the SM sends it: SA class, method Report, the Notice in the SA data.
MadBuffer report(std::uint16_t trap, std::uint64_t tid, Lid issuer, Lid dataLid = Lid{}) {
  MadBuffer m = makeRequest(MgmtClass::kSubnAdm, MadMethod::kReport, 0x0002, 0);
  setTransactionId(m, tid);
  std::uint8_t* n = m.data() + kData;
  std::uint32_t v = 1;
  mad_encode_field(n, IB_NOTICE_IS_GENERIC_F, &v);
  v = 1;
  mad_encode_field(n, IB_NOTICE_TYPE_F, &v);
  v = 2;
  mad_encode_field(n, IB_NOTICE_PRODUCER_F, &v);
  v = trap;
  mad_encode_field(n, IB_NOTICE_TRAP_NUMBER_F, &v);
  v = issuer.value();
  mad_encode_field(n, IB_NOTICE_ISSUER_LID_F, &v);
  v = dataLid.value();
  mad_encode_field(n, IB_NOTICE_DATA_LID_F, &v);
  return m;
}

TEST(SaAttributes, InformInfoSetHasTheSpecLayout) {
  InformInfo info;
  info.trapNumber = 128;
  const MadBuffer m = buildInformInfoSet(info);
  const MadHeader h = decodeHeader(m);
  EXPECT_EQ(h.mgmtClass, 0x03);
  EXPECT_EQ(h.classVersion, 2);
  EXPECT_EQ(h.method, 0x02);
  EXPECT_EQ(h.attributeId, 0x0003);
  for (std::size_t i = 0; i < 16; ++i) EXPECT_EQ(m[kData + i], 0) << "GID byte " << i;
  EXPECT_EQ(be(m, kData + 16, 2), 0xFFFFu);  // LIDRangeBegin: every issuer
  EXPECT_EQ(be(m, kData + 18, 2), 0u);
  EXPECT_EQ(m[kData + 22], 1);                 // IsGeneric
  EXPECT_EQ(m[kData + 23], 1);                 // Subscribe
  EXPECT_EQ(be(m, kData + 24, 2), 0xFFFFu);    // Type
  EXPECT_EQ(be(m, kData + 26, 2), 128u);       // TrapNumber
  EXPECT_EQ(be(m, kData + 28, 3), 1u);         // QPN
  EXPECT_EQ(m[kData + 31] & 0x1F, 19);         // RespTimeValue
  EXPECT_EQ(be(m, kData + 33, 3), 0xFFFFFFu);  // ProducerType
  EXPECT_EQ(decodeInformInfo(m), info);
  info.subscribe = false;
  EXPECT_EQ(buildInformInfoSet(info)[kData + 23], 0);
}

TEST(SaAttributes, ReportNoticeAndResponse) {
  const MadBuffer r = report(128, 0x1234, Lid(7), Lid(7));
  ASSERT_TRUE(isReport(r));
  const Notice n = decodeReportNotice(r);
  EXPECT_TRUE(n.isGeneric);
  EXPECT_EQ(n.type, 1);
  EXPECT_EQ(n.producerType, 2u);
  EXPECT_EQ(n.trapNumber, 128);
  EXPECT_EQ(n.issuerLid, Lid(7));
  EXPECT_EQ(n.dataLid, Lid(7));
  const MadBuffer resp = buildReportResponse(r);
  EXPECT_FALSE(isReport(resp));
  EXPECT_EQ(decodeHeader(resp).method, 0x86);
  EXPECT_EQ(transactionId(resp), 0x1234u);
  EXPECT_FALSE(isReport(FakeMadTransport::responseTo(buildInformInfoSet({}))));

  // Traps 64/65: the port's GID in the details (byte 6 of them), its GUID the low half.
  MadBuffer g = report(65, 1, Lid(1));
  for (std::size_t i = 0; i < 8; ++i) g[kData + 16 + 8 + i] = static_cast<std::uint8_t>(0x10 + i);
  EXPECT_EQ(decodeReportNotice(g).portGuid(), Guid(0x1011121314151617ULL));
}

TEST(SaAttributes, StatusText) {
  EXPECT_EQ(saStatusText(0), "");
  EXPECT_EQ(saStatusText(0x0200), "req_invalid (0x0200)");
  EXPECT_EQ(saStatusText(0x000c), "method_attribute_unsupported (0x000c)");
}

/// A fake SM: answers InformInfo Sets with `status` (or not at all when `silent`).
struct Sm {
  std::uint16_t status = 0;
  bool silent = false;
  std::vector<MadBuffer> seen;  // every MAD sent (outlives the transports)
  FakeMadTransport::Responder responder() {
    return [this](const MadAddress&, const MadBuffer& req,
                  int) -> std::vector<FakeMadTransport::Reply> {
      seen.push_back(req);
      if (silent || decodeHeader(req).method != 0x02) return {};
      MadBuffer reply = FakeMadTransport::responseTo(req);
      MadHeader h = decodeHeader(reply);
      h.status = status;
      encodeHeader(reply, h);
      return {FakeMadTransport::Reply(1ms, reply)};
    };
  }
};

struct Harness {
  FakeClock clock;
  Sm sm;
  FakeMadTransport* transport = nullptr;
  int opens = 0;
  bool failOpen = false;
  Lid smLid{1};
  std::vector<Notice> notices;
  std::vector<TrapSubscriptionStatus> statuses;
  std::unique_ptr<TrapSubscription> sub;

  explicit Harness(TrapSubscriptionOptions o = {}) {
    sub = std::make_unique<TrapSubscription>(
        [this]() -> MadTransportPtr {
          ++opens;
          if (failOpen) return nullptr;
          auto t = std::make_unique<FakeMadTransport>(clock, sm.responder());
          transport = t.get();
          return t;
        },
        clock, [this] { return smLid; }, [this](const Notice& n) { notices.push_back(n); },
        [this](const TrapSubscriptionStatus& s) { statuses.push_back(s); }, o);
  }
  /// The InformInfo Sets sent so far, with their destination.
  std::vector<std::pair<MadAddress, InformInfo>> sets() const {
    std::vector<std::pair<MadAddress, InformInfo>> out;
    for (const auto& s : transport->sent())
      if (decodeHeader(s.mad).method == 0x02) out.push_back({s.to, decodeInformInfo(s.mad)});
    return out;
  }
};

TEST(TrapSubscription, SubscribesEveryTrapAtTheSmAndSaysSo) {
  Harness h;
  ASSERT_TRUE(h.sub->step(10ms));
  const auto sets = h.sets();
  ASSERT_EQ(sets.size(), 4u);
  std::vector<int> traps;
  for (const auto& [to, info] : sets) {
    EXPECT_EQ(to, saAddress(Lid(1)));
    EXPECT_EQ(to.qp, 1u);
    EXPECT_EQ(to.qkey, 0x80010000u);
    EXPECT_TRUE(info.subscribe);
    traps.push_back(info.trapNumber);
  }
  EXPECT_EQ(traps, (std::vector<int>{64, 65, 128, 144}));
  const auto st = h.sub->status();
  EXPECT_TRUE(st.portOpen);
  EXPECT_TRUE(st.subscribed);
  EXPECT_EQ(st.smLid, Lid(1));
  EXPECT_EQ(st.rounds, 1u);
  EXPECT_TRUE(st.lastError.empty());
  ASSERT_FALSE(h.statuses.empty());
  EXPECT_TRUE(h.statuses.back().subscribed);
  // Nothing more until the period ends.
  h.sub->step(10s);
  EXPECT_EQ(h.sets().size(), 4u);
}

TEST(TrapSubscription, ARefusalIsAnErrorAndIsRetriedLater) {
  TrapSubscriptionOptions o;
  o.retryAfter = 5s;
  Harness h(o);
  h.sm.status = 0x0200;
  h.sub->step(10ms);
  auto st = h.sub->status();
  EXPECT_FALSE(st.subscribed);
  EXPECT_EQ(st.failures, 1u);
  EXPECT_NE(st.lastError.find("refused"), std::string::npos) << st.lastError;
  EXPECT_NE(st.lastError.find("req_invalid"), std::string::npos) << st.lastError;
  h.sm.status = 0;
  h.sub->step(1s);  // not yet
  EXPECT_EQ(h.sets().size(), 4u);
  h.sub->step(5s);
  h.sub->step(10ms);
  st = h.sub->status();
  EXPECT_TRUE(st.subscribed);
  EXPECT_TRUE(st.lastError.empty());
  EXPECT_EQ(h.sets().size(), 8u);
}

TEST(TrapSubscription, ASilentSmIsAskedAgainThenReported) {
  Harness h;
  h.sm.silent = true;
  h.sub->step(10ms);
  const auto st = h.sub->status();
  EXPECT_FALSE(st.subscribed);
  EXPECT_EQ(h.sets().size(), 12u);  // 3 attempts of 4
  EXPECT_NE(st.lastError.find("no answer from the SM at LID 1"), std::string::npos) << st.lastError;
}

TEST(TrapSubscription, AnUnansweredPeriodicRoundKeepsTheSubscription) {
  TrapSubscriptionOptions o;
  o.resubscribeEvery = 60s;
  Harness h(o);
  h.sub->step(10ms);
  ASSERT_TRUE(h.sub->status().subscribed);
  h.sm.silent = true;  // busy with a heavy sweep
  h.sub->step(61s);
  h.sub->step(10ms);
  auto st = h.sub->status();
  EXPECT_TRUE(st.subscribed);
  EXPECT_EQ(st.failures, 1u);
  EXPECT_NE(st.lastError.find("no answer"), std::string::npos) << st.lastError;
  h.smLid = Lid(3);  // a new SM that does not answer: nothing stands there
  h.sub->step(10ms);
  EXPECT_FALSE(h.sub->status().subscribed);
}

TEST(TrapSubscription, AReportIsAnsweredAndHandledOnce) {
  Harness h;
  h.sub->step(10ms);
  ASSERT_TRUE(h.sub->status().subscribed);
  h.transport->deliver(report(128, 0xabc, Lid(9), Lid(9)), Lid(1), 5ms);
  h.transport->deliver(report(128, 0xabc, Lid(9), Lid(9)), Lid(1), 6ms);  // the SM resent it
  h.sub->step(20ms);
  ASSERT_EQ(h.notices.size(), 1u);
  EXPECT_EQ(h.notices[0].trapNumber, 128);
  EXPECT_EQ(h.notices[0].dataLid, Lid(9));
  int responses = 0;
  for (const auto& s : h.transport->sent()) {
    if (decodeHeader(s.mad).method != 0x86) continue;
    ++responses;
    EXPECT_EQ(s.to, saAddress(Lid(1)));
    EXPECT_EQ(transactionId(s.mad), 0xabcu);
  }
  EXPECT_EQ(responses, 2);  // both copies acknowledged
  const auto st = h.sub->status();
  EXPECT_EQ(st.reports.at(128), 1u);
  EXPECT_EQ(st.duplicates, 1u);
  EXPECT_TRUE(st.lastReport.has_value());
}

TEST(TrapSubscription, RequestsItDoesNotServeAreAnsweredUnsupported) {
  Harness h;
  h.sub->step(10ms);
  // The SM asks this port SMInfo (under ibsim the SA port is an SM client): a directed-route
  // SMP, then a LID-routed one.
  MadBuffer dr = toDirectedRoute(buildPortInfoGet(0), DirectedPath{{1, 3}});
  MadHeader hd = decodeHeader(dr);
  hd.attributeId = 0x0020;  // SMInfo
  hd.transactionId = 0x77;
  encodeHeader(dr, hd);
  h.transport->deliver(dr, Lid(1), 1ms);
  MadBuffer lid = buildPortInfoGet(0);
  setTransactionId(lid, 0x78);
  h.transport->deliver(lid, Lid(1), 2ms);
  h.sub->step(10ms);
  std::vector<FakeMadTransport::SentMad> replies;
  for (const auto& s : h.transport->sent())
    if (decodeHeader(s.mad).method == 0x81) replies.push_back(s);
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[0].to, directedRouteAddress());
  EXPECT_EQ(transactionId(replies[0].mad), 0x77u);
  EXPECT_EQ(decodeHeader(replies[0].mad).status, 0x800C);  // direction bit + unsupported
  EXPECT_EQ(madStatus(replies[0].mad), 0x000C);
  EXPECT_EQ(replies[1].to, smpAddress(Lid(1)));
  EXPECT_EQ(decodeHeader(replies[1].mad).status, 0x000C);
  EXPECT_TRUE(h.notices.empty());
}

TEST(TrapSubscription, SubscribesAgainWhenTheSmMovesAndEveryPeriod) {
  TrapSubscriptionOptions o;
  o.resubscribeEvery = 60s;
  Harness h(o);
  h.sub->step(10ms);
  h.smLid = Lid(5);  // failover
  h.sub->step(10ms);
  auto sets = h.sets();
  ASSERT_EQ(sets.size(), 8u);
  EXPECT_EQ(sets.back().first.lid, Lid(5));
  EXPECT_EQ(h.sub->status().smLid, Lid(5));
  h.sub->step(61s);
  h.sub->step(10ms);
  EXPECT_EQ(h.sets().size(), 12u);
  EXPECT_EQ(h.sub->status().rounds, 3u);
}

TEST(TrapSubscription, WaitsForAnSmAndUnsubscribesAtTheEnd) {
  Harness h;
  h.smLid = Lid{};
  h.sub->step(10ms);
  EXPECT_TRUE(h.sets().empty());
  EXPECT_FALSE(h.sub->status().subscribed);
  h.smLid = Lid(1);
  h.sub->step(10ms);
  ASSERT_TRUE(h.sub->status().subscribed);
  h.sub->unsubscribe();  // closes and drops the port: read what it sent from the SM's side
  std::vector<InformInfo> off;
  for (const auto& m : h.sm.seen)
    if (decodeHeader(m).method == 0x02 && !decodeInformInfo(m).subscribe)
      off.push_back(decodeInformInfo(m));
  EXPECT_EQ(off.size(), 4u);
  EXPECT_FALSE(h.sub->status().portOpen);
  EXPECT_FALSE(h.sub->status().subscribed);
}

TEST(TrapSubscription, APortThatFailsIsOpenedAgain) {
  TrapSubscriptionOptions o;
  o.retryAfter = 2s;
  Harness h(o);
  h.failOpen = true;
  EXPECT_FALSE(h.sub->step(10ms));
  auto st = h.sub->status();
  EXPECT_FALSE(st.portOpen);
  EXPECT_NE(st.lastError.find("cannot open the SA port"), std::string::npos) << st.lastError;
  EXPECT_FALSE(h.sub->step(10ms));  // not before retryAfter
  EXPECT_EQ(h.opens, 1);
  h.failOpen = false;
  h.clock.advance(2s);
  EXPECT_TRUE(h.sub->step(10ms));
  EXPECT_TRUE(h.sub->status().subscribed);
  // A send that fails drops the port.
  h.smLid = Lid(2);
  h.transport->failNextSends(1, EPIPE);
  EXPECT_FALSE(h.sub->step(10ms));
  st = h.sub->status();
  EXPECT_FALSE(st.portOpen);
  EXPECT_FALSE(st.subscribed);
  EXPECT_NE(st.lastError.find("not sent"), std::string::npos) << st.lastError;
}

}  // namespace
}  // namespace ibfabric::mad
