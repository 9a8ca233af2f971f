// Internal helpers: typed access to libibmad field tables on a MAD's attribute data.
//
// Not part of the public API of the telemetry library; used by the attribute codecs.
#pragma once

#include <infiniband/mad.h>

#include <bit>
#include <cstdint>

#include "telemetry/mad_packet.h"

namespace ibfabric::mad::detail {

static_assert(std::endian::native == std::endian::little,
              "field helpers pass a uint64_t to libibmad, which writes 32-bit fields in place");

/// Reads any field of up to 64 bits (libibmad writes a uint32_t for fields <= 32 bits, which is
/// the low half of the zeroed uint64_t on a little-endian host).
inline std::uint64_t getField(const std::uint8_t* base, MAD_FIELDS field) {
  std::uint64_t v = 0;
  mad_decode_field(const_cast<std::uint8_t*>(base), field, &v);
  return v;
}

inline void setField(std::uint8_t* base, MAD_FIELDS field, std::uint64_t v) {
  mad_encode_field(base, field, &v);
}

inline const std::uint8_t* attributeData(const MadBuffer& mad) {
  return mad.data() + kAttributeDataOffset;
}
inline std::uint8_t* attributeData(MadBuffer& mad) { return mad.data() + kAttributeDataOffset; }

/// Decodes every (field, member) pair that `visit(struct, fn)` enumerates.
template <typename S, typename Visitor>
S decodeWith(const MadBuffer& mad, Visitor visit) {
  S s{};
  const std::uint8_t* data = attributeData(mad);
  visit(s, [data](MAD_FIELDS f, auto& member) {
    member = static_cast<std::remove_reference_t<decltype(member)>>(getField(data, f));
  });
  return s;
}

template <typename S, typename Visitor>
void encodeWith(MadBuffer& mad, const S& value, Visitor visit) {
  std::uint8_t* data = attributeData(mad);
  S copy = value;
  visit(copy, [data](MAD_FIELDS f, auto& member) {
    setField(data, f, static_cast<std::uint64_t>(member));
  });
}

}  // namespace ibfabric::mad::detail
