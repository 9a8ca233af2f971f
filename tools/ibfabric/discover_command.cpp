// `ibfabric discover`: crawl the subnet from a local (or simulated) HCA port and print the
// Topology in one of the formats of discovery/formats.h.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <thread>

#include "discovery/crawler.h"
#include "discovery/formats.h"
#include "discovery/node_name_map.h"
#include "tools/ibfabric/commands.h"

namespace ibfabric::cli {
namespace {

struct DiscoverArgs {
  std::string format = "summary";
  std::string nodeNameMap;
  std::string output;
  CrawlOptions crawl;
};

// Shows "discovering ... N.N s" on stderr once a crawl has taken a second, when stderr is a
// terminal; erases it when done.
class ProgressLine {
 public:
  explicit ProgressLine(std::string what) : what_(std::move(what)) {
    if (!isatty(STDERR_FILENO)) return;
    thread_ = std::thread([this] { run(); });
  }
  ~ProgressLine() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() {
    auto start = std::chrono::steady_clock::now();
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, std::chrono::seconds(1), [this] { return done_; })) return;
    bool shown = false;
    while (!done_) {
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::fprintf(stderr, "\rdiscovering fabric via %s ... %.1f s", what_.c_str(), s);
      std::fflush(stderr);
      shown = true;
      cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return done_; });
    }
    if (shown) std::fprintf(stderr, "\r\033[K");
  }

  std::string what_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

void runDiscover(DiscoverArgs& args) {
  auto format = parseTopologyFormat(args.format);
  if (!format) throw CliError("unknown format \"" + args.format + "\"");
  if (!args.nodeNameMap.empty()) {
    auto map = std::make_shared<NodeNameMap>(NodeNameMap::load(args.nodeNameMap));
    for (const auto& p : map->problems())
      std::fprintf(stderr, "ibfabric: warning: %s (line skipped)\n", p.message.c_str());
    args.crawl.nodeNameMap = std::move(map);
  }
  auto source = makeSmpCrawler(args.crawl);
  TopologyPtr topo;
  {
    ProgressLine progress(source->describe());
    try {
      topo = source->discover();
    } catch (const CrawlError& e) {
      throw CliError(e.what());
    }
  }
  std::string text = formatTopology(*topo, *format);
  if (args.output.empty() || args.output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return;
  }
  std::ofstream out(args.output, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw CliError("cannot write " + args.output);
}

}  // namespace

void addDiscoverCommand(CLI::App& app) {
  auto args = std::make_shared<DiscoverArgs>();
  auto* cmd = app.add_subcommand("discover", "Crawl the fabric with SMPs and print its topology");
  cmd->add_option("--format", args->format, "summary|json|ibnetdiscover|dot")
      ->check(CLI::IsMember({"summary", "json", "ibnetdiscover", "dot"}))
      ->capture_default_str();
  cmd->add_option("--node-name-map", args->nodeNameMap,
                  "file of <guid> \"<name>\" lines applied to node descriptions")
      ->check(CLI::ExistingFile);
  addCrawlOptions(*cmd, args->crawl);
  cmd->add_option("-o,--output", args->output, "write to FILE instead of stdout");
  cmd->callback([args] { runDiscover(*args); });
}

}  // namespace ibfabric::cli
