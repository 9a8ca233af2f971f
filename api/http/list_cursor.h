// Paging of the REST list endpoints (/links, /nodes, /switches, /hosts): the `limit` and `cursor`
// query parameters and the opaque cursor a page hands out as `next_cursor`.
//
// A cursor names a position by the stable key of the last item a page returned (a link by its
// `a` end, a node by its type and GUID, a host by its name), never by an index, so it stays
// valid when a new snapshot is published between two pages: the next page starts after that key
// in the new snapshot's key order, and an item is skipped or repeated only if it was added or
// removed in between. Text: base64url (no padding) of {"k": <key>, "l": <list>, "s": <checksum>};
// the checksum (FNV-1a, not a secret) catches a cursor that was edited or cut, the list name a
// cursor of another endpoint. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace ibfabric::api {

/// Largest `limit` a list endpoint takes (a larger one, and 0, are answered 400).
inline constexpr std::size_t kMaxPageLimit = 10000;

/// The cursor that continues `list` after the item with `key`.
std::string encodeCursor(std::string_view list, const nlohmann::json& key);
/// The key in `cursor`, or nullopt with `error` set ("not base64url", "not a cursor",
/// "a cursor of /api/v1/nodes", "checksum mismatch").
std::optional<nlohmann::json> decodeCursor(std::string_view list, std::string_view cursor,
                                           std::string& error);

/// base64url without padding (RFC 4648 section 5); decoding also accepts padding and gives
/// nullopt on any other character.
std::string base64UrlEncode(std::string_view data);
std::optional<std::string> base64UrlDecode(std::string_view text);

struct PageRequest {
  /// Items per page; nullopt: no limit (the whole list from the cursor on).
  std::optional<std::size_t> limit;
  /// The key of the last item of the previous page; nullopt: from the start.
  std::optional<nlohmann::json> after;
};

/// The `limit` (1..kMaxPageLimit) and `cursor` (of `list`) parameters; nullopt with the 400 sent:
/// "bad limit (1..10000): x", "bad cursor: <why>".
std::optional<PageRequest> pageRequest(const httplib::Request& req, httplib::Response& res,
                                       std::string_view list);

/// The positions of one page: of [begin, end) (a list in key order), the first `limit` (all
/// without a limit) that `keep(position)` accepts; `more` when another accepted one follows.
struct PageSlice {
  std::vector<std::size_t> positions;
  bool more = false;
};
template <typename Keep>
PageSlice slicePage(std::size_t begin, std::size_t end, std::optional<std::size_t> limit,
                    Keep&& keep) {
  PageSlice p;
  for (std::size_t i = begin; i < end; ++i) {
    if (!keep(i)) continue;
    if (limit && p.positions.size() == *limit) {
      p.more = true;
      break;
    }
    p.positions.push_back(i);
  }
  return p;
}

/// Sends {<field>: items, "next_cursor": encodeCursor(list, lastKey)} (the cursor only when
/// `more`), plus "count": items.size() when `withCount`.
void sendPage(httplib::Response& res, const char* field, nlohmann::json items, bool withCount,
              bool more, std::string_view list, const nlohmann::json& lastKey);

/// The answer for a cursor whose key does not have the list's shape (it passed the checksum,
/// so it comes from another version of the daemon): 400 "bad cursor: ...".
void sendBadCursorKey(httplib::Response& res);

}  // namespace ibfabric::api
