// The golden-file helper (tests/support/golden.h) itself, on scratch files: equal text passes,
// a difference fails, a missing file fails fatally; IBFABRIC_UPDATE_GOLDEN=1 rewrites the file
// and reports a skip naming it; any other value fails and leaves the file alone.
#include "tests/support/golden.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

/// Sets (or unsets, for nullopt) the update variable for one scope, then restores it.
class UpdateVariable {
 public:
  explicit UpdateVariable(std::optional<std::string> value) {
    if (const char* old = std::getenv(kUpdateGoldenVariable)) old_ = old;
    if (value) {
      ::setenv(kUpdateGoldenVariable, value->c_str(), 1);
    } else {
      ::unsetenv(kUpdateGoldenVariable);
    }
  }
  ~UpdateVariable() {
    if (old_) {
      ::setenv(kUpdateGoldenVariable, old_->c_str(), 1);
    } else {
      ::unsetenv(kUpdateGoldenVariable);
    }
  }
  UpdateVariable(const UpdateVariable&) = delete;
  UpdateVariable& operator=(const UpdateVariable&) = delete;

 private:
  std::optional<std::string> old_;
};

/// The results (failures, skips) expectGolden(path, actual) reports, kept from the test.
std::vector<::testing::TestPartResult> resultsOf(const std::filesystem::path& path,
                                                 const std::string& actual) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter intercept(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    expectGolden(path, actual);  // an absolute path replaces the data directory
  }
  std::vector<::testing::TestPartResult> out;
  for (int i = 0; i < results.size(); ++i) out.push_back(results.GetTestPartResult(i));
  return out;
}

std::string contents(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Golden, EqualTextPassesAndADifferenceFails) {
  const UpdateVariable unset(std::nullopt);
  const auto path = writeScratchFile("golden-equal.txt", "a\nb\n");
  EXPECT_TRUE(resultsOf(path, "a\nb\n").empty());
  const auto differs = resultsOf(path, "a\nc\n");
  ASSERT_EQ(differs.size(), 1u);
  EXPECT_TRUE(differs[0].nonfatally_failed());
  EXPECT_NE(std::string(differs[0].message()).find("differs"), std::string::npos);
}

TEST(Golden, AMissingFileIsAFatalFailure) {
  const UpdateVariable unset(std::nullopt);
  const auto missing = resultsOf(scratchDir() / "golden-missing.txt", "x");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_TRUE(missing[0].fatally_failed());
  EXPECT_NE(std::string(missing[0].message()).find("missing golden file"), std::string::npos);
}

TEST(Golden, UpdateModeRewritesTheFileAndSaysSo) {
  const UpdateVariable update(std::string("1"));
  const auto path = writeScratchFile("golden-update.txt", "old\n");
  const auto results = resultsOf(path, "new\n");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].skipped());
  EXPECT_NE(std::string(results[0].message()).find("rewrote golden file"), std::string::npos);
  EXPECT_EQ(contents(path), "new\n");
}

TEST(Golden, OtherValuesOfTheUpdateVariableFail) {
  for (const char* value : {"yes", "0", "", "11"}) {
    const UpdateVariable bad{std::string(value)};
    const auto path = writeScratchFile("golden-bad-value.txt", "old\n");
    const auto results = resultsOf(path, "new\n");
    ASSERT_EQ(results.size(), 1u) << value;
    EXPECT_TRUE(results[0].fatally_failed()) << value;
    EXPECT_NE(std::string(results[0].message()).find("only 1 rewrites"), std::string::npos)
        << value;
    EXPECT_EQ(contents(path), "old\n")
        << "left alone with " << kUpdateGoldenVariable << "=" << value;
  }
}

}  // namespace
}  // namespace ibfabric::testing
