// ScopeExit: runs a function when the scope ends, however it ends (a fatal gtest assertion
// returns early). Tests use it to stop and join a thread they started, so that an ASSERT_ between
// the start and the join cannot leave a joinable std::thread behind (std::terminate).
//
//   std::thread serving([&] { server.run(); });
//   const testing::ScopeExit stop([&] { server.stop(); serving.join(); });
//
// Not copyable or movable; not thread-safe (like the scope it guards).
#pragma once

#include <utility>

namespace ibfabric::testing {

template <typename F>
class [[nodiscard]] ScopeExit {
 public:
  explicit ScopeExit(F f) : f_(std::move(f)) {}
  ~ScopeExit() { f_(); }
  ScopeExit(const ScopeExit&) = delete;
  ScopeExit& operator=(const ScopeExit&) = delete;

 private:
  F f_;
};

}  // namespace ibfabric::testing
