// ibfabricd on a real ibsim + OpenSM fabric against hostile clients and inputs:
//   - 200 idle and 16 trickling connections (one header line every 4 s) are held while
//     /api/v1/health/live and /api/v1/links keep answering within 1 s;
//   - a SIGHUP reload of a config with YAML values of the wrong type is refused (the daemon
//     keeps running and logs the key), and --check-config rejects the same file;
//   - node descriptions that are not valid UTF-8 (through the node-name map) do not stop the
//     crawl: the daemon becomes ready and serves them with U+FFFD;
//   - SIGTERM while a large pool inventory loads at start ends the daemon promptly.
// Every wait is bounded; every connection is closed at the end of its test.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

/// A plain TCP connection to the daemon that sends what the test says, when it says.
class Tcp {
 public:
  explicit Tcp(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~Tcp() { ::close(fd_); }
  Tcp(const Tcp&) = delete;
  Tcp& operator=(const Tcp&) = delete;
  bool ok() const { return ok_; }
  bool send(const std::string& s) {
    return ::send(fd_, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size());
  }

 private:
  int fd_;
  bool ok_ = false;
};

/// GET with a fresh client and a 2 s budget: the status (-1 without an answer) and the time.
std::pair<int, double> timedGet(int port, const std::string& path) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(2s);
  c.set_read_timeout(2s);
  const auto t0 = Clock::now();
  auto res = c.Get(path.c_str());
  return {res ? res->status : -1, std::chrono::duration<double>(Clock::now() - t0).count()};
}

bool waitReady(int port, std::chrono::seconds timeout) {
  return waitFor([&] { return timedGet(port, "/api/v1/health/ready").first == 200; }, timeout);
}

TEST(DaemonHostile, IdleAndTricklingClientsDoNotStopTheApiAndABadReloadIsRefused) {
  auto net = writeScratchFile("hostile.net", fatTreeText("s", 2, 2, 2));
  SimFabric fabric(net, "hostile");
  auto config = writeScratchFile("hostile.yaml", "sweep_interval: 0.5\n");
  DaemonProcess daemon(fabric, {"--config", config.string(), "--listen", "127.0.0.1:0"});
  const int port = daemon.waitForPort(60s);
  ASSERT_GT(port, 0) << daemon.log();
  ASSERT_TRUE(waitReady(port, 90s)) << daemon.log();

  std::vector<std::unique_ptr<Tcp>> idle, trickling;
  for (int i = 0; i < 200; ++i) idle.push_back(std::make_unique<Tcp>(port));
  for (int i = 0; i < 16; ++i) {
    trickling.push_back(std::make_unique<Tcp>(port));
    EXPECT_TRUE(trickling.back()->send("GET /api/v1/links HTTP/1.1\r\n"));
  }
  const auto t0 = Clock::now();
  auto nextLine = t0 + 4s;
  double slowest = 0;
  int probes = 0;
  while (Clock::now() - t0 < 9s) {
    if (Clock::now() >= nextLine) {
      for (auto& t : trickling) t->send("X-Trickle: 1\r\n");
      nextLine += 4s;
    }
    for (const char* path : {"/api/v1/health/live", "/api/v1/links"}) {
      const auto [status, seconds] = timedGet(port, path);
      EXPECT_EQ(status, 200) << path;
      EXPECT_LT(seconds, 1.0) << path;
      slowest = std::max(slowest, seconds);
      ++probes;
    }
    std::this_thread::sleep_for(250ms);
  }
  std::printf("slow clients: %d probes, slowest %.3f s with 200 idle + 16 trickling\n", probes,
              slowest);
  idle.clear();
  trickling.clear();

  // A reload with values of the wrong YAML type: refused, logged with the key, the daemon runs.
  { std::ofstream(config) << "sweep_interval: 0.5\npool: {[a]: 1}\n"; }
  ASSERT_EQ(daemon.signal(SIGHUP), 0);
  EXPECT_TRUE(waitFor([&] { return daemon.log().find("reload failed") != std::string::npos; }, 10s))
      << daemon.log();
  EXPECT_NE(daemon.log().find("pool"), std::string::npos);
  EXPECT_EQ(timedGet(port, "/api/v1/health/live").first, 200);
  auto r = runProcess({IBFABRIC_DAEMON_PATH, "--config", config.string(), "--check-config"});
  EXPECT_EQ(r.exitCode, 1) << r.describe();
  EXPECT_NE(r.err.find("pool"), std::string::npos) << r.describe();

  const int status = daemon.signalAndWait(SIGTERM, 10s);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << "\n" << daemon.log();
}

