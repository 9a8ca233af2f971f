// `ibfabric pool journal verify DIR` and `ibfabric pool journal repair DIR`: the operator's view
// of the GPU pool's journal directory (scheduler_hooks/pool/journal_check.h) and the way out of a
// corrupt one (PoolJournal::repair): ibfabricd refuses to start on a journal corrupt before its
// end and leaves the file as it is; repair keeps a byte-for-byte copy and cuts the journal
// before its first bad record, saying how many good records after it are given up.
#include <iostream>
#include <memory>
#include <string>

#include "scheduler_hooks/pool/journal_check.h"
#include "scheduler_hooks/pool/journal_file.h"
#include "tools/ibfabric/commands.h"

namespace ibfabric::cli {
namespace {

using scheduler_hooks::JournalCorruptError;

void verify(const std::string& dir) {
  scheduler_hooks::JournalReport r;
  try {
    r = scheduler_hooks::verifyJournal(dir);
  } catch (const JournalCorruptError& e) {
    throw CliError(e.what());
  }
  std::cout << "pool journal " << dir << ": ok\n"
            << "  snapshot: "
            << (r.snapshotSeq ? "sequence " + std::to_string(*r.snapshotSeq) : std::string("none"))
            << "\n  records: " << r.records;
  if (r.records) std::cout << " (sequence " << r.firstSeq << ".." << r.lastSeq << ")";
  std::cout << ", " << r.bytes << " bytes\n";
  if (r.tornBytes)
    std::cout << "  torn tail: " << r.tornBytes
              << " bytes (an unacknowledged last write; cut at the next start)\n";
}

void repair(const std::string& dir) {
  const auto r = scheduler_hooks::PoolJournal::repair(dir);
  if (r.savedAs.empty()) {
    std::cout << "pool journal " << dir << ": nothing to repair (" << r.keptRecords
              << " good records)\n";
    return;
  }
  std::cout << "pool journal " << dir << ": original kept as " << r.savedAs.string() << "\n"
            << "  kept " << r.keptRecords << " records (" << r.keptBytes << " bytes)\n";
  if (r.droppedGoodRecords)
    std::cout << "  gave up " << r.droppedGoodRecords
              << " good records after the bad one: check those allocations with the schedulers\n";
}

}  // namespace

void addPoolJournalCommands(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  CLI::App* pool = app.add_subcommand("pool", "The GPU pool's files");
  pool->require_subcommand(1);
  CLI::App* journal = pool->add_subcommand("journal", "The pool's journal directory");
  journal->require_subcommand(1);
  CLI::App* v = journal->add_subcommand(
      "verify", "Check the journal read-only (safe while ibfabricd runs); 1 when corrupt");
  v->add_option("DIR", *dir, "The journal directory (pool.journal)")->required();
  v->callback([dir] { verify(*dir); });
  CLI::App* r = journal->add_subcommand(
      "repair",
      "Keep a copy, then cut the journal before its first bad record (ibfabricd stopped)");
  r->add_option("DIR", *dir, "The journal directory (pool.journal)")->required();
  r->callback([dir] { repair(*dir); });
}

}  // namespace ibfabric::cli
