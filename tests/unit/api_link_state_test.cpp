// A link's state in REST (api/http/json_views.h linkStateName): a link without a physical link
// is "down", one linked but not Active "init", even while the last sweep's health report (older
// than the probe or crawl that saw the port change) still says "ok"; an Active link takes its
// report's state, else its rate's.
#include <gtest/gtest.h>

#include "api/http/json_views.h"

namespace ibfabric::api {
namespace {

telemetry::LinkHealthReport reportOf(telemetry::LinkState state) {
  telemetry::LinkHealthReport r;
  r.state = state;
  return r;
}

TEST(ApiLinkState, APortNotActiveIsDownOrInitWhateverAnOlderReportSays) {
  const Link link;
  for (auto s : {telemetry::LinkState::kOk, telemetry::LinkState::kDegraded,
                 telemetry::LinkState::kFaulty}) {
    const auto r = reportOf(s);
    EXPECT_EQ(linkStateName(link, LinkActivity::kDown, &r), "down") << telemetry::toString(s);
    EXPECT_EQ(linkStateName(link, LinkActivity::kInit, &r), "init") << telemetry::toString(s);
  }
  EXPECT_EQ(linkStateName(link, LinkActivity::kDown, nullptr), "down");
  EXPECT_EQ(linkStateName(link, LinkActivity::kInit, nullptr), "init");
}

TEST(ApiLinkState, AnActiveLinkTakesItsReportElseItsRate) {
  const Link link;
  const auto faulty = reportOf(telemetry::LinkState::kFaulty);
  EXPECT_EQ(linkStateName(link, LinkActivity::kActive, &faulty), "faulty");
  const auto ok = reportOf(telemetry::LinkState::kOk);
  EXPECT_EQ(linkStateName(link, LinkActivity::kActive, &ok), "ok");
  EXPECT_EQ(linkStateName(link, LinkActivity::kActive, nullptr), "ok");
  Link slow;
  slow.rate = LinkRate{LinkWidth::k1x, LinkSpeed::kHdr};
  slow.enabledRate = LinkRate{LinkWidth::k4x, LinkSpeed::kHdr};
  ASSERT_TRUE(slow.belowEnabled());
  EXPECT_EQ(linkStateName(slow, LinkActivity::kActive, nullptr), "degraded");
}

}  // namespace
}  // namespace ibfabric::api
