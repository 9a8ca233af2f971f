// `ibfabric topo compare`: crawl the live fabric (or read a saved one) and compare it to an
// expected net file; see docs/topology-compare.md.
//
// Exit status: 0 identical, 3 differences found, 1 runtime error (crawl failed, output not
// written), 2 bad input (expected/live file unreadable or malformed, bad node-name map).
// Usage errors caught by the option parser keep CLI11's codes.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "discovery/crawler.h"
#include "discovery/netfile.h"
#include "discovery/node_name_map.h"
#include "discovery/topology_compare.h"
#include "tools/ibfabric/commands.h"

namespace ibfabric::cli {
namespace {

constexpr int kExitDifferent = 3;

struct CompareArgs {
  std::string expected;
  std::string live;
  std::string match = "desc";
  std::string format = "text";
  std::string nodeNameMap;
  std::string output;
  bool noHealth = false;
  CrawlOptions crawl;
};

NetFabric loadNet(const std::string& path, const char* role) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw CliError(std::string("cannot read ") + role + " file " + path, kExitBadInput);
  try {
    return parseNetFile(path);
  } catch (const NetFileError& e) {
    throw CliError(e.what(), kExitBadInput);
  }
}

void runCompare(CompareArgs& args) {
  auto match = parseMatchBy(args.match);
  if (!match) throw CliError("--match: unknown value \"" + args.match + "\"", kExitBadInput);
  NetFabric expected = loadNet(args.expected, "expected");

  std::shared_ptr<const NodeNameMap> map;
  if (!args.nodeNameMap.empty()) {
    try {
      auto loaded = std::make_shared<NodeNameMap>(NodeNameMap::load(args.nodeNameMap));
      for (const auto& p : loaded->problems())
        std::fprintf(stderr, "ibfabric: warning: %s (line skipped)\n", p.message.c_str());
      map = std::move(loaded);
    } catch (const std::exception& e) {
      throw CliError(e.what(), kExitBadInput);
    }
  }

  TopologyPtr live;
  if (!args.live.empty()) {
    live = topologyAsCrawled(loadNet(args.live, "live"), map, "netfile " + args.live);
  } else {
    args.crawl.nodeNameMap = map;
    try {
      live = makeSmpCrawler(args.crawl)->discover();
    } catch (const CrawlError& e) {
      throw CliError(e.what());
    }
  }

  CompareOptions options;
  options.match = *match;
  options.linkHealth = !args.noHealth;
  options.expectedName = args.expected;
  CompareResult result = compareTopology(expected, *live, options);

  std::string text =
      args.format == "json" ? compareToJson(result).dump(2) + "\n" : formatCompareText(result);
  if (args.output.empty() || args.output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  } else {
    std::ofstream out(args.output, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw CliError("cannot write " + args.output);
  }
  if (!result.identical()) throw CliExit{kExitDifferent};
}

}  // namespace

void addTopoCompareCommand(CLI::App& topo) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = topo.add_subcommand(
      "compare",
      "Compare the live fabric to an expected net file: missing/unexpected/miswired links and "
      "nodes, degraded links. Exit 0 identical, 3 different, 1 error, 2 bad input");
  cmd->add_option("--expected", args->expected,
                  "planned fabric (topo gen output, ibsim file or ibnetdiscover dump)")
      ->required();
  cmd->add_option("--match", args->match,
                  "how planned nodes find live ones: desc (description, else id) or guid")
      ->check(CLI::IsMember({"desc", "description", "guid"}))
      ->capture_default_str();
  cmd->add_option("--format", args->format, "text|json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--node-name-map", args->nodeNameMap,
                  "file of <guid> \"<name>\" lines applied to live node descriptions");
  cmd->add_option("--live", args->live,
                  "compare this net file (e.g. saved ibnetdiscover output) instead of crawling");
  cmd->add_flag("--no-health", args->noHealth,
                "skip the live link-health checks (below enabled rate, ends disagree, not Active)");
  cmd->add_option("-o,--output", args->output, "write the report to FILE instead of stdout");
  addCrawlOptions(*cmd, args->crawl);
  cmd->callback([args] { runCompare(*args); });
}

}  // namespace ibfabric::cli
