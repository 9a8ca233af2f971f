#include "api/http/list_cursor.h"

#include <httplib.h>

#include <array>
#include <cstdint>

#include "api/http/http_json.h"
#include "api/http/request_params.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// FNV-1a 64 of the list and the key, as 16 hex digits.
std::string checksum(std::string_view list, const json& key) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  const auto mix = [&h](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 0x100000001b3ull;
    }
  };
  mix("ibfabric.cursor/1\n");
  mix(list);
  mix("\n");
  mix(safeDump(key));
  static constexpr char hex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[i] = hex[h & 15];
  return out;
}

}  // namespace

std::string base64UrlEncode(std::string_view data) {
  std::string out;
  out.reserve((data.size() * 4 + 2) / 3);
  std::uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : data) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(acc >> bits) & 63]);
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(acc << (6 - bits)) & 63]);
  return out;
}

std::optional<std::string> base64UrlDecode(std::string_view text) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  static const std::array<int, 256> value = [] {
    std::array<int, 256> v{};
    v.fill(-1);
    for (int i = 0; i < 64; ++i) v[static_cast<unsigned char>(kAlphabet[i])] = i;
    return v;
  }();
  if (text.size() % 4 == 1) return std::nullopt;  // no encoding ends with one character
  std::string out;
  out.reserve(text.size() * 3 / 4);
  std::uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : text) {
    const int v = value[c];
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

std::string encodeCursor(std::string_view list, const json& key) {
  const json c = {{"k", key}, {"l", list}, {"s", checksum(list, key)}};
  return base64UrlEncode(safeDump(c));
}

std::optional<json> decodeCursor(std::string_view list, std::string_view cursor,
                                 std::string& error) {
  auto text = base64UrlDecode(cursor);
  if (!text || cursor.empty()) {
    error = "not base64url";
    return std::nullopt;
  }
  const json c = json::parse(*text, nullptr, false);
  if (c.is_discarded() || !c.is_object() || !c.contains("k") || !c["l"].is_string() ||
      !c["s"].is_string()) {
    error = "not a cursor of this API";
    return std::nullopt;
  }
  const std::string of = c["l"];
  if (checksum(of, c["k"]) != c["s"]) {
    error = "checksum mismatch (the cursor was edited or cut)";
    return std::nullopt;
  }
  if (of != list) {
    error = "a cursor of " + of + ", not of " + std::string(list);
    return std::nullopt;
  }
  return c["k"];
}

std::optional<PageRequest> pageRequest(const httplib::Request& req, httplib::Response& res,
                                       std::string_view list) {
  PageRequest p;
  if (req.has_param("limit")) {
    const std::string text = req.get_param_value("limit");
    auto v = parseUint(text);
    if (!v || *v == 0 || *v > kMaxPageLimit) {
      sendError(res, 400, "bad limit (1.." + std::to_string(kMaxPageLimit) + "): " + text);
      return std::nullopt;
    }
    p.limit = static_cast<std::size_t>(*v);
  }
  if (req.has_param("cursor")) {
    std::string why;
    p.after = decodeCursor(list, req.get_param_value("cursor"), why);
    if (!p.after) {
      sendError(res, 400, "bad cursor: " + why);
      return std::nullopt;
    }
  }
  return p;
}

void sendPage(httplib::Response& res, const char* field, json items, bool withCount, bool more,
              std::string_view list, const json& lastKey) {
  json body = json::object();
  if (withCount) body["count"] = items.size();
  body[field] = std::move(items);
  if (more) body["next_cursor"] = encodeCursor(list, lastKey);
  sendJson(res, body);
}

void sendBadCursorKey(httplib::Response& res) {
  sendError(res, 400, "bad cursor: its key does not name an item of this list");
}

}  // namespace ibfabric::api
