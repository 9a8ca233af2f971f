// `ibfabric place`: ranked host sets for a job from the placement engine (docs/placement.md).
//
// With --server URL the request is POSTed to a running daemon (/api/v1/placement). Without it
// the command builds its own inputs: a crawl, every switch's forwarding table, and two counter
// sweeps --interval apart for the link load; then it places.
#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "api/http/placement_json.h"
#include "discovery/crawler.h"
#include "discovery/hostlist.h"
#include "routing/placement_engine.h"
#include "tools/ibfabric/commands.h"
#include "tools/ibfabric/place_local.h"

namespace ibfabric::cli {
namespace {

using nlohmann::json;

struct PlaceArgs {
  int hosts = 0;
  int gpus = 0;
  int gpusPerHost = 0;
  std::string pattern = "ring_allreduce";
  std::string candidatesFile;
  std::vector<std::string> exclude;
  int alternatives = 1;
  bool allowDegraded = false;
  std::string format = "table";
  std::string server;
  double interval = 2.0;
  double timeout = 30.0;
  CrawlOptions crawl;
};

/// Host names from a file: whitespace/comma separated names or Slurm host lists; '#' comments.
std::vector<std::string> readCandidates(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw CliError("--candidates: cannot read " + path);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    // Split on whitespace and on commas outside brackets.
    std::string token;
    int depth = 0;
    auto flush = [&] {
      if (token.empty()) return;
      try {
        for (auto& name : expandHostlist(token, 1'000'000)) out.push_back(std::move(name));
      } catch (const std::exception& e) {
        throw CliError("--candidates: " + path + ": " + e.what());
      }
      token.clear();
    };
    for (char c : line) {
      if (c == '[') ++depth;
      if (c == ']') --depth;
      if (std::isspace(static_cast<unsigned char>(c)) || (c == ',' && depth == 0)) {
        flush();
      } else {
        token += c;
      }
    }
    flush();
  }
  return out;
}

routing::PlacementAnswer placeOnServer(const PlaceArgs& args,
                                       const routing::PlacementRequest& request) {
  httplib::Client client(args.server);
  if (!client.is_valid()) throw CliError("--server: not a URL: " + args.server);
  auto secs = static_cast<time_t>(args.timeout);
  client.set_connection_timeout(secs, 0);
  client.set_read_timeout(secs, 0);
  auto res = client.Post("/api/v1/placement", api::placementRequestToJson(request).dump(),
                         "application/json");
  if (!res) {
    throw CliError("cannot reach " + args.server + ": " + httplib::to_string(res.error()));
  }
  json body;
  try {
    body = json::parse(res->body);
  } catch (const json::exception&) {
    throw CliError("server answered " + std::to_string(res->status) + " without JSON");
  }
  if (res->status != 200) {
    std::string message =
        body.contains("error") ? body["error"].value("message", std::string()) : res->body;
    throw CliError("placement failed (" + std::to_string(res->status) + "): " + message,
                   res->status == 422 ? 3 : 1);
  }
  try {
    return api::placementAnswerFromJson(body);
  } catch (const std::exception& e) {
    throw CliError(e.what());
  }
}

void print(const PlaceArgs& args, const routing::PlacementAnswer& answer) {
  for (const auto& w : answer.warnings) std::fprintf(stderr, "ibfabric: warning: %s\n", w.c_str());
  if (args.format == "json") {
    std::printf("%s\n", api::placementAnswerToJson(answer).dump(2).c_str());
    return;
  }
  if (args.format == "hostlist") {
    for (const auto& o : answer.options) std::printf("%s\n", compressHostlist(o.hosts).c_str());
    return;
  }
  int rank = 1;
  for (const auto& o : answer.options) {
    std::printf("option %d: %s\n", rank++, compressHostlist(o.hosts).c_str());
    std::printf("  %s\n", o.score.explanation.c_str());
    std::printf("  leaf switches %d, max hops %d, bottleneck %.2f GB/s per flow, objective %.4f\n",
                o.score.leafSwitches, o.score.maxHops, o.score.bottleneckBytesPerSecond / 1e9,
                o.score.objective);
    for (const auto& l : o.score.hottestLinks) {
      std::printf("  hot: %s[%d] -> %s[%d] %.0f%% used, %d job flow%s\n", l.fromNode.c_str(),
                  l.fromPort, l.toNode.c_str(), l.toPort, l.utilization * 100, l.jobFlows,
                  l.jobFlows == 1 ? "" : "s");
    }
    std::printf("  rank order: ");
    for (std::size_t i = 0; i < o.hosts.size(); ++i) {
      std::printf("%s%s", i ? " " : "", o.hosts[i].c_str());
    }
    std::printf("\n");
  }
}

}  // namespace

