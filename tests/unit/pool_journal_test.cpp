// The pool journal's guarantees (scheduler_hooks/pool/journal_file.h, journal_check.h): a record
// bad in the middle, a zero-length header, a sequence gap or a negative or repeated sequence is
// a JournalCorruptError naming the file, offset and record, and the file stays byte for byte as
// it was; a torn tail is still cut (and its bytes kept); the directory lock refuses a second
// journal; repair keeps a copy and cuts before the bad record.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "scheduler_hooks/pool/journal_check.h"
#include "scheduler_hooks/pool/journal_file.h"
#include "tests/support/subprocess.h"

namespace ibfabric::scheduler_hooks {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

class PoolJournalCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        testing::scratchDir() / ("journal-check-" + std::to_string(::getpid()) + "-" +
                                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path log() const { return dir_ / "journal.log"; }
  std::string bytes() const { return readFileBytes(log()); }
  void setBytes(const std::string& b) const {
    std::ofstream(log(), std::ios::binary | std::ios::trunc) << b;
  }

  /// Writes records with these sequence numbers; returns each record's offset.
  std::vector<std::uint64_t> write(const std::vector<json>& seqs) {
    PoolJournal j(dir_);
    j.open();
    std::vector<std::uint64_t> offsets;
    for (std::size_t i = 0; i < seqs.size(); ++i) {
      offsets.push_back(fs::file_size(log()));
      j.append({{"op", "free"}, {"job", "job-" + std::to_string(i + 1)}, {"seq", seqs[i]}});
    }
    return offsets;
  }
  std::vector<std::uint64_t> writeTen() { return write({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}); }

  /// Opening fails with JournalCorruptError at `offset` / `record`, the file unchanged.
  void expectCorrupt(std::uint64_t offset, std::size_t record, const std::string& reason) {
    const std::string before = bytes();
    try {
      PoolJournal j(dir_);
      j.open();
      ADD_FAILURE() << "no error";
    } catch (const JournalCorruptError& e) {
      EXPECT_EQ(e.offset(), offset);
      EXPECT_EQ(e.record(), record);
      EXPECT_THAT(e.what(), HasSubstr(log().string()));
      EXPECT_THAT(e.what(), HasSubstr("offset " + std::to_string(offset)));
      EXPECT_THAT(e.what(), HasSubstr("record " + std::to_string(record)));
      EXPECT_THAT(e.what(), HasSubstr(reason));
      EXPECT_THAT(e.what(), HasSubstr("ibfabric pool journal repair"));
    }
    const std::string after = bytes();
    EXPECT_EQ(after.size(), before.size());
    EXPECT_EQ(crc32(after), crc32(before)) << "the journal must be left byte for byte";
    EXPECT_THROW(verifyJournal(dir_), JournalCorruptError);
    EXPECT_EQ(bytes(), before);
  }

  fs::path dir_;
};

TEST_F(PoolJournalCheck, FlippedBytesInAMiddleRecordAreAnErrorAndTheFileStaysIntact) {
  const auto at = writeTen();
  std::string b = bytes();
  for (int i = 0; i < 4; ++i) b[at[4] + 12 + i] ^= 0x5a;  // inside record 5's payload
  setBytes(b);
  expectCorrupt(at[4], 5, "CRC-32 mismatch, with 5 good records after it");
}

TEST_F(PoolJournalCheck, AFlippedLengthInTheMiddleIsNotMistakenForATornTail) {
  const auto at = writeTen();
  std::string b = bytes();
  b[at[3] + 2] = 0x7f;  // record 4 now claims 8 MiB: past the end of the file
  setBytes(b);
  expectCorrupt(at[3], 4, "past the end of the file, with 6 good records after it");
}

TEST_F(PoolJournalCheck, AZeroLengthHeaderMidJournalIsAnError) {
  const auto at = writeTen();
  std::string b = bytes();
  b.insert(at[3], std::string(8, '\0'));
  setBytes(b);
  expectCorrupt(at[3], 4, "zero-length record header");
}

TEST_F(PoolJournalCheck, SequenceGapsAndRepeatsAreErrors) {
  auto at = write({1, 2, 4, 5});
  expectCorrupt(at[2], 3, "sequence 4 after 2 (a gap)");
  fs::remove_all(dir_);
  at = write({1, 2, 3, 3, 4});
  expectCorrupt(at[3], 4, "sequence 3 after 3 (not increasing)");
  fs::remove_all(dir_);
  at = write({5, 6});
  expectCorrupt(at[0], 1, "sequence 5 where 1 was due");
}

TEST_F(PoolJournalCheck, NegativeOrMissingSequencesAreErrors) {
  auto at = write({1, -2, 3});
  expectCorrupt(at[1], 2, "no positive integer sequence (\"seq\": -2)");
  fs::remove_all(dir_);
  at = write({1, "2"});
  expectCorrupt(at[1], 2, "no positive integer sequence");
  fs::remove_all(dir_);
  at = write({0});
  expectCorrupt(at[0], 1, "no positive integer sequence");
}

TEST_F(PoolJournalCheck, RecordsMustContinueTheSnapshot) {
  {
    PoolJournal j(dir_);
    j.open();
    j.writeSnapshot({{"seq", 5}});
    j.append({{"op", "free"}, {"job", "a"}, {"seq", 8}});
  }
  expectCorrupt(0, 1, "sequence 8 where 6 was due (records 6..7 are missing)");
  // Records the snapshot already holds (a crash during compaction) are fine.
  setBytes("");
  write({4, 5, 6});
  PoolJournal j(dir_);
  EXPECT_EQ(j.open().records.size(), 3u);
}

TEST_F(PoolJournalCheck, ATornTailIsStillCutAndItsBytesKept) {
  writeTen();
  const std::string good = bytes();
  const std::string torn = std::string("\x64\0\0\0\1\2\3\4", 8) + R"({"op":"free","jo)";
  setBytes(good + torn);
  {
    PoolJournal j(dir_);
    auto r = j.open();
    EXPECT_EQ(r.records.size(), 10u);
    EXPECT_EQ(r.tornBytes, torn.size());
    EXPECT_EQ(readFileBytes(r.tornSavedAs), torn);
    j.append({{"op", "free"}, {"job", "k"}, {"seq", 11}});
  }
  EXPECT_EQ(bytes().substr(0, good.size()), good);
  PoolJournal j(dir_);
  EXPECT_EQ(j.open().records.size(), 11u);
}

