#include "discovery/link_rate.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace ibfabric {
namespace {

struct WidthRow {
  LinkWidth width;
  int lanes;
  std::string_view name;
};
constexpr std::array kWidths{
    WidthRow{LinkWidth::k1x, 1, "1x"},    WidthRow{LinkWidth::k2x, 2, "2x"},
    WidthRow{LinkWidth::k4x, 4, "4x"},    WidthRow{LinkWidth::k8x, 8, "8x"},
    WidthRow{LinkWidth::k12x, 12, "12x"},
};

struct SpeedRow {
  LinkSpeed speed;
  double nominal;
  double data;
  std::string_view name;
};
// Data rates: 8b/10b for SDR/DDR/QDR, 64b/66b for FDR10/FDR/EDR; HDR and later are quoted
// as data rates already (PAM4 signalling with RS-FEC).
constexpr std::array kSpeeds{
    SpeedRow{LinkSpeed::kSdr, 2.5, 2.0, "SDR"},
    SpeedRow{LinkSpeed::kDdr, 5.0, 4.0, "DDR"},
    SpeedRow{LinkSpeed::kQdr, 10.0, 8.0, "QDR"},
    SpeedRow{LinkSpeed::kFdr10, 10.0, 10.3125 * 64.0 / 66.0, "FDR10"},
    SpeedRow{LinkSpeed::kFdr, 14.0625, 14.0625 * 64.0 / 66.0, "FDR"},
    SpeedRow{LinkSpeed::kEdr, 25.78125, 25.0, "EDR"},
    SpeedRow{LinkSpeed::kHdr, 50.0, 50.0, "HDR"},
    SpeedRow{LinkSpeed::kNdr, 100.0, 100.0, "NDR"},
    SpeedRow{LinkSpeed::kXdr, 200.0, 200.0, "XDR"},
};

const WidthRow& row(LinkWidth w) {
  return *std::find_if(kWidths.begin(), kWidths.end(), [w](const auto& r) { return r.width == w; });
}
const SpeedRow& row(LinkSpeed s) {
  return *std::find_if(kSpeeds.begin(), kSpeeds.end(), [s](const auto& r) { return r.speed == s; });
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

int lanes(LinkWidth w) { return row(w).lanes; }
double nominalLaneGbps(LinkSpeed s) { return row(s).nominal; }
double dataLaneGbps(LinkSpeed s) { return row(s).data; }
std::string_view toString(LinkWidth w) { return row(w).name; }
std::string_view toString(LinkSpeed s) { return row(s).name; }

std::optional<LinkWidth> parseLinkWidth(std::string_view text) {
  for (const auto& r : kWidths)
    if (iequals(r.name, text)) return r.width;
  return std::nullopt;
}

std::optional<LinkSpeed> parseLinkSpeed(std::string_view text) {
  for (const auto& r : kSpeeds)
    if (iequals(r.name, text)) return r.speed;
  return std::nullopt;
}

std::string LinkRate::toString() const {
  return std::string(ibfabric::toString(width)) + std::string(ibfabric::toString(speed));
}

std::optional<LinkRate> parseLinkRate(std::string_view text) {
  auto x = text.find_first_of("xX");
  if (x == std::string_view::npos) return std::nullopt;
  auto w = parseLinkWidth(text.substr(0, x + 1));
  auto s = parseLinkSpeed(text.substr(x + 1));
  if (!w || !s) return std::nullopt;
  return LinkRate{*w, *s};
}

}  // namespace ibfabric
