// `ibfabric whatif`: asks a running daemon what draining switches and cables would break
// (POST /api/v1/whatif; read-only, no token) and prints a summary, or the answer as JSON.
//   ibfabric whatif --server http://host:8080 --switch "MF0;spine-su1-1:..." --cable GUID/PORT
#include <httplib.h>

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
  if (a["allocations"].is_array())
    for (const auto& j : a["allocations"])
      std::cout << "allocation " << j.value("job_id", "") << ": " << j["hosts_hit"].size() << " of "
                << j.value("hosts", 0) << " hosts hit\n";
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
