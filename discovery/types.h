// Strong types for the identifiers of an InfiniBand subnet: GUIDs, LIDs and port numbers.
//
// They are distinct types so that a LID can never be passed where a port number is expected.
// All are trivially copyable value types; thread-safe as values.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ibfabric {

template <typename Tag, typename Rep>
class StrongId {
 public:
  using rep_type = Rep;
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : value_(v) {}
  constexpr Rep value() const { return value_; }
  constexpr auto operator<=>(const StrongId&) const = default;

 private:
  Rep value_{};
};

struct GuidTag {};
struct LidTag {};
struct PortNumTag {};

/// 64-bit EUI-64 (node, port or system image GUID), host byte order.
using Guid = StrongId<GuidTag, std::uint64_t>;
/// 16-bit local identifier assigned by the subnet manager; 0 means "not assigned".
using Lid = StrongId<LidTag, std::uint16_t>;
/// Physical port number on a node; 0 is a switch's management port.
using PortNum = StrongId<PortNumTag, std::uint8_t>;

/// "0x0002c90300a1b2c3" (always 16 hex digits, as ibnetdiscover prints GUIDs).
std::string toString(Guid g);
std::string toString(Lid l);
std::string toString(PortNum p);

/// Accepts "0x..." or bare hex, up to 16 digits. nullopt on anything else.
std::optional<Guid> parseGuid(std::string_view text);
/// Accepts decimal or 0x-prefixed hex in [1, 0xBFFF] (unicast range).
std::optional<Lid> parseLid(std::string_view text);
/// Accepts decimal 0..254.
std::optional<PortNum> parsePortNum(std::string_view text);

}  // namespace ibfabric

template <typename Tag, typename Rep>
struct std::hash<ibfabric::StrongId<Tag, Rep>> {
  std::size_t operator()(const ibfabric::StrongId<Tag, Rep>& id) const noexcept {
    return std::hash<Rep>{}(id.value());
  }
};
