// `ibfabric export`: the fabric in the formats schedulers read (docs/scheduler.md):
//   export slurm-topology [--plugin tree|block]      Slurm topology.conf
//                         [--format yaml [--topologies tree,block,flat,groups] [--name P]]
//                                                    Slurm topology.yaml (25.05+)
//   export k8s-labels     [--format kubectl|json|yaml] Kubernetes node labels
//   export kueue-topology [--name N]                  Kueue Topology of the label levels
//   export volcano                                    Volcano HyperNodes
// The fabric comes from a net file (--from FILE: topo gen output, ibnetdiscover dump), from a
// running daemon (--server URL: the daemon renders it, with counter-based link health), or from
// a crawl of the local subnet (default).
#include <httplib.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "discovery/crawler.h"
#include "discovery/netfile.h"
#include "discovery/node_name_map.h"
#include "discovery/topology_compare.h"
#include "scheduler_hooks/export_k8s.h"
#include "scheduler_hooks/export_slurm.h"
#include "scheduler_hooks/export_slurm_yaml.h"
#include "scheduler_hooks/export_volcano.h"
#include "scheduler_hooks/k8s_node_name_map.h"
#include "tools/ibfabric/commands.h"

namespace ibfabric::cli {
namespace {

namespace sh = scheduler_hooks;

struct ExportArgs {
  std::string what;  // slurm-topology | k8s-labels | kueue-topology | volcano
  std::string plugin = "tree";
  std::string slurmFormat = "conf";
  std::string topologies;  // topology.yaml entries; "" = the default set
  std::string format = "kubectl";
  std::string name = "ibfabric";
  std::string apiVersion = sh::kKueueDefaultApiVersion;
  bool excludeUnhealthy = false;
  std::string from;
  std::string server;
  std::string nodeNameMap;
  std::string k8sNodeNameMap;
  std::string output;
  CrawlOptions crawl;
};

void write(const ExportArgs& args, const std::string& text) {
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

/// GET from a running daemon; the body, or a CliError with the daemon's message.
std::string fromServer(const ExportArgs& args, const std::string& path) {
  std::string url = args.server;
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
    throw CliError("--server: expected http://HOST:PORT, got '" + args.server + "'");
  httplib::Client client(url);
  client.set_connection_timeout(10, 0);
  client.set_read_timeout(120, 0);
  auto res = client.Get(path.c_str());
  if (!res) throw CliError("cannot reach " + url + ": " + httplib::to_string(res.error()));
  if (res->status != 200) {
    auto j = nlohmann::json::parse(res->body, nullptr, false);
    std::string msg = res->body;
    if (!j.is_discarded() && j.contains("error") && j["error"].contains("message"))
      msg = j["error"]["message"].get<std::string>();
    throw CliError(url + path + ": " + std::to_string(res->status) + " " + msg);
  }
  return res->body;
}

TopologyPtr loadTopology(ExportArgs& args) {
  std::shared_ptr<const NodeNameMap> map;
  if (!args.nodeNameMap.empty()) {
    auto loaded = std::make_shared<NodeNameMap>(NodeNameMap::load(args.nodeNameMap));
    for (const auto& p : loaded->problems())
      std::fprintf(stderr, "ibfabric: warning: %s (line skipped)\n", p.message.c_str());
    map = std::move(loaded);
  }
  if (!args.from.empty()) {
    try {
      return topologyAsCrawled(parseNetFile(args.from), map, "netfile " + args.from);
    } catch (const NetFileError& e) {
      throw CliError(e.what());
    }
  }
  args.crawl.nodeNameMap = map;
  try {
    return makeSmpCrawler(args.crawl)->discover();
  } catch (const CrawlError& e) {
    throw CliError(e.what());
  }
}

std::shared_ptr<const sh::K8sNodeNameMap> loadK8sNodeNames(const ExportArgs& args) {
  if (args.k8sNodeNameMap.empty()) return nullptr;
  try {
    auto map = std::make_shared<sh::K8sNodeNameMap>(sh::K8sNodeNameMap::load(args.k8sNodeNameMap));
    for (const auto& p : map->problems())
      std::fprintf(stderr, "ibfabric: warning: %s (line skipped)\n", p.message.c_str());
    return map;
  } catch (const std::runtime_error& e) {
    throw CliError(e.what());
  }
}

void warnSkipped(const std::vector<std::string>& skipped) {
  for (const auto& e : skipped) std::fprintf(stderr, "ibfabric: warning: skipped %s\n", e.c_str());
  if (!skipped.empty())
    std::fprintf(stderr, "ibfabric: warning: %zu name(s) skipped (not valid in Kubernetes)\n",
                 skipped.size());
}

/// topology.yaml's options, checked like REST's parameters (exit 2 with the reason).
sh::SlurmYamlOptions slurmYamlOptions(const ExportArgs& args) {
  sh::SlurmYamlOptions o;
  o.prefix = args.name;
  if (auto problem = sh::slurmYamlPrefixProblem(o.prefix))
    throw CliError("--" + *problem, kExitBadInput);
  if (!args.topologies.empty())
    if (auto problem = sh::parseSlurmYamlEntries(args.topologies, o.entries))
      throw CliError("--" + *problem, kExitBadInput);
  return o;
}

std::string slurmServerPath(const ExportArgs& args, const std::string& exclude) {
  std::string path = "/api/v1/export/slurm-topology?format=" + args.slurmFormat +
                     "&plugin=" + args.plugin + "&exclude_unhealthy=" + exclude;
  if (args.slurmFormat == "yaml") {
    path += "&name=" + args.name;
    if (!args.topologies.empty()) path += "&topologies=" + args.topologies;
  }
  return path;
}

void runExport(ExportArgs& args) {
  if (!args.from.empty() && !args.server.empty())
    throw CliError("give either --from FILE or --server URL, not both");
  sh::SlurmYamlOptions yamlOptions;
  if (args.what == "slurm-topology" && args.slurmFormat == "yaml")
    yamlOptions = slurmYamlOptions(args);
  const std::string exclude = args.excludeUnhealthy ? "true" : "false";
  if (args.what == "kueue-topology") {
    if (auto problem = sh::kueueTopologyProblem(args.name, args.apiVersion)) {
      // The same reason as REST's 400, with the flag's name.
      const bool api = problem->rfind("api_version", 0) == 0;
      throw CliError((api ? "--api-version" + problem->substr(11) : "--" + *problem),
                     kExitBadInput);
    }
    return write(args, sh::kueueTopologyYaml(args.name, args.apiVersion));
  }
  if (!args.server.empty() && !args.k8sNodeNameMap.empty())
    throw CliError(
        "--k8s-node-name-map applies to --from and crawls; the daemon uses its own "
        "k8s_node_name_map");
  if (!args.server.empty()) {
    std::string path;
    if (args.what == "slurm-topology") {
      path = slurmServerPath(args, exclude);
    } else if (args.what == "k8s-labels") {
      path = "/api/v1/export/k8s-labels?format=" + args.format + "&exclude_unhealthy=" + exclude;
    } else {
      path = "/api/v1/export/volcano-hypernodes?exclude_unhealthy=" + exclude;
    }
    return write(args, fromServer(args, path));
  }
  TopologyPtr topology = loadTopology(args);
  sh::ExportOptions options;
  options.excludeUnhealthy = args.excludeUnhealthy;
  options.health = sh::hostHealthFromTopology(*topology);
  options.k8sNodeNames = loadK8sNodeNames(args);
  sh::ExportLayout layout = sh::buildExportLayout(topology, options);
  for (const auto& e : layout.excluded) std::fprintf(stderr, "ibfabric: left out %s\n", e.c_str());
  if (args.what == "slurm-topology") {
    if (layout.leafSets.empty()) throw CliError("no hosts to export");
    if (args.slurmFormat == "yaml") return write(args, sh::slurmTopologyYaml(layout, yamlOptions));
    write(args, sh::slurmTopologyConf(layout, *sh::parseSlurmPlugin(args.plugin)));
  } else if (args.what == "k8s-labels") {
    warnSkipped(sh::nodeLabels(layout).skipped);
    if (args.format == "json") {
      write(args, sh::labelsJson(layout).dump(2) + "\n");
    } else if (args.format == "yaml") {
      write(args, sh::formatLabelsYaml(layout));
    } else {
      write(args, sh::formatKubectlLabels(layout));
    }
  } else {
    warnSkipped(sh::volcanoHyperNodes(layout).skipped);
    write(args, sh::volcanoHyperNodesYaml(layout));
  }
}

CLI::App* addOne(CLI::App& parent, const std::string& name, const std::string& help,
                 const std::shared_ptr<ExportArgs>& args, bool source) {
  CLI::App* cmd = parent.add_subcommand(name, help);
  if (source) {
    cmd->add_flag("--exclude-unhealthy", args->excludeUnhealthy,
                  "leave out hosts whose HCA links are down or faulty");
    cmd->add_option("--from", args->from,
                    "read the fabric from a net file (topo gen output, ibnetdiscover dump)");
    cmd->add_option("--server", args->server,
                    "ask a running ibfabricd (http://HOST:PORT), with its link health");
    cmd->add_option("--node-name-map", args->nodeNameMap,
                    "file of <guid> \"<name>\" lines applied to node descriptions");
    if (name != "slurm-topology")
      cmd->add_option("--k8s-node-name-map", args->k8sNodeNameMap,
                      "file of '<host> <node-name>' lines: Kubernetes node names that are not "
                      "the lower-cased host names");
    addCrawlOptions(*cmd, args->crawl);
  }
  cmd->add_option("-o,--output", args->output, "write to FILE instead of stdout");
  cmd->callback([args, name] {
    args->what = name;
    runExport(*args);
  });
  return cmd;
}

}  // namespace

void addExportCommands(CLI::App& app) {
  CLI::App* exp =
      app.add_subcommand("export", "The fabric for schedulers: Slurm, Kubernetes, Kueue, Volcano");
  exp->require_subcommand(1);
  auto args = std::make_shared<ExportArgs>();
  CLI::App* slurm =
      addOne(*exp, "slurm-topology",
             "Slurm topology.conf (tree or block) or topology.yaml (Slurm 25.05+)", args, true);
  slurm->add_option("--plugin", args->plugin, "topology.conf: tree | block")
      ->check(CLI::IsMember({"tree", "block"}))
      ->capture_default_str();
  slurm->add_option("--format", args->slurmFormat, "conf (topology.conf) | yaml (topology.yaml)")
      ->check(CLI::IsMember({"conf", "yaml"}))
      ->capture_default_str();
  slurm->add_option("--topologies", args->topologies,
                    "topology.yaml entries, first = cluster default: tree,block,flat,groups "
                    "(default: tree,block,flat, and groups when there are several spine groups)");
  slurm->add_option("--name", args->name, "topology.yaml: prefix of the topology names")
      ->capture_default_str();
  addOne(*exp, "k8s-labels", "Kubernetes node labels (leaf, su, spine-group, rail-N)", args, true)
      ->add_option("--format", args->format, "kubectl | json | yaml")
      ->check(CLI::IsMember({"kubectl", "json", "yaml"}))
      ->capture_default_str();
  CLI::App* kueue =
      addOne(*exp, "kueue-topology", "Kueue Topology object of the label levels", args, false);
  kueue->add_option("--name", args->name, "metadata.name")->capture_default_str();
  kueue->add_option("--api-version", args->apiVersion, "Kueue API version")->capture_default_str();
  addOne(*exp, "volcano", "Volcano HyperNode objects (topology.volcano.sh/v1alpha1)", args, true);
}

}  // namespace ibfabric::cli
