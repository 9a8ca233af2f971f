#include "tests/fuzz/memory_server.h"

#include <algorithm>
#include <cstring>

namespace ibfabric::fuzz {
namespace {

/// One connection: reads come from the input, writes go to the output.
class MemoryStream final : public httplib::Stream {
 public:
  explicit MemoryStream(std::string_view in) : in_(in) {}

  bool is_readable() const override { return true; }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    const std::size_t n = std::min(size, in_.size() - pos_);
    std::memcpy(ptr, in_.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    out_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 40000;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 9464;
  }
  socket_t socket() const override { return INVALID_SOCKET; }

  bool exhausted() const { return pos_ >= in_.size(); }
  std::string takeOutput() {
    std::string out;
    out.swap(out_);
    return out;
  }

 private:
  std::string_view in_;
  std::size_t pos_ = 0;
  std::string out_;
};

}  // namespace

std::vector<std::string> MemoryServer::serve(std::string_view bytes, int maxRequests) {
  MemoryStream strm(bytes);
  std::vector<std::string> answers;
  bool closed = false;
  for (int i = 0; i < maxRequests && !closed && !strm.exhausted(); ++i) {
    const bool last = i + 1 == maxRequests;
    const bool ok = process_request(strm, last, closed, [](httplib::Request& req) {
      req.remote_addr = "127.0.0.1";
      req.remote_port = 40000;
    });
    answers.push_back(strm.takeOutput());
    if (!ok) break;
  }
  return answers;
}

int answerStatus(std::string_view answer) {
  constexpr std::string_view kStart = "HTTP/1.1 ";
  if (answer.substr(0, kStart.size()) != kStart || answer.size() < kStart.size() + 3) return 0;
  int code = 0;
  for (char c : answer.substr(kStart.size(), 3)) {
    if (c < '0' || c > '9') return 0;
    code = code * 10 + (c - '0');
  }
  return code;
}

}  // namespace ibfabric::fuzz
