// Request parsing shared by the routes files (api/http/routes/): numbers, seconds, booleans and
// switch levels from the query string, and the node and port a path names by GUID and port
// number. A parser either returns the value or sends the 400/404 JSON error itself (the
// `Response&` overloads) so every route words the same mistake the same way. Pure functions.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

#include "discovery/topology.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace ibfabric::api {

/// A decimal unsigned integer, the whole text (no sign, no blanks).
std::optional<std::uint64_t> parseUint(const std::string& text);
/// A non-negative number of seconds (decimals allowed), the whole text.
std::optional<double> parseSeconds(const std::string& text);
/// A switch level by name (levelName) or number 0..8.
std::optional<int> parseLevel(const std::string& text);

/// Query parameter `name`, or `fallback` when absent.
std::string paramOr(const httplib::Request& req, const char* name, std::string fallback);

/// Query parameter `name` as a boolean: absent = false; "", true, 1, yes = true; false, 0, no =
/// false; anything else answers 400 "bad <name> (true|false): ..." and gives nullopt.
std::optional<bool> boolParam(const httplib::Request& req, const char* name,
                              httplib::Response& res);

/// Query parameter `limit`: `fallback` when absent; not a decimal answers 400 "bad limit: ...".
std::optional<std::uint64_t> limitParam(const httplib::Request& req, httplib::Response& res,
                                        std::uint64_t fallback);

/// The filter parameters of the list endpoints. Each returns false with the answer sent when the
/// parameter is present and wrong, else true with `out` set (left empty when it is absent).
/// `name` is one of `allowed`: else 400 "bad <name> (a|b|c): <value>".
bool choiceParam(const httplib::Request& req, const char* name,
                 std::initializer_list<const char*> allowed, std::string& out,
                 httplib::Response& res);
/// `level`: a switch level (parseLevel), else 400 "bad level: <value>".
bool levelParam(const httplib::Request& req, std::optional<int>& out, httplib::Response& res);
/// `rail`: a rail of `topology` (0..rails-1), else 400.
bool railParam(const httplib::Request& req, const Topology& topology, std::optional<int>& out,
               httplib::Response& res);
/// `node`: a node or port GUID of `topology` (400 not a GUID, 404 no such node).
bool nodeParam(const httplib::Request& req, const Topology& topology, const Node*& out,
               httplib::Response& res);
/// `host`: a host of `topology` by name (404 no such host); `out` its index.
bool hostParam(const httplib::Request& req, const Topology& topology,
               std::optional<std::uint32_t>& out, httplib::Response& res);

/// A node by its node GUID or the GUID of one of its ports.
const Node* nodeByGuid(const Topology& topology, const std::string& text);

/// The node and port a path names: req.matches[1] a GUID (node or port), req.matches[2] a port
/// number. nullopt with the answer sent: 400 not a GUID / not a port number, 404 no such node or
/// port.
struct PathPort {
  const Node* node;
  const Port* port;
  PortRef ref;
};
std::optional<PathPort> portFromPath(const Topology& topology, const httplib::Request& req,
                                     httplib::Response& res);

}  // namespace ibfabric::api
