#include "discovery/link_health.h"

#include "discovery/formats.h"

#include <algorithm>
#include <map>
#include <utility>

namespace ibfabric {
namespace {

struct Best {
  std::optional<LinkWidth> width;
  std::optional<LinkSpeed> speed;
};

Best bestEnabled(const Port& p) {
  return {widestWidth(p.widthEnabled), fastestSpeed(p.speedEnabled)};
}

std::string bestLabel(const Best& b) {
  std::string out = b.width ? std::string(toString(*b.width)) : std::string("?");
  out += ' ';
  out += b.speed ? std::string(toString(*b.speed)) : std::string("?");
  return out;
}

std::string optionalRateLabel(const std::optional<LinkRate>& r) {
  return r ? rateLabel(*r) : std::string("no active rate");
}

bool upButNotActive(const Port& p) {
  return p.physState == PhysPortState::kLinkUp &&
         (p.state == PortState::kInit || p.state == PortState::kArmed);
}

using Tier = std::pair<int, int>;  // (lower level, higher level) of a link's ends

Tier tierOf(const Topology& t, const Link& l) {
  int a = t.node(l.a.node).level, b = t.node(l.b.node).level;
  return {std::min(a, b), std::max(a, b)};
}

// Orders rates by data rate (width x lane rate), the measure "slower" is judged on.
bool slower(const LinkRate& x, const LinkRate& y) { return x.dataGbps() < y.dataGbps(); }

struct TierRate {
  LinkRate rate;
  std::size_t holders = 0;
  std::size_t links = 0;
};

// The dominant active rate of each tier, where one rate is held by more than half its links.
std::map<Tier, TierRate> dominantRates(const Topology& topology) {
  std::map<Tier, std::map<std::string, std::pair<LinkRate, std::size_t>>> counts;
  std::map<Tier, std::size_t> totals;
  for (const Link& l : topology.links()) {
    if (!l.rate) continue;
    Tier tier = tierOf(topology, l);
    auto& slot = counts[tier][l.rate->toString()];
    slot.first = *l.rate;
    ++slot.second;
    ++totals[tier];
  }
  std::map<Tier, TierRate> out;
  for (const auto& [tier, rates] : counts) {
    const std::size_t total = totals[tier];
    if (total < kPeerTierMinLinks) continue;
    for (const auto& [name, rate] : rates) {
      if (rate.second * 2 > total) out[tier] = TierRate{rate.first, rate.second, total};
    }
  }
  return out;
}

}  // namespace

std::string_view toString(LinkHealthKind k) {
  switch (k) {
    case LinkHealthKind::kBelowEnabled:
      return "below-enabled";
    case LinkHealthKind::kEnableMismatch:
      return "enable-mismatch";
    case LinkHealthKind::kEndsDisagree:
      return "ends-disagree";
    case LinkHealthKind::kNotActive:
      return "not-active";
    case LinkHealthKind::kBelowPeers:
      return "below-peers";
  }
  return "unknown";
}

std::string portLabel(const Topology& topology, PortRef ref) {
  std::string name;
  if (ref.node < topology.nodes().size()) {
    const Node& n = topology.node(ref.node);
    name = n.description.empty() ? toString(n.guid) : n.description;
  } else {
    name = "?";
  }
  return "\"" + name + "\"[" + toString(ref.port) + "]";
}

std::string rateLabel(const LinkRate& rate) {
  return std::string(toString(rate.width)) + " " + std::string(toString(rate.speed));
}

std::vector<LinkHealthIssue> checkLinkHealth(const Topology& topology) {
  std::vector<LinkHealthIssue> out;
  const auto& links = topology.links();
  const auto dominant = dominantRates(topology);
  for (std::uint32_t li = 0; li < links.size(); ++li) {
    const Link& l = links[li];
    const Port* pa = topology.port(l.a);
    const Port* pb = topology.port(l.b);
    if (!pa || !pb) continue;
    const std::string ends = portLabel(topology, l.a) + " <-> " + portLabel(topology, l.b);
    auto issue = [&](LinkHealthKind kind, std::string text) {
      LinkHealthIssue i;
      i.kind = kind;
      i.port = l.a;
      i.remote = l.b;
      i.link = li;
      i.active = l.rate;
      i.enabled = l.enabledRate;
      i.text = ends + ": " + std::move(text);
      out.push_back(std::move(i));
    };

    // The two ends should report the same rate and state.
    std::string disagree;
    if (pa->activeRate != pb->activeRate)
      disagree = portLabel(topology, l.a) + " reports " + optionalRateLabel(pa->activeRate) + ", " +
                 portLabel(topology, l.b) + " reports " + optionalRateLabel(pb->activeRate);
    if (pa->state != pb->state) {
      if (!disagree.empty()) disagree += "; ";
      disagree += portLabel(topology, l.a) + " is " + std::string(toString(pa->state)) + ", " +
                  portLabel(topology, l.b) + " is " + std::string(toString(pb->state));
    }
    if (!disagree.empty()) issue(LinkHealthKind::kEndsDisagree, "ends disagree: " + disagree);

    // Physically up but not Active.
    if (upButNotActive(*pa) || upButNotActive(*pb)) {
      std::string states = pa->state == pb->state
                               ? "both ends " + std::string(toString(pa->state))
                               : portLabel(topology, l.a) + " " + std::string(toString(pa->state)) +
                                     ", " + portLabel(topology, l.b) + " " +
                                     std::string(toString(pb->state));
      std::string text =
          "link up but not Active (" + states + "): the subnet manager has not brought it up";
      issue(LinkHealthKind::kNotActive, std::move(text));
    }

    // Rate against the rest of its tier: judged even when the ends enable no more.
    if (l.rate) {
      Tier tier = tierOf(topology, l);
      auto d = dominant.find(tier);
      if (d != dominant.end() && slower(*l.rate, d->second.rate))
        issue(LinkHealthKind::kBelowPeers,
              "active " + rateLabel(*l.rate) + " while " + std::to_string(d->second.holders) +
                  " of " + std::to_string(d->second.links) + " " + levelName(tier.first) + "-" +
                  levelName(tier.second) + " links run " + rateLabel(d->second.rate));
    }

    // Rate against what both ends enable.
    if (!l.rate || !l.enabledRate) continue;
    const LinkRate& r = *l.rate;
    const LinkRate& e = *l.enabledRate;
    if (l.belowEnabled()) {
      issue(LinkHealthKind::kBelowEnabled,
            "active " + rateLabel(r) + ", both ends enable " + rateLabel(e));
      continue;
    }
    Best ba = bestEnabled(*pa), bb = bestEnabled(*pb);
    if (!ba.width || !bb.width || !ba.speed || !bb.speed) continue;
    bool heldBack = std::max(lanes(*ba.width), lanes(*bb.width)) > lanes(r.width) ||
                    std::max(*ba.speed, *bb.speed) > r.speed;
    if (heldBack)
      issue(LinkHealthKind::kEnableMismatch,
            "active " + rateLabel(r) + ": " + portLabel(topology, l.a) + " enables up to " +
                bestLabel(ba) + ", " + portLabel(topology, l.b) + " up to " + bestLabel(bb));
  }

  // Ports up but not Active that the crawl saw no remote for.
  for (const Node& n : topology.nodes()) {
    for (const auto& p : n.ports) {
      if (!p || p->remote || (n.isSwitch() && p->num.value() == 0)) continue;
      if (!upButNotActive(*p)) continue;
      LinkHealthIssue i;
      i.kind = LinkHealthKind::kNotActive;
      i.port = PortRef{n.index, p->num};
      i.active = p->activeRate;
      i.text = portLabel(topology, i.port) + ": port up but " + std::string(toString(p->state)) +
               ", remote end not seen";
      out.push_back(std::move(i));
    }
  }
  return out;
}

LinkHealthCounts countLinkHealth(const std::vector<LinkHealthIssue>& issues) {
  LinkHealthCounts c;
  for (const auto& i : issues) {
    switch (i.kind) {
      case LinkHealthKind::kBelowEnabled:
        ++c.belowEnabled;
        break;
      case LinkHealthKind::kEnableMismatch:
        ++c.enableMismatch;
        break;
      case LinkHealthKind::kEndsDisagree:
        ++c.endsDisagree;
        break;
      case LinkHealthKind::kNotActive:
        ++c.notActive;
        break;
      case LinkHealthKind::kBelowPeers:
        ++c.belowPeers;
        break;
    }
  }
  return c;
}

}  // namespace ibfabric
