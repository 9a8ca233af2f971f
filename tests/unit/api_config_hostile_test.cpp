// ibfabricd's configuration against hostile input: YAML values of the wrong shape anywhere are
// ConfigErrors naming the key (never a YAML exception), and the deeper checks of --check-config
// (TLS PEM files, socket paths, the journal directory, the pool inventory, the node-name map).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "api/daemon/config_check.h"
#include "api/daemon/service_config.h"
#include "scheduler_hooks/pool.h"
#include "scheduler_hooks/pool/journal_file.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

namespace fs = std::filesystem;

/// The ConfigError's message for `yaml`; fails the test when it throws anything else.
std::string configError(const std::string& yaml) {
  try {
    loadConfigText(yaml);
  } catch (const ConfigError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a ConfigError: " << e.what() << "\n" << yaml;
    return "";
  }
  ADD_FAILURE() << "accepted:\n" << yaml;
  return "";
}

TEST(ApiConfigHostile, WrongYamlShapesAreConfigErrorsNamingTheKey) {
  const auto inventory = testing::writeScratchFile(
      "hostile-inventory.json", R"({"hosts": [{"name": "dgx01", "gpu_count": 8}]})");
  const std::string pool = "pool:\n  inventory: " + inventory.string() + "\n";
  const struct {
    std::string yaml;
    std::string names;
  } cases[] = {
      {"pool: {[a]: 1}\n", "pool"},
      {"pool: {inventory: [a]}\n", "pool.inventory"},
      {"pool: {journal: {a: 1}}\n", "pool.journal"},
      {"pool: {compact_every: [1]}\n", "pool.compact_every"},
      {pool + "  quotas:\n    - {class: [x], max_percent: 50}\n", "pool.quotas[0].class"},
      {pool + "  quotas:\n    - {class: training, max_percent: {a: 1}}\n",
       "pool.quotas[0].max_percent"},
      {pool + "  quotas:\n    - {[k]: 1}\n", "pool.quotas[0]"},
      {"metrics: {collectors: {[a]: true}}\n", "key"},
      {"mad: {[window]: 1}\n", "key"},
      {"{[a, b]: 1}\n", "key"},
      {"tls: {cert: [a], key: b}\n", "tls.cert"},
      {"listen: {a: 1}\n", "listen"},
  };
  for (const auto& c : cases) {
    const std::string message = configError(c.yaml);
    EXPECT_NE(message.find(c.names), std::string::npos) << message << "\n" << c.yaml;
  }
}

TEST(ApiConfigHostile, CheckConfigLoadsTheTlsFiles) {
  ServiceConfig c;
  c.tlsCert = testing::writeScratchFile("garbage-cert.pem", "not a certificate\n").string();
  c.tlsKey =
      testing::writeScratchFile("garbage-key.pem", "-----BEGIN PRIVATE KEY-----\nxx\n").string();
  try {
    checkConfigFiles(c);
    FAIL() << "garbage PEM files accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("tls"), std::string::npos) << e.what();
  }
}

TEST(ApiConfigHostile, CheckConfigChecksTheSocketPath) {
  EXPECT_NO_THROW(checkSocketPath((testing::scratchDir() / "osm.sock").string(), "osm_events"));
  EXPECT_THROW(checkSocketPath("/tmp/" + std::string(120, 's'), "osm_events"), ConfigError);
  const auto file = testing::writeScratchFile("not-a-socket", "x");
  EXPECT_THROW(checkSocketPath(file.string(), "osm_events"), ConfigError);
  EXPECT_THROW(checkSocketPath("/nonexistent-dir/osm.sock", "osm_events"), ConfigError);
  ServiceConfig c;
  c.osmEvents = file.string();
  EXPECT_THROW(checkConfigFiles(c), ConfigError);
}

