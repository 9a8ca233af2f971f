#include "api/osm/osm_events.h"

#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

namespace ibfabric::api {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 8> kTypeNames = {
    "hello",      "trap",         "subnet_up",   "heavy_sweep_done", "ucast_routing_done",
    "lft_change", "state_change", "port_errors",
};

[[noreturn]] void fail(const std::string& message) { throw OsmEventError(message); }

const json* field(const json& j, const char* name, bool required) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) {
    if (required) fail(std::string("missing field \"") + name + "\"");
    return nullptr;
  }
  return &*it;
}

std::uint64_t unsignedField(const json& j, const char* name, bool required, std::uint64_t max,
                            std::uint64_t fallback = 0) {
  const json* v = field(j, name, required);
  if (!v) return fallback;
  if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<std::int64_t>() >= 0))
    fail(std::string("field \"") + name + "\" must be a non-negative integer, got " + v->dump());
  const auto x = v->get<std::uint64_t>();
  if (x > max) {
    fail(std::string("field \"") + name + "\" out of range (" + std::to_string(x) + " > " +
         std::to_string(max) + ")");
  }
  return x;
}

std::string stringField(const json& j, const char* name, bool required) {
  const json* v = field(j, name, required);
  if (!v) return {};
  if (!v->is_string())
    fail(std::string("field \"") + name + "\" must be a string, got " + v->dump());
  return v->get<std::string>();
}

Guid guidField(const json& j, const char* name) {
  const std::string text = stringField(j, name, true);
  auto g = parseGuid(text);
  if (!g) fail(std::string("field \"") + name + "\" is not a GUID: \"" + text + "\"");
  return *g;
}

