// `ibfabric forget`: tells a running daemon that missing hardware was removed on purpose, so it
// leaves the remembered fabric (discovery/fabric_memory.h): DELETE /api/v1/nodes/{guid} or
// /api/v1/links/{guid}/{port}. The token comes from --token-file or $IBFABRIC_TOKEN (never the
// command line, which other users can read).
#include <httplib.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "tools/ibfabric/commands.h"

namespace ibfabric::cli {
namespace {

using nlohmann::json;

struct ForgetArgs {
  std::string server;
  std::string node;
  std::string link;  // GUID/PORT
  std::string tokenFile;
  double timeout = 10;
};

std::string readToken(const ForgetArgs& args) {
  if (!args.tokenFile.empty()) {
    std::ifstream in(args.tokenFile);
    if (!in) throw CliError("--token-file: cannot read " + args.tokenFile, kExitBadInput);
    std::string token;
    std::getline(in, token);
    while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
    return token;
  }
  const char* env = std::getenv("IBFABRIC_TOKEN");
  if (!env || !*env)
    throw CliError("forget needs the API token: --token-file FILE or $IBFABRIC_TOKEN",
                   kExitBadInput);
  return env;
}

/// The DELETE path: /api/v1/nodes/GUID or /api/v1/links/GUID/PORT.
std::string pathOf(const ForgetArgs& args) {
  if (args.node.empty() == args.link.empty())
    throw CliError("give exactly one of --node GUID and --link GUID/PORT", kExitBadInput);
  if (!args.node.empty()) return "/api/v1/nodes/" + args.node;
  const auto slash = args.link.rfind('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == args.link.size())
    throw CliError("--link: expected GUID/PORT, got '" + args.link + "'", kExitBadInput);
  return "/api/v1/links/" + args.link;
}

void run(const ForgetArgs& args) {
  const std::string path = pathOf(args);
  const std::string token = readToken(args);
  httplib::Client client(args.server);
  if (!client.is_valid()) throw CliError("--server: not a URL: " + args.server, kExitBadInput);
  const auto secs = static_cast<time_t>(args.timeout);
  client.set_connection_timeout(secs, 0);
  client.set_read_timeout(secs, 0);
  auto res = client.Delete(path, httplib::Headers{{"Authorization", "Bearer " + token}});
  if (!res) throw CliError("cannot reach " + args.server + ": " + httplib::to_string(res.error()));
  const json body = json::parse(res->body, nullptr, false);
  if (res->status != 200) {
    const std::string message = body.is_object() && body.contains("error")
                                    ? body["error"].value("message", res->body)
                                    : res->body;
    throw CliError("forget refused (" + std::to_string(res->status) + "): " + message);
  }
  std::cout << "forgotten: " << body.value("description", std::string()) << " ("
            << body.value("guid", std::string())
            << (body.contains("port") ? " port " + body["port"].dump() : std::string()) << ")\n";
}

}  // namespace

void addForgetCommand(CLI::App& app) {
  auto args = std::make_shared<ForgetArgs>();
  CLI::App* cmd = app.add_subcommand(
      "forget", "Forget missing hardware removed on purpose (a running daemon's model)");
  cmd->add_option("--server", args->server, "The daemon (http://host:port)")->required();
  cmd->add_option("--node", args->node, "A missing node's GUID (its cables go with it)");
  cmd->add_option("--link", args->link, "A missing cable: GUID/PORT of one of its ends");
  cmd->add_option("--token-file", args->tokenFile,
                  "File holding the API token (else $IBFABRIC_TOKEN)");
  cmd->add_option("--timeout", args->timeout, "Seconds to wait for the daemon")
      ->check(CLI::PositiveNumber);
  cmd->callback([args] { run(*args); });
}

}  // namespace ibfabric::cli
