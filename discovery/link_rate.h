// Link width and speed as InfiniBand names them (PortInfo LinkWidth*/LinkSpeed*/LinkSpeedExt*),
// with the per-lane rates needed to turn counters into utilization.
//
// Pure functions and value types; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ibfabric {

/// Values are the PortInfo LinkWidth bit of each width (IBA 14.2.5.6, table 164).
enum class LinkWidth : std::uint8_t { k1x = 1, k4x = 2, k8x = 4, k12x = 8, k2x = 16 };

/// One enumerator per IB signalling rate, slowest first (so "<" means "slower").
enum class LinkSpeed : std::uint8_t { kSdr, kDdr, kQdr, kFdr10, kFdr, kEdr, kHdr, kNdr, kXdr };

int lanes(LinkWidth w);
/// Nominal lane rate in Gb/s as marketed (SDR 2.5 ... HDR 50, NDR 100).
double nominalLaneGbps(LinkSpeed s);
/// Data rate per lane in Gb/s after line encoding (8b/10b up to QDR, 64b/66b FDR10..EDR,
/// PAM4 with FEC from HDR: marketed rate is the data rate).
double dataLaneGbps(LinkSpeed s);

/// "4x", "1x", ... and "SDR", "HDR", ... as ibnetdiscover/iblinkinfo print them.
std::string_view toString(LinkWidth w);
std::string_view toString(LinkSpeed s);
std::optional<LinkWidth> parseLinkWidth(std::string_view text);  // "4x" / "4X"
std::optional<LinkSpeed> parseLinkSpeed(std::string_view text);  // "HDR" / "hdr"

struct LinkRate {
  LinkWidth width = LinkWidth::k4x;
  LinkSpeed speed = LinkSpeed::kHdr;

  double nominalGbps() const { return lanes(width) * nominalLaneGbps(speed); }
  double dataGbps() const { return lanes(width) * dataLaneGbps(speed); }
  /// "4xHDR", the form ibnetdiscover appends to port lines.
  std::string toString() const;
  friend bool operator==(const LinkRate&, const LinkRate&) = default;
};

/// Parses "4xHDR" (case-insensitive).
std::optional<LinkRate> parseLinkRate(std::string_view text);

}  // namespace ibfabric
