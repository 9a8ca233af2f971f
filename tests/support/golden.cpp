#include "tests/support/golden.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string_view>

#include "tests/support/test_paths.h"

namespace ibfabric::testing {

void expectGolden(const std::filesystem::path& relative, const std::string& actual) {
  const std::filesystem::path path = testDataDir() / relative;
  if (const char* update = std::getenv(kUpdateGoldenVariable)) {
    if (std::string_view(update) != "1") {
      FAIL() << kUpdateGoldenVariable << "=\"" << update
             << "\": only 1 rewrites the golden files; unset it to compare with " << path;
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << actual;
    out.close();
    ASSERT_TRUE(out) << "cannot write golden file " << path;
    GTEST_SKIP() << "rewrote golden file " << path << " (" << kUpdateGoldenVariable << "=1)";
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden file " << path << " (" << kUpdateGoldenVariable
                  << "=1 writes it)";
  const std::string expected(std::istreambuf_iterator<char>(in), {});
  EXPECT_EQ(expected, actual) << "golden file " << path << " differs; " << kUpdateGoldenVariable
                              << "=1 rewrites it";
}

}  // namespace ibfabric::testing
