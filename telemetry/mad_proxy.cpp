#include "telemetry/mad_proxy.h"

#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace ibfabric::mad::proxy {
namespace {

using namespace std::chrono_literals;

/// One packet; false when the socket is gone.
bool sendPacket(int fd, const void* data, std::size_t size) {
  while (true) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n >= 0) return static_cast<std::size_t>(n) == size;
    if (errno != EINTR) return false;
  }
}

bool sendReplies(int fd, const std::vector<ReplyRecord>& records) {
  return records.empty() || sendPacket(fd, records.data(), records.size() * sizeof(ReplyRecord));
}

ReplyRecord toRecord(const ReceivedMad& m) {
  ReplyRecord r;
  r.umadStatus = m.umadStatus;
  r.sourceLid = m.sourceLid.value();
  r.mad = m.mad;
  return r;
}

/// Errors of a send that mean the fabric connection itself is gone (ibsim exited).
bool connectionLost(int error) {
  return error == ECONNREFUSED || error == ENOTCONN || error == EPIPE || error == ECONNRESET;
}

void copyText(char (&dst)[480], const std::string& text) {
  const std::size_t n = std::min(text.size(), sizeof dst - 1);
  std::memcpy(dst, text.data(), n);
  dst[n] = '\0';
}

}  // namespace

int runMadProxy(MadTransport& transport, int fd, const std::function<std::string()>& describe) {
  ::signal(SIGPIPE, SIG_IGN);
  HelloRecord hello;
  std::string error;
  if (!transport.open(error)) {
    copyText(hello.text, error.empty() ? "cannot open the MAD transport" : error);
    sendPacket(fd, &hello, sizeof hello);
    return 3;
  }
  hello.ok = 1;
  hello.localLid = transport.localLid().value();
  hello.smLid = transport.smLid().value();
  hello.localPortGuid = transport.localPortGuid().value();
  copyText(hello.text, describe ? describe() : "");
  if (!sendPacket(fd, &hello, sizeof hello)) {
    transport.close();
    return 0;
  }

  std::atomic<bool> stop{false};
  std::atomic<int> exitCode{0};
  auto fail = [&](const std::string& why) {
    std::fprintf(stderr, "mad proxy: %s\n", why.c_str());
    exitCode = 4;
    stop = true;
    ::shutdown(fd, SHUT_RDWR);  // wakes the request reader; the parent sees EOF
  };

  std::thread replies([&] {
    std::vector<ReplyRecord> batch;
    batch.reserve(kMaxRecordsPerPacket);
    int errors = 0;
    while (!stop) {
      ReceiveResult r = transport.receive(100ms);
      if (r.status == ReceiveStatus::kError) {
        if (++errors >= kFatalErrors) {
          fail("receive failed " + std::to_string(errors) + " times in a row: " + r.error);
          break;
        }
        std::this_thread::sleep_for(1ms);
        continue;
      }
      errors = 0;
      if (r.status != ReceiveStatus::kMad) continue;
      batch.push_back(toRecord(r.mad));
      while (batch.size() < kMaxRecordsPerPacket) {
        ReceiveResult more = transport.receive(std::chrono::nanoseconds::zero());
        if (more.status != ReceiveStatus::kMad) break;
        batch.push_back(toRecord(more.mad));
      }
      if (!sendReplies(fd, batch)) {
        stop = true;
        break;
      }
      batch.clear();
    }
  });

  std::vector<RequestRecord> requests(kMaxRecordsPerPacket);
  std::vector<ReplyRecord> failures;
  while (!stop) {
    const ssize_t n =
        ::recv(fd, requests.data(), requests.size() * sizeof(RequestRecord), MSG_TRUNC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the parent closed the socket (or is gone)
    const std::size_t bytes =
        std::min(static_cast<std::size_t>(n), requests.size() * sizeof(RequestRecord));
    failures.clear();
    for (std::size_t i = 0; i < bytes / sizeof(RequestRecord); ++i) {
      const RequestRecord& q = requests[i];
      MadAddress to;
      to.lid = Lid(q.lid);
      to.qp = q.qp;
      to.qkey = q.qkey;
      to.mgmtClass = static_cast<MgmtClass>(q.mgmtClass);
      to.sl = q.sl;
      const int rc = transport.send(to, q.mad);
      if (rc == 0) continue;
      ReplyRecord r;
      r.umadStatus = rc;
      r.sourceLid = q.lid;
      r.mad = q.mad;
      failures.push_back(r);
      if (connectionLost(rc)) {
        sendReplies(fd, failures);
        failures.clear();
        fail(std::string("send failed: ") + std::strerror(rc) + " (the fabric connection is gone)");
        break;
      }
    }
    if (!sendReplies(fd, failures)) break;
  }
  stop = true;
  replies.join();
  transport.close();
  return exitCode;
}

}  // namespace ibfabric::mad::proxy
