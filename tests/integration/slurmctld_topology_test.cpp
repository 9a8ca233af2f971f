// The exported topology.conf (topology/tree) loaded by a real slurmctld: Debian's slurmctld and
// munge (scripts/deps.sh), started privately by the test on loopback (its own munge socket and
// key, a free port, a scratch state directory). `scontrol show topology` must list every
// exported switch with the nodes below it, the top switch must reach every node, and the
// controller's log must have no topology warning ("switches lack access", "Multiple leaf
// switches", "not a tree", ...) — for a superpod, a three-level tree, and after a host lost an HCA
// link (the export keeps it in its unit; `scontrol reconfigure` reloads the file).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "discovery/hostlist.h"
#include "discovery/netfile.h"
#include "tests/support/background_process.h"
#include "tests/support/free_port.h"
#include "tests/support/net_edits.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using namespace std::chrono_literals;

/// munged + slurmctld in `dir` for the nodes `hosts`, with `topologyConf` as dir/topology.conf.
class PrivateSlurm {
 public:
  PrivateSlurm(const std::filesystem::path& dir, const std::vector<std::string>& hosts,
               const std::string& topologyConf)
      : dir_(dir) {
    std::filesystem::create_directories(dir_ / "state");
    write("topology.conf", topologyConf);
    write("munge.key", std::string(1024, 'k'), std::filesystem::perms::owner_read);
    munge_ = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{"/usr/sbin/munged", "-F", "-f", "-S", path("munge.sock"),
                                 "--key-file=" + path("munge.key"),
                                 "--pid-file=" + path("munged.pid"),
                                 "--seed-file=" + path("munged.seed")},
        dir_ / "munged.log");
    if (!waitFor([&] { return std::filesystem::exists(dir_ / "munge.sock"); }, 20s))
      throw std::runtime_error("munged did not start: " + munge_->log());
    write("slurm.conf", slurmConf(hosts));
    ctld_ = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{"/usr/sbin/slurmctld", "-D", "-i", "-f", path("slurm.conf")},
        dir_ / "slurmctld.out");
  }
  ~PrivateSlurm() {
    if (ctld_) ctld_->stop(SIGTERM, 20s);
    if (munge_) munge_->stop(SIGTERM, 10s);
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& text,
             std::filesystem::perms perms = std::filesystem::perms::owner_read |
                                            std::filesystem::perms::owner_write) {
    std::filesystem::remove(dir_ / name);
    std::ofstream(dir_ / name) << text;
    std::filesystem::permissions(dir_ / name, perms);
  }
  ProcessResult scontrol(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"/usr/bin/scontrol"};
    argv.insert(argv.end(), args.begin(), args.end());
    return runProcess(argv, 20s, {{"SLURM_CONF", path("slurm.conf")}});
  }
  /// `scontrol show topology` once the controller answers (≤ 60 s).
  std::string topology() const {
    ProcessResult r;
    waitFor([&] { return (r = scontrol({"show", "topology"})).exitCode == 0; }, 60s, 200ms);
    if (r.exitCode != 0) throw std::runtime_error("slurmctld does not answer: " + r.describe());
    return r.out;
  }
  std::string log() const {
    std::ifstream in(dir_ / "slurmctld.log");
    return {std::istreambuf_iterator<char>(in), {}};
  }

 private:
  std::string slurmConf(const std::vector<std::string>& hosts) const {
    const int port = freeLoopbackPort();
    std::ostringstream c;
    c << "ClusterName=ibfabric\nSlurmctldHost=localhost(127.0.0.1)\n"
      << "SlurmctldPort=" << port << "\nSlurmdPort=" << freeLoopbackPort() << "\n"
      << "SlurmUser=root\nAuthType=auth/munge\nCredType=cred/munge\n"
      << "AuthInfo=socket=" << path("munge.sock") << "\n"
      << "StateSaveLocation=" << path("state") << "\nSlurmdSpoolDir=" << path("spool") << "\n"
      << "SlurmctldPidFile=" << path("slurmctld.pid") << "\n"
      << "SlurmctldLogFile=" << path("slurmctld.log") << "\nSlurmctldDebug=info\n"
      << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nMpiDefault=none\n"
      << "SelectType=select/cons_tres\nTopologyPlugin=topology/tree\n"
      // Every node on a loopback address: slurmctld resolves them at start.
      << "NodeName=" << compressHostlist(hosts) << " NodeAddr=127.0.0.[1-" << hosts.size()
      << "] CPUs=1 State=UNKNOWN\nPartitionName=all Nodes=ALL Default=YES State=UP\n";
    return c.str();
  }

  std::filesystem::path dir_;
  std::unique_ptr<BackgroundProcess> munge_, ctld_;
};

