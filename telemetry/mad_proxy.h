// The MAD proxy: the child side of SubprocessMadTransport, and the records both sides exchange.
//
// runMadProxy() opens a transport (UmadTransport in `ibfabricd --mad-proxy`), says so in a hello
// packet, and forwards MADs between a SOCK_SEQPACKET socket and the transport until the socket
// reaches EOF (the parent closed it or died). Two threads, because umad2sim's poll() waits on
// the umad fd alone: the calling thread reads request packets and calls transport.send(); a
// second thread loops on transport.receive() and writes reply packets (several replies per
// packet when they arrive together). A send that fails comes back as a reply record with the
// errno as its status and the request as its MAD (what the engine treats as a lost attempt).
// When the transport breaks for good (receive() reports kError `kFatalErrors` times in a row,
// or a send fails with a connection error: the simulator is gone) the proxy exits, so the parent
// sees EOF at once instead of silence.
//
// Record layouts are fixed-size, host byte order (both ends are the same binary on one host).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "telemetry/mad_transport.h"

namespace ibfabric::mad::proxy {

constexpr std::uint32_t kHelloMagic = 0x4d414450;  // "MADP"
constexpr std::size_t kMaxRecordsPerPacket = 64;

struct HelloRecord {
  std::uint32_t magic = kHelloMagic;
  std::uint32_t ok = 0;        ///< 1: the port is open; 0: `text` is the open error.
  std::uint16_t localLid = 0;  ///< The opened port's MadTransport::localLid() etc.
  std::uint16_t smLid = 0;
  std::uint32_t reserved = 0;
  std::uint64_t localPortGuid = 0;
  char text[480] = {};  ///< The transport's description, or the error (NUL-terminated).
};

struct RequestRecord {
  std::uint16_t lid = 0;
  std::uint8_t mgmtClass = 0;
  std::uint8_t sl = 0;
  std::uint32_t qp = 0;
  std::uint32_t qkey = 0;
  MadBuffer mad{};
};

struct ReplyRecord {
  std::int32_t umadStatus = 0;
  std::uint16_t sourceLid = 0;
  std::uint16_t reserved = 0;
  MadBuffer mad{};
};

static_assert(sizeof(RequestRecord) == 12 + kMadSize);
static_assert(sizeof(ReplyRecord) == 8 + kMadSize);

/// Consecutive receive() errors after which the proxy gives up.
constexpr int kFatalErrors = 50;

/// Runs the proxy on socket `fd` (opens `transport` first). `describe` names the opened port
/// for the hello. Returns the process exit code: 0 after EOF, 3 when the transport cannot be
/// opened (the hello carries the error), 4 when the transport broke.
int runMadProxy(MadTransport& transport, int fd, const std::function<std::string()>& describe);

}  // namespace ibfabric::mad::proxy
