#include "api/federation/member_client.h"

#include <httplib.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace ibfabric::api::federation {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kGrace = std::chrono::milliseconds(250);

std::string secondsText(std::chrono::milliseconds d) {
  const double s = std::chrono::duration<double>(d).count();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

/// "http://host:port" and the path prefix of a member URL ("" or "/prefix", no trailing '/').
std::pair<std::string, std::string> splitUrl(const std::string& url) {
  const std::size_t scheme = url.find("://");
  const std::size_t slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (slash == std::string::npos) return {url, ""};
  std::string prefix = url.substr(slash);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  return {url.substr(0, slash), prefix};
}

/// The blocking request (on a worker thread).
MemberReply perform(const MemberTarget& target, const MemberRequest& request) {
  MemberReply reply;
  const auto start = Clock::now();
  const auto [base, prefix] = splitUrl(target.url);
  httplib::Client client(base);
  const auto t = target.timeout;
  const auto sec = static_cast<time_t>(t.count() / 1000);
  const auto usec = static_cast<time_t>((t.count() % 1000) * 1000);
  client.set_connection_timeout(sec, usec);
  client.set_read_timeout(sec, usec);
  client.set_write_timeout(sec, usec);
  client.set_keep_alive(false);
  client.set_follow_location(false);
  if (!client.is_valid()) {
    reply.error = "bad URL " + target.url;
    return reply;
  }
  if (request.withToken && !target.token.empty()) client.set_bearer_token_auth(target.token);
  const std::string path = prefix + request.path;
  httplib::Result r{nullptr, httplib::Error::Unknown};
  if (request.method == "GET") {
    r = client.Get(path);
  } else if (request.method == "POST") {
    r = client.Post(path, request.body, "application/json");
  } else if (request.method == "PUT") {
    r = client.Put(path, request.body, "application/json");
  } else if (request.method == "DELETE") {
    r = client.Delete(path);
  } else {
    reply.error = "unsupported method " + request.method;
    return reply;
  }
  reply.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!r) {
    const auto e = r.error();
    reply.error =
        e == httplib::Error::Read || e == httplib::Error::Write
            ? "timed out or reset after " + secondsText(t) + " s (" + httplib::to_string(e) + ")"
        : e == httplib::Error::Connection ? "cannot connect to " + target.url
                                          : httplib::to_string(e);
    return reply;
  }
  reply.status = r->status;
  reply.text = r->body;
  reply.contentType = r->get_header_value("Content-Type");
  if (request.json) {
    reply.body = nlohmann::json::parse(r->body, nullptr, false);
    if (reply.body.is_discarded()) {
      reply.body = nullptr;
      reply.error = "malformed JSON from " + target.url + request.path + " (HTTP " +
                    std::to_string(r->status) + ")";
    }
  }
  return reply;
}

/// One request's result slot, shared by the caller and the worker (which may outlive it).
struct Slot {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<MemberReply> reply;
};

}  // namespace

std::string MemberReply::message() const {
  if (!error.empty()) return error;
  if (body.is_object() && body.contains("error") && body["error"].is_object() &&
      body["error"].contains("message") && body["error"]["message"].is_string())
    return body["error"]["message"].get<std::string>();
  return text.substr(0, text.find('\n'));
}

MemberReply askMember(const MemberTarget& target, const MemberRequest& request) {
  return askEach({target}, {request}).front();
}

std::vector<MemberReply> askAll(const std::vector<MemberTarget>& targets,
                                const MemberRequest& request) {
  return askEach(targets, std::vector<MemberRequest>(targets.size(), request));
}

std::vector<MemberReply> askEach(const std::vector<MemberTarget>& targets,
                                 const std::vector<MemberRequest>& requests) {
  std::vector<std::shared_ptr<Slot>> slots;
  const auto start = Clock::now();
  for (std::size_t i = 0; i < targets.size(); ++i) {
    auto slot = std::make_shared<Slot>();
    slots.push_back(slot);
    std::thread([slot, target = targets[i], request = requests.at(i)] {
      MemberReply r = perform(target, request);
      std::lock_guard lock(slot->mu);
      slot->reply = std::move(r);
      slot->cv.notify_all();
    }).detach();
  }
  std::vector<MemberReply> out;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    Slot& slot = *slots[i];
    std::unique_lock lock(slot.mu);
    const auto deadline = start + targets[i].timeout + kGrace;
    if (slot.cv.wait_until(lock, deadline, [&] { return slot.reply.has_value(); })) {
      out.push_back(std::move(*slot.reply));
    } else {
      MemberReply late;
      late.error = "timed out after " + secondsText(targets[i].timeout) + " s";
      late.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      out.push_back(std::move(late));
    }
  }
  return out;
}

}  // namespace ibfabric::api::federation