void addPlaceCommand(CLI::App& app) {
  auto args = std::make_shared<PlaceArgs>();
  auto* cmd = app.add_subcommand(
      "place", "Ranked host sets for a job: routes + link load + health (docs/placement.md)");
  cmd->add_option("--hosts", args->hosts, "Hosts wanted")->check(CLI::Range(1, 1'000'000));
  cmd->add_option("--gpus", args->gpus, "GPUs wanted (with --gpus-per-host)")
      ->check(CLI::Range(1, 8'000'000));
  cmd->add_option("--gpus-per-host", args->gpusPerHost, "GPUs per host")->check(CLI::Range(1, 64));
  cmd->add_option("--pattern", args->pattern, "none|ring_allreduce|alltoall")
      ->capture_default_str();
  cmd->add_option("--candidates", args->candidatesFile,
                  "File of free hosts (names or Slurm host lists)");
  cmd->add_option("--exclude", args->exclude, "Hosts to leave out (names or host lists)");
  cmd->add_option("--alternatives", args->alternatives, "Ranked alternatives")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  cmd->add_flag("--allow-degraded", args->allowDegraded, "Accept hosts with degraded HCA links");
  cmd->add_option("--format", args->format, "table|json|hostlist")
      ->check(CLI::IsMember({"table", "json", "hostlist"}))
      ->capture_default_str();
  cmd->add_option("--server", args->server, "Ask a running daemon (http://host:port)");
  cmd->add_option("--timeout", args->timeout, "Seconds to wait for the daemon")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  cmd->add_option("--interval", args->interval,
                  "Without --server: seconds between the two counter sweeps")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  addCrawlOptions(*cmd, args->crawl);
  cmd->callback([args] {
    routing::PlacementRequest request;
    request.hosts = args->hosts;
    request.gpus = args->gpus;
    request.gpusPerHost = args->gpusPerHost;
    auto pattern = routing::parseCommPattern(args->pattern);
    if (!pattern) throw CliError("--pattern: must be none, ring_allreduce or alltoall");
    request.pattern = *pattern;
    if (request.hosts == 0 && request.gpus == 0) throw CliError("--hosts or --gpus is required");
    if (request.hosts == 0 && request.gpusPerHost == 0) {
      throw CliError("--gpus needs --gpus-per-host");
    }
    if (!args->candidatesFile.empty()) request.candidates = readCandidates(args->candidatesFile);
    for (const auto& e : args->exclude) {
      try {
        for (auto& name : expandHostlist(e)) request.exclude.push_back(std::move(name));
      } catch (const std::exception& ex) {
        throw CliError(std::string("--exclude: ") + ex.what());
      }
    }
    request.allowDegraded = args->allowDegraded;
    request.alternatives = args->alternatives;
    routing::PlacementAnswer answer;
    if (!args->server.empty()) {
      answer = placeOnServer(*args, request);
    } else {
      try {
        answer = placeLocally(args->crawl, args->interval, request);
      } catch (const routing::PlacementError& e) {
        throw CliError(e.what(), e.kind() == routing::PlacementError::Kind::kUnsatisfiable ? 3 : 1);
      }
    }
    print(*args, answer);
  });
}

}  // namespace ibfabric::cli
