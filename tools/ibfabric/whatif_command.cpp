// `ibfabric whatif`: asks a running daemon what draining switches and cables would break
// (POST /api/v1/whatif; read-only, no token) and prints a summary — with the jobs it hits, their
// predicted bottleneck now and after the drain and the placement engine's alternatives — or the
// answer as JSON.
//   ibfabric whatif --server http://host:8080 --switch "MF0;spine-su1-1:..." --cable GUID/PORT
#include <httplib.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/ibfabric/commands.h"

namespace ibfabric::cli {
namespace {

using nlohmann::json;

struct WhatIfArgs {
  std::string server;
  std::vector<std::string> switches;
  std::vector<std::string> cables;  // NODE/PORT (NODE a GUID or a description)
  bool json = false;
  double timeout = 30;
};

json requestOf(const WhatIfArgs& args) {
  if (args.switches.empty() && args.cables.empty())
    throw CliError("nothing to drain: give --switch and/or --cable", kExitBadInput);
  json cables = json::array();
  for (const auto& c : args.cables) {
    const auto slash = c.rfind('/');
    std::size_t used = 0;
    int port = -1;
    try {
      if (slash != std::string::npos && slash > 0) port = std::stoi(c.substr(slash + 1), &used);
    } catch (const std::exception&) {
      port = -1;
    }
    if (port < 1 || port > 254 || used != c.size() - slash - 1)
      throw CliError("--cable: expected NODE/PORT (port 1..254), got '" + c + "'", kExitBadInput);
    cables.push_back({{"node", c.substr(0, slash)}, {"port", port}});
  }
  return {{"drain", {{"switches", args.switches}, {"cables", cables}}}};
}

/// "25.0 GB/s" from bytes/s, "?" when unknown.
std::string gbps(const json& bytesPerSecond) {
  if (!bytesPerSecond.is_number()) return "?";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB/s", bytesPerSecond.get<double>() / 1e9);
  return buf;
}

/// Up to `n` names, then "... (N in all)".
std::string names(const json& list, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < list.size() && i < n; ++i)
    out += (i ? "," : "") + list[i].get<std::string>();
  if (list.size() > n) out += ",... (" + std::to_string(list.size()) + " in all)";
  return out;
}

/// One hit job: hosts hit, its predicted bottleneck now and after the drain, its alternatives.
void printJob(const json& j) {
  std::cout << "  job " << j.value("job_id", "") << " (" << j.value("source", "") << ", "
            << j.value("pattern", "") << "): " << j["hosts_hit"].size() << " of "
            << j.value("hosts", 0) << " hosts hit";
  if (j.contains("drained_links_used"))
    std::cout << ", " << j.value("drained_links_used", 0) << " drained links on its routes";
  const json& b = j.value("bottleneck", json::object());
  if (b.is_object() && b.contains("now_bytes_per_second")) {
    std::cout << "; predicted bottleneck " << gbps(b["now_bytes_per_second"]) << " -> "
              << gbps(b["after_bytes_per_second"]) << " per flow";
    if (b["drop_fraction"].is_number())
      std::cout << " (" << static_cast<int>(100 * b["drop_fraction"].get<double>() + 0.5)
                << " % lower)";
  }
  std::cout << "\n";
  int rank = 0;
  if (j["alternatives"].is_array())
    for (const auto& o : j["alternatives"])
      std::cout << "    alternative " << ++rank << ": " << names(o["hosts"], 8) << " ("
                << gbps(o["bottleneck_bytes_per_second"]) << " per flow after the drain)\n";
  if (!j.value("alternatives_note", "").empty())
    std::cout << "    " << j.value("alternatives_note", "") << "\n";
}

void printSummary(const json& a) {
  std::cout << "hosts cut off: " << a.value("hosts_cut_off", 0)
            << ", HCAs lost: " << a.value("hcas_lost", 0) << "\n";
  for (const auto& h : a["hosts"]) {
    std::cout << "  " << h.value("host", "") << ": " << h.value("hcas_lost", 0) << " of "
              << h.value("hcas", 0) << " HCAs" << (h.value("cut_off", false) ? " (cut off)" : "");
    for (const auto& l : h["lost"])
      std::cout << "; " << l.value("hca", "") << " rail " << l.value("rail", -1) << " "
                << l.value("why", "");
    std::cout << "\n";
  }
  for (const auto& g : a["leaf_groups"])
    std::cout << "leaf group " << g.value("group", -1) << ": " << g.value("drained", 0) << " of "
              << g.value("up_links", 0) << " up-links, "
              << static_cast<int>(100 * g.value("fraction_lost", 0.0) + 0.5) << " % lost\n";
  std::cout << "leaves losing up-links: " << a["leaves"].size() << "\n";
  if (a["reroute"].is_object())
    std::cout << "destinations the SM must reroute: " << a["reroute"].value("destinations", 0)
              << " (" << a["reroute"].value("entries", 0) << " forwarding entries)\n";
  else
    std::cout << "destinations to reroute: unknown (no forwarding tables read yet)\n";
  if (a["allocations"].is_array()) {
    std::cout << "jobs hit: " << a["allocations"].size() << "\n";
    for (const auto& j : a["allocations"]) printJob(j);
  } else if (a.contains("allocations_model")) {
    std::cout << "jobs: " << a["allocations_model"].value("reason", "not known") << "\n";
  }
}

void run(const WhatIfArgs& args) {
  const json body = requestOf(args);
  httplib::Client client(args.server);
  if (!client.is_valid()) throw CliError("--server: not a URL: " + args.server, kExitBadInput);
  const auto secs = static_cast<time_t>(args.timeout);
  client.set_connection_timeout(secs, 0);
  client.set_read_timeout(secs, 0);
  auto res = client.Post("/api/v1/whatif", body.dump(), "application/json");
  if (!res) throw CliError("cannot reach " + args.server + ": " + httplib::to_string(res.error()));
  const json answer = json::parse(res->body, nullptr, false);
  if (res->status != 200 || !answer.is_object()) {
    const std::string message = answer.is_object() && answer.contains("error")
                                    ? answer["error"].value("message", res->body)
                                    : res->body;
    throw CliError("whatif refused (" + std::to_string(res->status) + "): " + message,
                   res->status == 400 || res->status == 404 ? kExitBadInput : 1);
  }
  if (args.json)
    std::cout << answer.dump(2) << "\n";
  else
    printSummary(answer);
}

}  // namespace

void addWhatIfCommand(CLI::App& app) {
  auto args = std::make_shared<WhatIfArgs>();
  CLI::App* cmd = app.add_subcommand(
      "whatif", "What draining switches and cables would break (a running daemon; read-only)");
  cmd->add_option("--server", args->server, "The daemon (http://host:port)")->required();
  cmd->add_option("--switch", args->switches, "A switch to drain: GUID or description");
  cmd->add_option("--cable", args->cables, "A cable to drain: NODE/PORT of one of its ends");
  cmd->add_flag("--json", args->json, "Print the daemon's answer as JSON");
  cmd->add_option("--timeout", args->timeout, "Seconds to wait for the daemon")
      ->check(CLI::PositiveNumber);
  cmd->callback([args] { run(*args); });
}

}  // namespace ibfabric::cli