TEST_F(PoolJournalCheck, AZeroFilledOrCorruptLastRecordIsATornTail) {
  writeTen();
  const std::string good = bytes();
  setBytes(good + std::string(24, '\0'));  // a file extended by a crash, its data never written
  {
    PoolJournal j(dir_);
    EXPECT_EQ(j.open().tornBytes, 24u);
  }
  EXPECT_EQ(bytes(), good);
  std::string b = good;
  b[b.size() - 3] ^= 0x20;  // the last record's CRC fails and nothing good follows it
  setBytes(b);
  PoolJournal j(dir_);
  auto r = j.open();
  EXPECT_EQ(r.records.size(), 9u);
  EXPECT_GT(r.tornBytes, 0u);
}

TEST_F(PoolJournalCheck, TheDirectoryLockRefusesASecondJournal) {
  auto first = std::make_unique<PoolJournal>(dir_);
  try {
    PoolJournal second(dir_);
    ADD_FAILURE() << "a second journal on the same directory";
  } catch (const DirectoryLockedError& e) {
    EXPECT_THAT(e.what(), HasSubstr(dir_.string()));
    EXPECT_THAT(e.what(), HasSubstr("pid " + std::to_string(::getpid())));
  }
  EXPECT_THROW(PoolJournal::repair(dir_), DirectoryLockedError);
  first.reset();
  EXPECT_NO_THROW(PoolJournal second(dir_));
}

TEST_F(PoolJournalCheck, RepairKeepsACopyAndCutsBeforeTheBadRecord) {
  const auto at = writeTen();
  std::string b = bytes();
  b[at[6] + 9] ^= 0x01;
  setBytes(b);
  const auto r = PoolJournal::repair(dir_);
  EXPECT_EQ(readFileBytes(r.savedAs), b);
  EXPECT_EQ(r.keptRecords, 6u);
  EXPECT_EQ(r.keptBytes, at[6]);
  EXPECT_EQ(r.droppedGoodRecords, 3u);
  PoolJournal j(dir_);
  EXPECT_EQ(j.open().records.size(), 6u);
  EXPECT_EQ(verifyJournal(dir_).lastSeq, 6u);
}

}  // namespace
}  // namespace ibfabric::scheduler_hooks