std::string errnoText(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

std::string_view toString(OsmEventType t) { return kTypeNames.at(static_cast<std::size_t>(t)); }

std::optional<OsmEventType> parseOsmEventType(std::string_view text) {
  for (std::size_t i = 0; i < kTypeNames.size(); ++i)
    if (kTypeNames[i] == text) return static_cast<OsmEventType>(i);
  return std::nullopt;
}

OsmEvent parseOsmEvent(std::string_view line) {
  if (line.size() > kMaxOsmLineBytes)
    fail("line too long (" + std::to_string(line.size()) + " bytes)");
  json j = json::parse(line.begin(), line.end(), nullptr, false);
  if (j.is_discarded()) fail("not JSON");
  if (!j.is_object()) fail("not a JSON object");
  OsmEvent e;
  const std::string typeName = stringField(j, "type", true);
  auto type = parseOsmEventType(typeName);
  if (!type) fail("unknown event type \"" + typeName + "\"");
  e.type = *type;
  e.seq = unsignedField(j, "seq", true, std::numeric_limits<std::uint64_t>::max());
  const json* t = field(j, "time", true);
  if (!t->is_number()) fail("field \"time\" must be a number, got " + t->dump());
  e.time = t->get<double>();
  e.dropped = unsignedField(j, "dropped", true, std::numeric_limits<std::uint64_t>::max());

  switch (e.type) {
    case OsmEventType::kHello:
      e.osmVersion = stringField(j, "osm_version", true);
      e.pluginVersion = stringField(j, "plugin_version", false);
      e.smState = stringField(j, "sm_state", false);
      break;
    case OsmEventType::kTrap: {
      e.trapNumber = static_cast<std::uint16_t>(unsignedField(j, "trap", true, 0xFFFF));
      e.issuerLid = Lid{static_cast<std::uint16_t>(unsignedField(j, "issuer_lid", true, 0xFFFF))};
      if (field(j, "lid", false))
        e.lid = Lid{static_cast<std::uint16_t>(unsignedField(j, "lid", true, 0xFFFF))};
      if (field(j, "port", false))
        e.port = PortNum{static_cast<std::uint8_t>(unsignedField(j, "port", true, 0xFF))};
      break;
    }
    case OsmEventType::kSubnetUp:
    case OsmEventType::kHeavySweepDone:
      break;
    case OsmEventType::kUcastRoutingDone:
      e.reason = stringField(j, "reason", true);
      if (e.reason != "heavy_sweep" && e.reason != "reroute" && e.reason != "none")
        fail("field \"reason\" must be heavy_sweep, reroute or none, got \"" + e.reason + "\"");
      break;
    case OsmEventType::kLftChange:
      e.switchGuid = guidField(j, "switch_guid");
      if (field(j, "lft_top", false))
        e.lftTop = static_cast<std::uint16_t>(unsignedField(j, "lft_top", true, 0xFFFF));
      if (field(j, "block", false))
        e.block = static_cast<std::uint32_t>(unsignedField(j, "block", true, 0xFFFFFFFF));
      break;
    case OsmEventType::kStateChange:
      e.smState = stringField(j, "sm_state", true);
      break;
    case OsmEventType::kPortErrors: {
      e.nodeGuid = guidField(j, "node_guid");
      e.port = PortNum{static_cast<std::uint8_t>(unsignedField(j, "port", true, 0xFF))};
      e.nodeName = stringField(j, "node", false);
      const json* c = field(j, "counters", true);
      if (!c->is_object()) fail("field \"counters\" must be an object");
      for (const auto& [name, value] : c->items()) {
        if (!value.is_number_unsigned())
          fail("counter \"" + name + "\" must be a non-negative integer, got " + value.dump());
        e.counters[name] = value.get<std::uint64_t>();
      }
      e.intervalSeconds = static_cast<std::int64_t>(
          unsignedField(j, "interval_s", false, std::numeric_limits<std::int64_t>::max()));
      break;
    }
  }
  return e;
}

std::vector<std::optional<std::string>> LineSplitter::feed(std::string_view bytes) {
  std::vector<std::optional<std::string>> out;
  while (!bytes.empty()) {
    const auto nl = bytes.find('\n');
    const std::string_view part = bytes.substr(0, nl);
    if (!skipping_) {
      if (buffer_.size() + part.size() > maxLine_) {
        buffer_.clear();
        skipping_ = true;
      } else {
        buffer_.append(part);
      }
    }
    if (nl == std::string_view::npos) break;
    if (skipping_) {
      out.emplace_back(std::nullopt);
      skipping_ = false;
    } else {
      if (!buffer_.empty() && buffer_.back() == '\r') buffer_.pop_back();
      if (!buffer_.empty()) out.emplace_back(std::move(buffer_));
      buffer_.clear();
    }
    bytes.remove_prefix(nl + 1);
  }
  return out;
}

// ---- listener ----

OsmEventListener::OsmEventListener(std::filesystem::path socketPath, Handler handler,
                                   StatusSink statusSink)
    : path_(std::move(socketPath)),
      handler_(std::move(handler)),
      statusSink_(std::move(statusSink)) {
  status_.enabled = true;
  status_.socketPath = path_.string();
}

OsmEventListener::~OsmEventListener() { stop(); }

void OsmEventListener::start() {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string p = path_.string();
  if (p.empty() || p.size() >= sizeof addr.sun_path)
    throw OsmEventError("osm events socket path must be 1-" +
                        std::to_string(sizeof addr.sun_path - 1) + " bytes: \"" + p + "\"");
  std::memcpy(addr.sun_path, p.c_str(), p.size() + 1);

  struct stat st {};
  if (::lstat(p.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      throw OsmEventError("osm events socket path exists and is not a socket: " + p);
    ::unlink(p.c_str());
  }
  listenFd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listenFd_ < 0) throw OsmEventError(errnoText("socket"));
  if (::bind(listenFd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listenFd_, 4) != 0) {
    const std::string error = errnoText(("cannot listen on " + p).c_str());
    ::close(listenFd_);
    listenFd_ = -1;
    throw OsmEventError(error);
  }
  if (::pipe2(wakeFd_, O_CLOEXEC | O_NONBLOCK) != 0) {
    ::close(listenFd_);
    listenFd_ = -1;
    throw OsmEventError(errnoText("pipe"));
  }
  spdlog::info("osm events: listening on {}", p);
  publishStatus();
  thread_ = std::thread([this] { loop(); });
}

void OsmEventListener::stop() {
  if (thread_.joinable()) {
    const char byte = 1;
    [[maybe_unused]] auto n = ::write(wakeFd_[1], &byte, 1);
    thread_.join();
  }
  for (int* fd : {&listenFd_, &wakeFd_[0], &wakeFd_[1]}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  std::error_code ec;
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) std::filesystem::remove(path_, ec);
}

OsmLinkStatus OsmEventListener::status() const {
  std::lock_guard lock(mu_);
  return status_;
}

void OsmEventListener::publishStatus() {
  if (statusSink_) statusSink_(status());
}

void OsmEventListener::handleLine(const std::optional<std::string>& line) {
  std::optional<OsmEvent> event;
  std::string error;
  if (!line) {
    error = "line longer than " + std::to_string(kMaxOsmLineBytes) + " bytes";
  } else {
    try {
      event = parseOsmEvent(*line);
    } catch (const OsmEventError& e) {
      error = e.what();
    }
  }
  {
    std::lock_guard lock(mu_);
    if (!event) {
      status_.malformed++;
      status_.lastError = "malformed event: " + error;
    } else {
      status_.eventsByType[std::string(toString(event->type))]++;
      status_.lastEvent = std::chrono::system_clock::now();
      status_.pluginDropped = event->dropped;
      status_.lastSeq = event->seq;
      if (event->type == OsmEventType::kHello) status_.osmVersion = event->osmVersion;
      if (!event->smState.empty()) status_.smState = event->smState;
    }
  }
  if (!event) {
    spdlog::warn("osm events: malformed line ignored: {}", error);
    return;
  }
  spdlog::debug("osm events: {} seq {}", toString(event->type), event->seq);
  try {
    if (handler_) handler_(*event);
  } catch (const std::exception& e) {
    spdlog::error("osm events: handling {} failed: {}", toString(event->type), e.what());
  }
}

void OsmEventListener::loop() {
  int client = -1;
  LineSplitter splitter;
  auto closeClient = [&](const std::string& why) {
    if (client < 0) return;
    ::close(client);
    client = -1;
    splitter.reset();
    {
      std::lock_guard lock(mu_);
      status_.connected = false;
      status_.connectedSince.reset();
      if (!why.empty()) status_.lastError = why;
    }
    spdlog::warn("osm events: plugin disconnected{}{}", why.empty() ? "" : ": ", why);
    publishStatus();
  };
  std::array<char, 16384> buf{};
  for (;;) {
    pollfd fds[3] = {{wakeFd_[0], POLLIN, 0}, {listenFd_, POLLIN, 0}, {client, POLLIN, 0}};
    const int n = ::poll(fds, client >= 0 ? 3 : 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      spdlog::error("osm events: {}", errnoText("poll"));
      break;
    }
    if (fds[0].revents) break;
    if (fds[1].revents & POLLIN) {
      const int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        if (client >= 0) closeClient("replaced by a new connection");
        client = fd;
        {
          std::lock_guard lock(mu_);
          status_.connected = true;
          status_.connections++;
          status_.connectedSince = std::chrono::system_clock::now();
        }
        spdlog::info("osm events: plugin connected");
        publishStatus();
      }
    }
    if (client >= 0 && (fds[2].revents & (POLLIN | POLLHUP | POLLERR))) {
      const ssize_t got = ::read(client, buf.data(), buf.size());
      if (got == 0) {
        closeClient("");
      } else if (got < 0) {
        if (errno != EINTR && errno != EAGAIN) closeClient(errnoText("read"));
      } else {
        auto lines = splitter.feed(std::string_view(buf.data(), static_cast<std::size_t>(got)));
        for (const auto& line : lines) handleLine(line);
        if (!lines.empty()) publishStatus();
      }
    }
  }
  if (client >= 0) ::close(client);
  std::lock_guard lock(mu_);
  status_.connected = false;
}

}  // namespace ibfabric::api
