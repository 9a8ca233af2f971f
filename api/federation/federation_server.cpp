#include "api/federation/federation_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "api/federation/job_routing.h"
#include "api/federation/member_client.h"
#include "api/federation/merged_events.h"
#include "api/federation/merged_exports.h"
#include "api/federation/merged_views.h"
#include "api/http/auth.h"
#include "api/http/http_json.h"
#include "api/http/list_cursor.h"

namespace ibfabric::api::federation {
namespace {

using nlohmann::json;
using Request = httplib::Request;
using Response = httplib::Response;

constexpr std::size_t kMaxLimit = 10000;

/// RFC 3986 percent-encoding of a query value or path segment.
std::string encoded(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

/// `path` with the request's query parameters but `drop`, plus `extra`.
std::string forwardPath(const std::string& path, const Request& req,
                        std::initializer_list<const char*> drop,
                        const std::vector<std::pair<std::string, std::string>>& extra = {}) {
  std::string query;
  auto add = [&query](const std::string& k, const std::string& v) {
    query += (query.empty() ? "?" : "&") + encoded(k) + "=" + encoded(v);
  };
  for (const auto& [k, v] : req.params) {
    if (std::find_if(drop.begin(), drop.end(), [&](const char* d) { return k == d; }) != drop.end())
      continue;
    add(k, v);
  }
  for (const auto& [k, v] : extra) add(k, v);
  return path + query;
}

std::optional<std::size_t> parseCount(const std::string& text) {
  std::size_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

/// `limit` (1..10000); nullopt when absent. false with the 400 sent when bad.
bool limitOf(const Request& req, Response& res, std::optional<std::size_t>& out) {
  if (!req.has_param("limit")) return true;
  auto v = parseCount(req.get_param_value("limit"));
  if (!v || *v == 0 || *v > kMaxLimit) {
    sendError(res, 400, "bad limit (1..10000): " + req.get_param_value("limit"));
    return false;
  }
  out = *v;
  return true;
}

bool truthy(const Request& req, const char* name) {
  if (!req.has_param(name)) return false;
  const std::string v = req.get_param_value(name);
  return v.empty() || v == "true" || v == "1" || v == "yes";
}

}  // namespace

class FederationServer::Routes {
 public:
  explicit Routes(MemberBoard& board) : board_(board), auth_(board.config().apiToken) {}

  void install(httplib::Server& s);
  void probe() { ask({"GET", "/api/v1/health"}, all(), false); }

 private:
  std::vector<std::size_t> all() const {
    std::vector<std::size_t> v(board_.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = i;
    return v;
  }
  /// The members `subnet=a,b` names (all without it); false with the 400 sent.
  bool selected(const Request& req, Response& res, std::vector<std::size_t>& out) const;
  /// One request to `members` (cached GETs when `cache`); their answers in that order.
  std::vector<SubnetAnswer> ask(const MemberRequest& request,
                                const std::vector<std::size_t>& members, bool cache = true);
  std::vector<SubnetAnswer> askEachOf(const std::vector<MemberRequest>& requests,
                                      const std::vector<std::size_t>& members, bool cache);
  SubnetAnswer answerOf(std::size_t member, const MemberReply& reply);

  void health(const Request& req, Response& res, bool readyProbe);
  void fabric(const Request& req, Response& res);
  void list(const Request& req, Response& res, const std::string& path, const char* field,
            bool withCount);
  void sortedLinks(const Request& req, Response& res, const std::vector<std::size_t>& members,
                   std::optional<std::size_t> limit);
  void findOne(const Request& req, Response& res, const std::string& path, const char* what);
  void mergedArray(const Request& req, Response& res, const std::string& path, const char* field);
  void events(const Request& req, Response& res);
  std::optional<std::vector<SubnetAnswer>> askExport(const Request& req, Response& res,
                                                     const std::vector<std::size_t>& members,
                                                     const std::string& path);
  void slurm(const Request& req, Response& res);
  void volcano(const Request& req, Response& res);
  void placement(const Request& req, Response& res);
  void allocate(const Request& req, Response& res);
  void release(const Request& req, Response& res);
  /// The member holding pool allocation `job`, from a fan-out GET (nullopt: none).
  std::optional<std::size_t> allocationHolder(const std::string& job,
                                              std::vector<SubnetAnswer>* answers = nullptr);

  MemberBoard& board_;
  BearerAuth auth_;
};

bool FederationServer::Routes::selected(const Request& req, Response& res,
                                        std::vector<std::size_t>& out) const {
  out.clear();
  if (!req.has_param("subnet")) {
    out = all();
    return true;
  }
  const std::string names = req.get_param_value("subnet");
  std::size_t start = 0;
  while (start <= names.size()) {
    const std::size_t comma = names.find(',', start);
    const std::string one =
        names.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto m = board_.find(one);
    if (!m) {
      sendError(res, 400, "unknown subnet: " + one);
      return false;
    }
    if (std::find(out.begin(), out.end(), *m) == out.end()) out.push_back(*m);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::sort(out.begin(), out.end());
  return true;
}

SubnetAnswer FederationServer::Routes::answerOf(std::size_t member, const MemberReply& reply) {
  SubnetAnswer a;
  a.subnet = board_.name(member);
  a.status = reply.status;
  a.body = reply.body;
  a.text = reply.text;
  a.available = reply.answered() && reply.status != 503;
  if (!a.available) a.problem = board_.unavailableJson(member, reply);
  return a;
}

std::vector<SubnetAnswer> FederationServer::Routes::askEachOf(
    const std::vector<MemberRequest>& requests, const std::vector<std::size_t>& members,
    bool cache) {
  std::vector<std::optional<MemberReply>> replies(members.size());
  std::vector<MemberTarget> targets;
  std::vector<MemberRequest> toSend;
  std::vector<std::size_t> sentFor;
  for (std::size_t k = 0; k < members.size(); ++k) {
    const bool cacheable = cache && requests[k].method == "GET";
    if (cacheable) replies[k] = board_.cached(members[k], requests[k].path);
    if (replies[k]) continue;
    targets.push_back(board_.target(members[k]));
    toSend.push_back(requests[k]);
    sentFor.push_back(k);
  }
  const auto got = askEach(targets, toSend);
  for (std::size_t j = 0; j < got.size(); ++j) {
    const std::size_t k = sentFor[j];
    board_.record(members[k], got[j]);
    if (toSend[j].method == "GET" && got[j].status == 200)
      board_.store(members[k], toSend[j].path, got[j]);
    if (toSend[j].path.rfind("/api/v1/health", 0) == 0 && got[j].answered())
      board_.learnHealth(members[k], got[j].body);
    replies[k] = got[j];
  }
  std::vector<SubnetAnswer> out;
  for (std::size_t k = 0; k < members.size(); ++k) out.push_back(answerOf(members[k], *replies[k]));
  return out;
}

std::vector<SubnetAnswer> FederationServer::Routes::ask(const MemberRequest& request,
                                                        const std::vector<std::size_t>& members,
                                                        bool cache) {
  return askEachOf(std::vector<MemberRequest>(members.size(), request), members, cache);
}

void FederationServer::Routes::health(const Request&, Response& res, bool readyProbe) {
  const auto members = all();
  const auto answers = ask({"GET", "/api/v1/health"}, members, false);
  std::vector<json> info;
  for (std::size_t m : members) info.push_back(board_.memberJson(m));
  json body = mergedHealth(answers, info);
  const bool up = body["available"].get<std::size_t>() > 0;
  const bool ready = body["ready"].get<std::size_t>() > 0;
  body["live"] = true;
  sendJson(res, body, (readyProbe ? ready : up) ? 200 : 503);
}

void FederationServer::Routes::fabric(const Request& req, Response& res) {
  std::vector<std::size_t> members;
  if (!selected(req, res, members)) return;
  json body = mergedFabric(ask({"GET", "/api/v1/topology"}, members));
  sendJson(res, body, body["available"].get<std::size_t>() > 0 ? 200 : 503);
}

void FederationServer::Routes::sortedLinks(const Request& req, Response& res,
                                           const std::vector<std::size_t>& members,
                                           std::optional<std::size_t> limit) {
  const std::string sort = req.get_param_value("sort");
  const auto answers = ask({"GET", forwardPath("/api/v1/links", req, {"subnet"})}, members);
  std::vector<std::pair<double, json>> ranked;
  json unavailable = json::array();
  for (const auto& a : answers) {
    if (!a.available) {
      unavailable.push_back(a.problem);
      continue;
    }
    if (a.status == 400) return sendJson(res, a.body, 400);
    if (a.status != 200) continue;
    for (auto& l : tagged(a.body.value("links", json::array()), a.subnet))
      ranked.emplace_back(linkSortMetric(l, sort), l);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  if (limit && ranked.size() > *limit) ranked.resize(*limit);
  json links = json::array();
  for (auto& r : ranked) links.push_back(std::move(r.second));
  const std::size_t count = links.size();
  sendJson(res, {{"links", links}, {"count", count}, {"unavailable", unavailable}});
}

void FederationServer::Routes::list(const Request& req, Response& res, const std::string& path,
                                    const char* field, bool withCount) {
  std::vector<std::size_t> members;
  if (!selected(req, res, members)) return;
  std::optional<std::size_t> limit;
  if (!limitOf(req, res, limit)) return;
  if (withCount && req.has_param("sort") && !req.get_param_value("sort").empty()) {
    if (req.has_param("cursor"))
      return sendError(res, 400, "bad cursor: a sorted list is a ranking, not paged");
    return sortedLinks(req, res, members, limit);
  }
  const std::string listName = "federation:" + path;
  json items = json::array();
  json unavailable = json::array();
  std::size_t notFound = 0, answered = 0;
  std::optional<std::string> lastBadRequest;
  json nextCursor;
  // Collects one member's answer; false when the request is bad (400 sent by the caller).
  const auto take = [&](const SubnetAnswer& a) {
    if (!a.available) {
      unavailable.push_back(a.problem);
      return;
    }
    ++answered;
    if (a.status == 404) {  // a node= or host= filter naming something of another subnet
      ++notFound;
      return;
    }
    if (a.status == 400) {
      lastBadRequest = a.body.is_object() ? safeDump(a.body) : a.text;
      return;
    }
    if (a.status != 200) {
      json p = {{"subnet", a.subnet},
                {"available", false},
                {"error", "HTTP " + std::to_string(a.status)}};
      unavailable.push_back(p);
      return;
    }
    for (auto& item : tagged(a.body.value(field, json::array()), a.subnet))
      items.push_back(std::move(item));
  };
  if (!limit && !req.has_param("cursor")) {
    for (const auto& a : ask({"GET", forwardPath(path, req, {"subnet"})}, members)) take(a);
  } else {
    // Page across subnets in configuration order: the cursor names a subnet and that member's
    // own cursor ("" = its start).
    std::size_t pos = 0;
    std::string memberCursor;
    if (req.has_param("cursor")) {
      std::string error;
      auto key = decodeCursor(listName, req.get_param_value("cursor"), error);
      if (!key || !key->is_object() || !(*key)["s"].is_string() || !(*key)["c"].is_string())
        return sendError(res, 400,
                         "bad cursor: " + (error.empty() ? "not a federation cursor" : error));
      auto m = board_.find((*key)["s"].get<std::string>());
      auto it = m ? std::find(members.begin(), members.end(), *m) : members.end();
      if (it == members.end())
        return sendError(res, 400,
                         "bad cursor: subnet " + (*key)["s"].get<std::string>() +
                             " is not one of the selected subnets");
      pos = static_cast<std::size_t>(it - members.begin());
      memberCursor = (*key)["c"].get<std::string>();
    }
    for (; pos < members.size(); ++pos, memberCursor.clear()) {
      const std::size_t remaining = limit ? *limit - std::min(*limit, items.size()) : kMaxLimit;
      if (remaining == 0) {
        nextCursor = encodeCursor(listName, json{{"s", board_.name(members[pos])}, {"c", ""}});
        break;
      }
      std::vector<std::pair<std::string, std::string>> extra = {
          {"limit", std::to_string(remaining)}};
      if (!memberCursor.empty()) extra.emplace_back("cursor", memberCursor);
      const auto a =
          ask({"GET", forwardPath(path, req, {"subnet", "limit", "cursor"}, extra)}, {members[pos]})
              .front();
      take(a);
      if (lastBadRequest) break;
      if (a.available && a.status == 200 && a.body.contains("next_cursor") &&
          a.body["next_cursor"].is_string()) {
        nextCursor = encodeCursor(
            listName, json{{"s", a.subnet}, {"c", a.body["next_cursor"].get<std::string>()}});
        break;
      }
    }
  }
  if (lastBadRequest) {
    res.status = 400;
    return res.set_content(*lastBadRequest + "\n", "application/json");
  }
  if (answered > 0 && notFound == answered)
    return sendJson(res,
                    {{"error", {{"code", 404}, {"message", "not found in any available subnet"}}},
                     {"unavailable", unavailable}},
                    404);
  json body = {{field, items}, {"unavailable", unavailable}};
  if (withCount) body["count"] = items.size();
  if (!nextCursor.is_null()) body["next_cursor"] = nextCursor;
  sendJson(res, body, answered == 0 && !members.empty() ? 503 : 200);
}

void FederationServer::Routes::findOne(const Request& req, Response& res, const std::string& path,
                                       const char* what) {
  std::vector<std::size_t> members;
  if (!selected(req, res, members)) return;
  const auto answers = ask({"GET", forwardPath(path, req, {"subnet"})}, members);
  for (const auto& a : answers) {
    if (a.available && a.status == 200 && a.body.is_object()) {
      json body = a.body;
      body["subnet"] = a.subnet;
      return sendJson(res, body);
    }
  }
  const json unavailable = unavailableOf(answers);
  const int status = unavailable.size() == answers.size() ? 503 : 404;
  sendJson(
      res,
      {{"error",
        {{"code", status}, {"message", std::string("no ") + what + " in the available subnets"}}},
       {"unavailable", unavailable}},
      status);
}

void FederationServer::Routes::mergedArray(const Request& req, Response& res,
                                           const std::string& path, const char* field) {
  std::vector<std::size_t> members;
  if (!selected(req, res, members)) return;
  const auto answers = ask({"GET", forwardPath(path, req, {"subnet"})}, members);
  json items = json::array();
  std::size_t answered = 0;
  for (const auto& a : answers) {
    if (!a.available) continue;
    ++answered;
    if (a.status != 200) continue;  // e.g. 404: no pool on that subnet
    for (auto& item : tagged(a.body.value(field, json::array()), a.subnet))
      items.push_back(std::move(item));
  }
  sendJson(res, {{field, items}, {"unavailable", unavailableOf(answers)}},
           answered == 0 && !members.empty() ? 503 : 200);
}

void FederationServer::Routes::events(const Request& req, Response& res) {
  std::vector<std::size_t> members;
  if (!selected(req, res, members)) return;
  auto cursor = parseEventCursor(req.has_param("since") ? req.get_param_value("since") : "");
  if (!cursor)
    return sendError(res, 400,
                     "bad since (an id, or subnet:id,...): " + req.get_param_value("since"));
  std::optional<std::size_t> limit;
  if (!limitOf(req, res, limit)) return;
  const std::size_t n = limit.value_or(1000);
  std::vector<MemberRequest> requests;
  for (std::size_t m : members) {
    const auto since = cursor->of(board_.name(m));
    requests.push_back(
        {"GET", forwardPath("/api/v1/events", req, {"subnet", "since", "limit", "wait"},
                            {{"since", std::to_string(since)}, {"limit", std::to_string(n)}})});
  }
  const auto answers = askEachOf(requests, members, true);
  for (const auto& a : answers)
    if (a.available && a.status == 400) return sendJson(res, a.body, 400);
  json body = mergeEvents(answers, *cursor, n);
  if (req.has_param("wait"))
    body["warnings"] = json::array({"wait is not supported through the federation: poll"});
  const bool none = !answers.empty() && std::none_of(answers.begin(), answers.end(),
                                                     [](const auto& a) { return a.available; });
  sendJson(res, body, none ? 503 : 200);
}

namespace {

/// Sends a merged text export, or 503 when a subnet is missing and `partial` is not set.
void sendExport(Response& res, const std::vector<SubnetAnswer>& answers, bool partial,
                const std::string& text, const char* contentType) {
  const json unavailable = unavailableOf(answers);
  const bool none = unavailable.size() == answers.size();
  if (none || (!unavailable.empty() && !partial)) {
    return sendJson(res,
                    {{"error",
                      {{"code", 503},
                       {"message", none ? "no subnet available"
                                        : "a subnet is unavailable: its hosts would be missing "
                                          "(partial=true exports the others)"}}},
                     {"unavailable", unavailable}},
                    503);
  }
  std::string names;
  for (const auto& u : unavailable) names += (names.empty() ? "" : ",") + u.value("subnet", "");
  if (!names.empty()) res.set_header("X-Ibfabric-Unavailable-Subnets", names);
  res.set_content(text, contentType);
}

/// A member's non-200 export answer (409 "no hosts", 400) as an unavailable subnet.
std::vector<SubnetAnswer> exportsOnly(std::vector<SubnetAnswer> answers) {
  for (auto& a : answers) {
    if (!a.available || a.status == 200) continue;
    json body = json::parse(a.text, nullptr, false);
    std::string message = "HTTP " + std::to_string(a.status);
    if (body.is_object() && body.contains("error") && body["error"].is_object())
      message += ": " + body["error"].value("message", "");
    a.available = false;
    a.problem = {{"subnet", a.subnet}, {"available", true}, {"error", message}};
  }
  return answers;
}

}  // namespace

/// An export of every selected member as text; a member's 400 (a bad parameter) is passed on
/// as it is (nullopt, sent), other non-200 answers make their subnet unavailable.
std::optional<std::vector<SubnetAnswer>> FederationServer::Routes::askExport(
    const Request& req, Response& res, const std::vector<std::size_t>& members,
    const std::string& path) {
  MemberRequest r{"GET", forwardPath(path, req, {"subnet", "partial"})};
  r.json = false;
  const auto raw = ask(r, members);
  for (const auto& a : raw)
    if (a.available && a.status == 400) {
      res.status = 400;
      res.set_content(a.text, "application/json");
      return std::nullopt;
    }
  return exportsOnly(raw);
}

void FederationServer::Routes::slurm(const Request& req, Response& res) {
  std::vector<std::size_t> members;
  if (!selected(req, res, members)) return;
  if (req.has_param("format") && req.get_param_value("format") != "conf")
    return sendError(res, 400, "bad format: the federation merges format=conf (tree or block)");
  const auto answers = askExport(req, res, members, "/api/v1/export/slurm-topology");
  if (!answers) return;
  sendExport(res, *answers, truthy(req, "partial"), mergedSlurmConf(*answers), "text/plain");
}

void FederationServer::Routes::volcano(const Request& req, Response& res) {
  std::vector<std::size_t> members;
  if (!selected(req, res, members)) return;
  const auto answers = askExport(req, res, members, "/api/v1/export/volcano-hypernodes");
  if (!answers) return;
  sendExport(res, *answers, truthy(req, "partial"), mergedHyperNodes(*answers), "application/yaml");
}

void FederationServer::Routes::placement(const Request& req, Response& res) {
  std::vector<std::size_t> members;
  if (!selected(req, res, members)) return;
  json body = json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !body.is_object())
    return sendJson(res,
                    {{"error",
                      {{"code", 400},
                       {"message", "bad JSON: the body must be a JSON object"},
                       {"reason", "invalid"}}}},
                    400);
  MemberRequest r{"POST", "/api/v1/placement", safeDump(body)};
  const PlacementRouting routed = routePlacement(ask(r, members, false), board_.config().placement);
  if (routed.chosen)
    spdlog::debug("placement routed to subnet {}", routed.body.value("subnet", ""));
  sendJson(res, routed.body, routed.status);
}

std::optional<std::size_t> FederationServer::Routes::allocationHolder(
    const std::string& job, std::vector<SubnetAnswer>* answersOut) {
  const auto members = all();
  auto answers = ask({"GET", "/api/v1/pool/allocations/" + encoded(job)}, members, false);
  std::optional<std::size_t> holder;
  for (std::size_t k = 0; k < answers.size() && !holder; ++k)
    if (answers[k].available && answers[k].status == 200) holder = members[k];
  if (answersOut) *answersOut = std::move(answers);
  return holder;
}

void FederationServer::Routes::allocate(const Request& req, Response& res) {
  if (!auth_.authorize(req, res)) return;
  json body = json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("job_id") ||
      !body["job_id"].is_string())
    return sendError(res, 400, "the body must be a JSON object with a job_id (string)");
  const std::string job = body["job_id"];
  const std::string text = safeDump(body);
  MemberRequest post{"POST", "/api/v1/pool/allocations", text};
  post.withToken = true;
  const auto forward = [&](std::size_t m) {
    auto a = ask(post, {m}, false).front();
    return a;
  };
  const auto sendFrom = [&](const SubnetAnswer& a, json attempts) {
    json out = a.body.is_object() ? a.body : json::object();
    out["subnet"] = a.subnet;
    if (out.contains("allocation") && out["allocation"].is_object())
      out["allocation"]["subnet"] = a.subnet;
    if (!attempts.empty()) out["attempts"] = attempts;
    sendJson(res, out, a.status);
  };
  // The same job_id again goes where it went (the member answers 200 or 409 itself).
  if (auto holder = allocationHolder(job)) {
    const auto a = forward(*holder);
    if (!a.available)
      return sendJson(
          res,
          {{"error",
            {{"code", 503}, {"message", "the subnet holding job " + job + " is unavailable"}}},
           {"unavailable", json::array({a.problem})}},
          503);
    return sendFrom(a, json::array());
  }
  double gpus = body.value("gpus", json(0)).is_number() ? body["gpus"].get<double>() : 0.0;
  if (body.contains("sharing") && body["sharing"] != "exclusive") gpus = 0;  // MIG instances
  const auto members = all();
  const auto usage = ask({"GET", "/api/v1/pool"}, members, false);
  const auto order = allocationCandidates(usage, gpus, board_.config().placement);
  json attempts = json::array();
  for (const auto& u : usage) {
    if (!u.available) {
      json p = u.problem;
      p["result"] = "unavailable";
      attempts.push_back(p);
    } else if (u.status != 200) {
      attempts.push_back({{"subnet", u.subnet}, {"result", "no pool"}});
    } else if (std::find(order.begin(), order.end(), &u - usage.data()) == order.end()) {
      attempts.push_back({{"subnet", u.subnet},
                          {"result", "not enough free GPUs"},
                          {"free_gpus", u.body.value("free_gpus", json())}});
    }
  }
  for (std::size_t k : order) {
    const auto a = forward(members[k]);
    if (a.available && (a.status == 200 || a.status == 201)) return sendFrom(a, attempts);
    if (a.available && (a.status == 400 || a.status == 401 || a.status == 403))
      return sendJson(res, a.body, a.status);
    attempts.push_back(
        {{"subnet", a.subnet},
         {"result", a.available ? "refused" : "unavailable"},
         {"status", a.status},
         {"message", a.available ? a.body.value("error", json::object()).value("message", "")
                                 : a.problem.value("error", "")}});
  }
  sendJson(res,
           {{"error",
             {{"code", 409},
              {"message", "no subnet can allocate job " + job + " (jobs never span subnets)"}}},
            {"attempts", attempts}},
           409);
}

void FederationServer::Routes::release(const Request& req, Response& res) {
  if (!auth_.authorize(req, res)) return;
  const std::string job = req.matches[1];
  std::vector<SubnetAnswer> answers;
  auto holder = allocationHolder(job, &answers);
  if (!holder)
    return sendJson(res,
                    {{"error", {{"code", 404}, {"message", "no allocation for job " + job}}},
                     {"unavailable", unavailableOf(answers)}},
                    404);
  MemberRequest del{"DELETE", "/api/v1/pool/allocations/" + encoded(job)};
  del.withToken = true;
  auto a = ask(del, {*holder}, false).front();
  if (!a.available)
    return sendJson(
        res,
        {{"error",
          {{"code", 503}, {"message", "the subnet holding job " + job + " is unavailable"}}},
         {"unavailable", json::array({a.problem})}},
        503);
  json out = a.body.is_object() ? a.body : json::object();
  out["subnet"] = a.subnet;
  sendJson(res, out, a.status);
}

void FederationServer::Routes::install(httplib::Server& s) {
  s.Get("/api/v1/health", [this](const Request& q, Response& r) { health(q, r, false); });
  s.Get("/api/v1/health/ready", [this](const Request& q, Response& r) { health(q, r, true); });
  s.Get("/api/v1/health/live", [](const Request&, Response& r) { sendJson(r, {{"live", true}}); });
  s.Get("/api/v1/subnets", [this](const Request&, Response& r) {
    json out = json::array();
    for (std::size_t m : all()) out.push_back(board_.memberJson(m));
    sendJson(r, {{"subnets", out}});
  });
  s.Get("/api/v1/fabric", [this](const Request& q, Response& r) { fabric(q, r); });
  s.Get("/api/v1/topology", [this](const Request& q, Response& r) { fabric(q, r); });
  s.Get("/api/v1/hosts",
        [this](const Request& q, Response& r) { list(q, r, "/api/v1/hosts", "hosts", false); });
  s.Get("/api/v1/links",
        [this](const Request& q, Response& r) { list(q, r, "/api/v1/links", "links", true); });
  s.Get(R"(/api/v1/hosts/([^/]+))", [this](const Request& q, Response& r) {
    findOne(q, r, "/api/v1/hosts/" + encoded(q.matches[1]), "such host");
  });
  s.Get("/api/v1/events", [this](const Request& q, Response& r) { events(q, r); });
  s.Get("/api/v1/export/slurm-topology", [this](const Request& q, Response& r) { slurm(q, r); });
  s.Get("/api/v1/export/volcano-hypernodes",
        [this](const Request& q, Response& r) { volcano(q, r); });
  s.Post("/api/v1/placement", [this](const Request& q, Response& r) { placement(q, r); });
  s.Get("/api/v1/pool", [this](const Request& q, Response& r) {
    std::vector<std::size_t> members;
    if (!selected(q, r, members)) return;
    json body = mergedPoolUsage(ask({"GET", "/api/v1/pool"}, members));
    sendJson(r, body, body["unavailable"].size() == members.size() && !members.empty() ? 503 : 200);
  });
  s.Get("/api/v1/pool/hosts", [this](const Request& q, Response& r) {
    mergedArray(q, r, "/api/v1/pool/hosts", "hosts");
  });
  s.Get(R"(/api/v1/pool/hosts/([^/]+))", [this](const Request& q, Response& r) {
    findOne(q, r, "/api/v1/pool/hosts/" + encoded(q.matches[1]), "such pool host");
  });
  s.Get("/api/v1/pool/allocations", [this](const Request& q, Response& r) {
    mergedArray(q, r, "/api/v1/pool/allocations", "allocations");
  });
  s.Get(R"(/api/v1/pool/allocations/([^/]+))", [this](const Request& q, Response& r) {
    findOne(q, r, "/api/v1/pool/allocations/" + encoded(q.matches[1]), "such allocation");
  });
  s.Post("/api/v1/pool/allocations", [this](const Request& q, Response& r) { allocate(q, r); });
  s.Delete(R"(/api/v1/pool/allocations/([^/]+))",
           [this](const Request& q, Response& r) { release(q, r); });
  s.set_error_handler([](const Request& q, Response& r) {
    if (!r.body.empty()) return;
    sendError(r, r.status,
              r.status == 404 ? "no such path in the federation: " + q.path
                              : "HTTP " + std::to_string(r.status));
  });
  s.set_exception_handler([](const Request&, Response& r, std::exception_ptr ep) {
    std::string what = "unknown";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    spdlog::error("federation: {}", what);
    sendError(r, 500, "internal error: " + what);
  });
}

FederationServer::FederationServer(FederationConfig config)
    : board_(std::move(config)),
      server_(std::make_unique<httplib::Server>()),
      routes_(std::make_unique<Routes>(board_)) {
  routes_->install(*server_);
}

FederationServer::~FederationServer() { stop(); }

int FederationServer::bind(const std::string& host, int port) {
  if (port == 0) return server_->bind_to_any_port(host);
  return server_->bind_to_port(host, port) ? port : -1;
}

void FederationServer::run() { server_->listen_after_bind(); }

void FederationServer::stop() {
  if (server_) server_->stop();
}

void FederationServer::probeMembers() { routes_->probe(); }

}  // namespace ibfabric::api::federation
