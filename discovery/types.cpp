#include "discovery/types.h"

#include <charconv>
#include <cstdio>

namespace ibfabric {

std::string toString(Guid g) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(g.value()));
  return buf;
}

std::string toString(Lid l) { return std::to_string(l.value()); }
std::string toString(PortNum p) { return std::to_string(p.value()); }

namespace {

template <typename T>
std::optional<T> parseUnsigned(std::string_view text, int base) {
  if (text.empty()) return std::nullopt;
  T v{};
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

std::string_view stripHexPrefix(std::string_view text, bool& hadPrefix) {
  hadPrefix = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  return hadPrefix ? text.substr(2) : text;
}

}  // namespace

std::optional<Guid> parseGuid(std::string_view text) {
  bool prefixed = false;
  text = stripHexPrefix(text, prefixed);
  if (text.size() > 16) return std::nullopt;
  auto v = parseUnsigned<std::uint64_t>(text, 16);
  if (!v) return std::nullopt;
  return Guid{*v};
}

std::optional<Lid> parseLid(std::string_view text) {
  bool prefixed = false;
  text = stripHexPrefix(text, prefixed);
  auto v = parseUnsigned<std::uint32_t>(text, prefixed ? 16 : 10);
  if (!v || *v == 0 || *v > 0xBFFF) return std::nullopt;
  return Lid{static_cast<std::uint16_t>(*v)};
}

std::optional<PortNum> parsePortNum(std::string_view text) {
  auto v = parseUnsigned<std::uint32_t>(text, 10);
  if (!v || *v > 254) return std::nullopt;
  return PortNum{static_cast<std::uint8_t>(*v)};
}

}  // namespace ibfabric
