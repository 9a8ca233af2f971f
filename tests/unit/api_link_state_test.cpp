// A link's state in REST (api/http/json_views.h linkStateName): a link whose port is not Active
// is "down" even while the last sweep's health report (older than the probe or crawl that saw the
// port go down) still says "ok"; an Active link takes its report's state, else its rate's.
#include <gtest/gtest.h>

#include "api/http/json_views.h"

namespace ibfabric::api {
namespace {

telemetry::LinkHealthReport reportOf(telemetry::LinkState state) {
  telemetry::LinkHealthReport r;
  r.state = state;
  return r;
}

TEST(ApiLinkState, APortNotActiveIsDownWhateverAnOlderReportSays) {
  const Link link;
  for (auto s : {telemetry::LinkState::kOk, telemetry::LinkState::kDegraded,
                 telemetry::LinkState::kFaulty}) {
    const auto r = reportOf(s);
    EXPECT_EQ(linkStateName(link, false, &r), "down") << telemetry::toString(s);
  }
  EXPECT_EQ(linkStateName(link, false, nullptr), "down");
}

TEST(ApiLinkState, AnActiveLinkTakesItsReportElseItsRate) {
  const Link link;
  const auto faulty = reportOf(telemetry::LinkState::kFaulty);
  EXPECT_EQ(linkStateName(link, true, &faulty), "faulty");
  const auto ok = reportOf(telemetry::LinkState::kOk);
  EXPECT_EQ(linkStateName(link, true, &ok), "ok");
  EXPECT_EQ(linkStateName(link, true, nullptr), "ok");
  Link slow;
  slow.rate = LinkRate{LinkWidth::k1x, LinkSpeed::kHdr};
  slow.enabledRate = LinkRate{LinkWidth::k4x, LinkSpeed::kHdr};
  ASSERT_TRUE(slow.belowEnabled());
  EXPECT_EQ(linkStateName(slow, true, nullptr), "degraded");
}

}  // namespace
}  // namespace ibfabric::api