/// SwitchName -> Nodes of `scontrol show topology`.
std::map<std::string, std::set<std::string>> switchesOf(const std::string& shown) {
  std::map<std::string, std::set<std::string>> out;
  std::istringstream in(shown);
  std::string line;
  const std::regex re(R"(SwitchName=(\S+) .*Nodes=(\S+))");
  std::smatch m;
  while (std::getline(in, line)) {
    if (!std::regex_search(line, m, re)) continue;
    auto nodes = expandHostlist(m[2].str());
    out[m[1].str()] = {nodes.begin(), nodes.end()};
  }
  return out;
}

/// Log lines slurmctld writes about a topology it dislikes.
std::vector<std::string> topologyWarnings(const std::string& log) {
  std::vector<std::string> out;
  std::istringstream in(log);
  std::string line;
  const std::regex bad(R"((error|warning|fatal).*(switch|topolog|leaf))", std::regex::icase);
  while (std::getline(in, line))
    if (std::regex_search(line, bad)) out.push_back(line);
  return out;
}

std::string exportConf(const std::filesystem::path& net) {
  auto r = runCli({"export", "slurm-topology", "--plugin", "tree", "--from", net.string()});
  if (r.exitCode != 0) throw std::runtime_error(r.describe());
  return r.out;
}

std::filesystem::path generated(const std::string& name, const std::vector<std::string>& args) {
  auto path = scratchDir() / (name + ".net");
  std::vector<std::string> cmd = {"topo", "gen", "-o", path.string()};
  cmd.insert(cmd.end(), args.begin(), args.end());
  auto r = runCli(cmd);
  if (r.exitCode != 0) throw std::runtime_error(r.describe());
  return path;
}

void expectLoaded(PrivateSlurm& slurm, const std::string& conf, const std::string& what) {
  const auto shown = switchesOf(slurm.topology());
  std::set<std::string> all, exported;
  std::regex re(R"(^SwitchName=(\S+)(?: Nodes=(\S+))?)");
  std::istringstream in(conf);
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, re)) {
      exported.insert(m[1].str());
      if (m[2].matched)
        for (auto& n : expandHostlist(m[2].str())) all.insert(n);
    }
  std::set<std::string> listed;
  for (const auto& [name, nodes] : shown) listed.insert(name);
  EXPECT_EQ(listed, exported) << what;
  ASSERT_TRUE(shown.count("ibfabric-root")) << what;
  EXPECT_EQ(shown.at("ibfabric-root"), all) << what;  // the top switch reaches every node
  EXPECT_EQ(topologyWarnings(slurm.log()), std::vector<std::string>{}) << what;
}

std::vector<std::string> dgx(int count) {
  std::vector<std::string> out;
  for (int i = 1; i <= count; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "dgx%04d", i);
    out.push_back(name);
  }
  return out;
}

TEST(SlurmctldTopology, LoadsTheTreeExportWithoutWarningsAlsoAfterAHostLostALink) {
  const auto net = generated("slurmctld-superpod", {"--preset", "superpod", "--sus", "2"});
  const std::string conf = exportConf(net);
  PrivateSlurm slurm(scratchDir() / "slurm-superpod", dgx(64), conf);
  expectLoaded(slurm, conf, "superpod");

  // dgx0003 loses its rail-2 cable: the export keeps it in su01 (one leaf per node).
  NetFabric f = parseNetFile(net);
  unlink(f, "dgx0003-mlx5_2", 1);
  auto changed = scratchDir() / "slurmctld-superpod-unlinked.net";
  std::ofstream(changed) << formatNetFile(f);
  const std::string after = exportConf(changed);
  EXPECT_NE(after.find("SwitchName=su01 Nodes=dgx[0001-0032]"), std::string::npos) << after;
  slurm.write("topology.conf", after);
  ASSERT_EQ(slurm.scontrol({"reconfigure"}).exitCode, 0);
  expectLoaded(slurm, after, "superpod, dgx0003 with a cable less");
}

TEST(SlurmctldTopology, LoadsAThreeLevelTree) {
  const auto net = generated("slurmctld-three-level",
                             {"--preset", "three-level", "--pods", "2", "--leaves-per-pod", "2",
                              "--spines-per-pod", "2", "--cores", "2", "--hosts-per-leaf", "2"});
  const std::string conf = exportConf(net);
  PrivateSlurm slurm(scratchDir() / "slurm-three-level", dgx(8), conf);
  expectLoaded(slurm, conf, "three-level");
}

}  // namespace
}  // namespace ibfabric::testing
