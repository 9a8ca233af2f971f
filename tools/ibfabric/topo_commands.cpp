// `ibfabric topo`: the topology generator (`topo gen`) and, from its own file, `topo compare`.
#include <charconv>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "discovery/netfile.h"
#include "discovery/topogen.h"
#include "tools/ibfabric/commands.h"

namespace ibfabric::cli {

namespace {

struct GenArgs {
  std::string preset;
  std::string output;
  TopoOptions options;
  // Numeric options arrive as text so a bad number is a one-line CliError.
  std::vector<std::pair<std::string, std::string>> numbers;
  std::vector<std::pair<std::string, std::optional<int>*>> targets;
};

int toInt(const std::string& flag, const std::string& text) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty())
    throw CliError(flag + ": '" + text + "' is not a whole number");
  return v;
}

void addNumber(CLI::App& gen, const std::shared_ptr<GenArgs>& args, const std::string& flag,
               std::optional<int>& target, const std::string& help) {
  args->targets.emplace_back(flag, &target);
  gen.add_option_function<std::string>(
         flag, [args, flag](const std::string& v) { args->numbers.emplace_back(flag, v); }, help)
      ->type_name("N");
}

void runGen(GenArgs& args) {
  for (const auto& [flag, text] : args.numbers)
    for (auto& [name, target] : args.targets)
      if (name == flag) *target = toInt(flag, text);
  GeneratedTopology g;
  try {
    g = generateTopology(args.preset, args.options);
  } catch (const TopoGenError& e) {
    throw CliError(e.what());
  }
  std::string text = g.headerComment() + formatNetFile(g.fabric);
  if (args.output.empty() || args.output == "-") {
    std::cout << text << std::flush;
    return;
  }
  std::ofstream out(args.output, std::ios::binary | std::ios::trunc);
  if (!out) throw CliError("cannot write " + args.output);
  out << text;
  out.close();
  if (!out) throw CliError("error writing " + args.output);
}

}  // namespace

void addTopoCommands(CLI::App& app) {
  CLI::App* topo = app.add_subcommand("topo", "Topology files: generate, compare");
  topo->require_subcommand(1);

  auto args = std::make_shared<GenArgs>();
  CLI::App* gen = topo->add_subcommand(
      "gen", "Generate a fat-tree fabric file (ibnetdiscover/ibsim format) on stdout");
  gen->add_option("--preset", args->preset, "two-level | three-level | superpod")->required();
  gen->add_option("-o,--output", args->output, "Write to FILE instead of stdout");
  TopoOptions& o = args->options;
  addNumber(*gen, args, "--leaves", o.leaves, "two-level: leaf switches");
  addNumber(*gen, args, "--spines", o.spines, "two-level: spine switches");
  addNumber(*gen, args, "--hosts-per-leaf", o.hostsPerLeaf, "two-/three-level: hosts on each leaf");
  addNumber(*gen, args, "--links-per-spine", o.linksPerSpine,
            "two-/three-level: cables between each leaf and each spine (1)");
  addNumber(*gen, args, "--hcas-per-host", o.hcasPerHost, "two-/three-level: HCAs per host (1)");
  addNumber(*gen, args, "--pods", o.pods, "three-level: pods");
  addNumber(*gen, args, "--leaves-per-pod", o.leavesPerPod, "three-level: leaves in each pod");
  addNumber(*gen, args, "--spines-per-pod", o.spinesPerPod, "three-level: spines in each pod");
  addNumber(*gen, args, "--cores", o.cores,
            "three-level: core switches (multiple of spines per pod)");
  addNumber(*gen, args, "--links-per-core", o.linksPerCore,
            "three-level: cables between a spine and each core of its group (1)");
  addNumber(*gen, args, "--sus", o.sus, "superpod: scalable units of 32 nodes x 8 HCAs (1..64)");
  gen->add_option("--switch-model", o.switchModel,
                  "qm8790 (40 ports) | qm9790 (64 ports); default: smallest that fits");
  gen->add_option("--rate", o.rate, "Rate of every link, up to 4xHDR (ibsim 0.10)")
      ->capture_default_str();
  gen->add_option("--host-prefix", o.hostPrefix, "Host names: <prefix>0001, ...")
      ->capture_default_str();
  gen->add_option("--degrade", o.degrade,
                  "Run one link at another width/rate, both ends: 'leaf-su1-r1[33]=1x' or "
                  "'leaf-01[5]=4xEDR' (repeatable)");
  gen->callback([args] { runGen(*args); });

  addTopoCompareCommand(*topo);
}

}  // namespace ibfabric::cli