TEST(ApiConfigHostile, CheckConfigChecksTheJournalAndParsesTheInventory) {
  ServiceConfig c;
  c.pool.enabled = true;
  c.pool.journal = testing::writeScratchFile("journal-is-a-file", "x").string();
  EXPECT_THROW(checkConfigFiles(c), ConfigError);
  c.pool.journal = (testing::scratchDir() / "journal-dir").string();
  std::filesystem::remove_all(c.pool.journal);
  EXPECT_NO_THROW(checkConfigFiles(c));
  {
    scheduler_hooks::PoolJournal j(c.pool.journal);
    j.open();
    j.append({{"op", "free"}, {"job", "a"}, {"seq", 1}});
    EXPECT_NO_THROW(checkConfigFiles(c)) << "read-only: the running daemon's lock is no matter";
    j.append({{"op", "free"}, {"job", "b"}, {"seq", 3}});
  }
  try {
    checkConfigFiles(c);
    ADD_FAILURE() << "a sequence gap passed --check-config";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("journal.log is corrupt at offset"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(c.pool.journal);
  c.pool.inventory =
      testing::writeScratchFile("bad-inventory.json", R"({"hosts": [{"name":)").string();
  EXPECT_THROW(checkConfigFiles(c), ConfigError);
  c.pool.inventory =
      testing::writeScratchFile("index-overflow.json",
                                R"({"hosts": [{"name": "h1", "gpus": [{"index": 4294967296}]}]})")
          .string();
  EXPECT_THROW(checkConfigFiles(c), ConfigError);
  c.pool.inventory = testing::writeScratchFile("good-inventory.json",
                                               R"({"hosts": [{"name": "h1", "gpu_count": 8}]})")
                         .string();
  EXPECT_NO_THROW(checkConfigFiles(c));
}

TEST(ApiConfigHostile, TheKubernetesNodeNameMapIsReadAndCheckedWithTheLine) {
  EXPECT_THROW(loadConfigText("k8s_node_name_map: /nonexistent/k8s-map\n"), ConfigError);
  const auto good = testing::writeScratchFile("k8s-good.map", "gpu_node01 gpu-node01\n");
  ServiceConfig c = loadConfigText("k8s_node_name_map: " + good.string() + "\n");
  EXPECT_EQ(c.k8sNodeNameMap, good.string());
  EXPECT_NO_THROW(checkConfigFiles(c));
  c.k8sNodeNameMap =
      testing::writeScratchFile("k8s-bad.map", "gpu_node01 gpu-node01\ngpu_node02 Gpu_Node02\n")
          .string();
  try {
    checkConfigFiles(c);
    FAIL() << "a node name the API server rejects was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("k8s_node_name_map: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(":2: 'Gpu_Node02'"), std::string::npos) << e.what();
  }
}

TEST(ApiConfigHostile, IntegerFieldsAreRangeCheckedBeforeNarrowing) {
  using scheduler_hooks::requestFromJson;
  const auto request = [](const std::string& extra) {
    return nlohmann::json::parse(R"({"job_id": "j", "class": "training", )" + extra + "}");
  };
  EXPECT_NO_THROW(requestFromJson(request(R"("gpus": 1)")));
  EXPECT_THROW(requestFromJson(request(R"("gpus": 4294967297)")), scheduler_hooks::PoolError);
  EXPECT_THROW(requestFromJson(request(R"("gpus": 1, "priority": 18446744073709551615)")),
               scheduler_hooks::PoolError);
  EXPECT_THROW(requestFromJson(request(R"("gpus": 1, "priority": -9223372036854775808)")),
               scheduler_hooks::PoolError);
  EXPECT_THROW(requestFromJson(request(R"("gpus": 8, "gpus_per_host": 4294967304)")),
               scheduler_hooks::PoolError);
}

TEST(ApiConfigHostile, AllocationRecordNumbersAreCheckedBeforeConversion) {
  // Found by tests/fuzz/pool_journal_fuzz.cpp: a journal or snapshot allocation with a double
  // out of range (sequence, created_unix_ms, a GPU index) was converted with undefined
  // behaviour; a GPU index of 2^40 wrapped to 0.
  using scheduler_hooks::allocationFromJson;
  const auto record = [](const std::string& sequence, const std::string& created,
                         const std::string& gpus) {
    return nlohmann::json::parse(
        R"({"job_id": "j", "class": "training", "gpus": 8, "state": "active", "hosts": )"
        R"([{"host": "dgx01", "gpus": )" +
        gpus + R"(}], "sequence": )" + sequence + R"(, "created_unix_ms": )" + created +
        R"(, "gpu_equivalents": 8.0})");
  };
  const auto ok = allocationFromJson(record("3", "1796420507651", "[0, 7]"));
  EXPECT_EQ(ok.sequence, 3u);
  EXPECT_EQ(ok.hosts.at(0).gpus, (std::vector<int>{0, 7}));
  for (const auto& [sequence, created, gpus] :
       {std::tuple{"1e30", "1", "[0]"}, std::tuple{"-3", "1", "[0]"},
        std::tuple{"1", "1e300", "[0]"}, std::tuple{"1", "1.5", "[0]"},
        std::tuple{"1", "1", "[1e20]"}, std::tuple{"1", "1", "[1099511627776]"},
        std::tuple{"1", "1", "3"}})
    EXPECT_THROW(allocationFromJson(record(sequence, created, gpus)), scheduler_hooks::PoolError)
        << sequence << " " << created << " " << gpus;
}

}  // namespace
}  // namespace ibfabric::api
