#include "tests/fakes/fake_member_daemon.h"

namespace ibfabric::testing {

FakeMemberDaemon::FakeMemberDaemon() {
  const auto serve = [this](const httplib::Request& req, httplib::Response& res) {
    this->serve(req, res);
  };
  server_.Get(".*", serve);
  server_.Post(".*", serve);
  server_.Put(".*", serve);
  server_.Delete(".*", serve);
  port_ = server_.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  // stop() before the accept loop runs would be lost (httplib checks is_running()): wait for it,
  // bounded.
  for (int i = 0; i < 5000 && !server_.is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeMemberDaemon::~FakeMemberDaemon() { stop(); }

void FakeMemberDaemon::stop() {
  server_.stop();
  if (thread_.joinable()) thread_.join();
}

void FakeMemberDaemon::json(const std::string& method, const std::string& path, int status,
                            nlohmann::json body) {
  text(method, path, status, body.dump() + "\n", "application/json");
}

void FakeMemberDaemon::text(const std::string& method, const std::string& path, int status,
                            std::string text, std::string contentType) {
  handle(method, path, [status, text, contentType](const httplib::Request&, httplib::Response& r) {
    r.status = status;
    r.set_content(text, contentType);
  });
}

void FakeMemberDaemon::handle(const std::string& method, const std::string& path, Handler handler) {
  std::lock_guard lock(mu_);
  routes_[{method, path}] = std::move(handler);
}

void FakeMemberDaemon::setDelay(std::chrono::milliseconds delay) {
  std::lock_guard lock(mu_);
  delay_ = delay;
}

void FakeMemberDaemon::setMalformed(bool malformed) {
  std::lock_guard lock(mu_);
  malformed_ = malformed;
}

std::vector<FakeMemberDaemon::Seen> FakeMemberDaemon::requests() const {
  std::lock_guard lock(mu_);
  return seen_;
}

void FakeMemberDaemon::serve(const httplib::Request& req, httplib::Response& res) {
  Handler handler;
  std::chrono::milliseconds delay;
  bool malformed;
  {
    std::lock_guard lock(mu_);
    std::string query;
    for (const auto& [k, v] : req.params) query += (query.empty() ? "" : "&") + k + "=" + v;
    seen_.push_back({req.method, req.path, query, req.body, req.get_header_value("Authorization")});
    auto it = routes_.find({req.method, req.path});
    if (it != routes_.end()) handler = it->second;
    delay = delay_;
    malformed = malformed_;
  }
  if (delay.count() > 0) std::this_thread::sleep_for(delay);
  if (malformed) {
    res.status = 200;
    res.set_content("{not json", "application/json");
    return;
  }
  if (!handler) {
    res.status = 404;
    res.set_content(R"({"error":{"code":404,"message":"no route in the fake"}})",
                    "application/json");
    return;
  }
  handler(req, res);
}

}  // namespace ibfabric::testing