TEST(DaemonHostile, DescriptionsThatAreNotUtf8DoNotStopTheCrawl) {
  // The node-name map replaces the descriptions the crawl child reports (TopologyBuilder), so
  // bytes that are not UTF-8 there reach the child's JSON writer exactly as a fabric's own
  // would (the simulator's CLI refuses such bytes in a net file).
  auto net = writeScratchFile("utf8.net", fatTreeText("u", 2, 2, 2));
  SimFabric fabric(net, "utf8");
  json nodes;
  {
    DaemonProcess daemon(fabric, {"--listen", "127.0.0.1:0", "--crawl-interval", "60"});
    const int port = daemon.waitForPort(60s);
    ASSERT_GT(port, 0) << daemon.log();
    ASSERT_TRUE(waitReady(port, 90s)) << daemon.log();
    httplib::Client c("127.0.0.1", port);
    auto res = c.Get("/api/v1/nodes");
    ASSERT_TRUE(res && res->status == 200);
    nodes = json::parse(res->body);
    EXPECT_GE(daemon.signalAndWait(SIGTERM, 10s), 0);
  }
  // Every node named with bytes that are not UTF-8.
  ASSERT_FALSE(nodes["nodes"].empty());
  std::string map;
  for (const auto& n : nodes["nodes"])
    map += n["guid"].get<std::string>() + " \"bad\xfe\xc3 name\"\n";
  auto mapFile = writeScratchFile("utf8.map", map);
  DaemonProcess daemon(fabric, {"--listen", "127.0.0.1:0", "--node-name-map", mapFile.string()});
  const int port = daemon.waitForPort(60s);
  ASSERT_GT(port, 0) << daemon.log();
  ASSERT_TRUE(waitReady(port, 90s)) << daemon.log();
  httplib::Client c("127.0.0.1", port);
  auto res = c.Get("/api/v1/nodes");
  ASSERT_TRUE(res && res->status == 200);
  EXPECT_NE(res->body.find("bad\xEF\xBF\xBD"), std::string::npos) << res->body.substr(0, 400);
}

TEST(DaemonHostile, SigtermWhileALargeInventoryLoadsEndsTheDaemonPromptly) {
  auto net = writeScratchFile("startstop.net", fatTreeText("t", 2, 2, 2));
  SimFabric fabric(net, "startstop");
  // 100,000 hosts: each one journal append (synced), far longer than the test waits.
  auto inventory = writeScratchFile("startstop-inventory.json",
                                    R"({"hosts": [{"name": "h[000001-100000]", "gpu_count": 8}]})");
  const auto journal = scratchDir() / "startstop-journal";
  std::filesystem::remove_all(journal);
  std::filesystem::create_directories(journal);
  auto config = writeScratchFile("startstop.yaml", "pool:\n  inventory: " + inventory.string() +
                                                       "\n  journal: " + journal.string() + "\n");
  DaemonProcess daemon(fabric, {"--config", config.string(), "--listen", "127.0.0.1:0"});
  // In the inventory load: the journal was replayed, the hosts are being added.
  ASSERT_TRUE(
      waitFor([&] { return daemon.log().find("pool: replayed") != std::string::npos; }, 30s))
      << daemon.log();
  std::this_thread::sleep_for(500ms);
  const auto t0 = Clock::now();
  const int status = daemon.signalAndWait(SIGTERM, 5s);
  EXPECT_NE(status, -1) << "still running 5 s after SIGTERM\n" << daemon.log();
  EXPECT_LT(Clock::now() - t0, 2s) << daemon.log();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << "\n" << daemon.log();
}

}  // namespace
}  // namespace ibfabric::testing
