// The umad2sim socket widening (telemetry/sim_socket_buffers.h) on a real Unix datagram pair.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "telemetry/sim_socket_buffers.h"

namespace ibfabric::mad {
namespace {

constexpr int kBytes = 16 << 20;

int sendBuffer(int fd) {
  int v = 0;
  socklen_t len = sizeof(v);
  EXPECT_EQ(getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, &len), 0);
  return v;
}

// Sets LD_PRELOAD for the test's scope (read with getenv only: nothing is loaded).
class ScopedPreload {
 public:
  explicit ScopedPreload(const char* value) {
    if (const char* old = std::getenv("LD_PRELOAD")) old_ = old;
    if (value)
      setenv("LD_PRELOAD", value, 1);
    else
      unsetenv("LD_PRELOAD");
  }
  ~ScopedPreload() {
    if (old_)
      setenv("LD_PRELOAD", old_->c_str(), 1);
    else
      unsetenv("LD_PRELOAD");
  }

 private:
  std::optional<std::string> old_;
};

struct DgramPair {
  DgramPair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, fd), 0); }
  ~DgramPair() {
    ::close(fd[0]);
    ::close(fd[1]);
  }
  int fd[2] = {-1, -1};
};

TEST(SimSocketBuffers, NothingChangesWithoutUmad2sim) {
  ScopedPreload preload(nullptr);
  DgramPair pair;
  const int before = sendBuffer(pair.fd[0]);
  std::string note;
  EXPECT_FALSE(underUmad2sim());
  EXPECT_EQ(widenSimulatorSocketBuffers(kBytes, note), 0);
  EXPECT_EQ(sendBuffer(pair.fd[0]), before);
  EXPECT_TRUE(note.empty()) << note;
}

TEST(SimSocketBuffers, UnderUmad2simEveryUnixDatagramSocketGetsTheSendBuffer) {
  ScopedPreload preload("/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so");
  DgramPair pair;
  int stream[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, stream), 0);
  const int streamBefore = sendBuffer(stream[0]);
  std::string note;
  ASSERT_TRUE(underUmad2sim());
  const int widened = widenSimulatorSocketBuffers(kBytes, note);
  if (geteuid() != 0) {
    // Without CAP_NET_ADMIN the kernel caps the buffer: said, not hidden.
    EXPECT_FALSE(note.empty());
  } else {
    EXPECT_GE(widened, 2);
    EXPECT_TRUE(note.empty()) << note;
    EXPECT_GE(sendBuffer(pair.fd[0]), kBytes);
    EXPECT_GE(sendBuffer(pair.fd[1]), kBytes);
  }
  EXPECT_EQ(sendBuffer(stream[0]), streamBefore);  // Only datagram sockets.
  ::close(stream[0]);
  ::close(stream[1]);
}

TEST(SimSocketBuffers, AWideBufferTakesAFullWindowOfUnreadMadsWithoutBlocking) {
  // What umad2sim's sender meets when ibsim stops reading: 1,024 unread 288-byte messages
  // (four attempts for each of a 256-request window) block a default buffer, not a wide one.
  if (geteuid() != 0) GTEST_SKIP() << "SO_SNDBUFFORCE needs CAP_NET_ADMIN";
  ScopedPreload preload("libumad2sim.so");
  DgramPair pair;
  std::string note;
  ASSERT_GE(widenSimulatorSocketBuffers(kBytes, note), 2) << note;
  char mad[288] = {};
  int sent = 0;
  while (sent < 1024 && send(pair.fd[0], mad, sizeof(mad), MSG_DONTWAIT) == sizeof(mad)) ++sent;
  EXPECT_EQ(sent, 1024);

  DgramPair narrow;  // Created after the widening: the kernel's default.
  int narrowSent = 0;
  while (narrowSent < 1024 && send(narrow.fd[0], mad, sizeof(mad), MSG_DONTWAIT) == sizeof(mad))
    ++narrowSent;
  EXPECT_LT(narrowSent, 1024);  // Where the sender would have blocked.
}

}  // namespace
}  // namespace ibfabric::mad
