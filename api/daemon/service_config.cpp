#include "api/daemon/service_config.h"

#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace ibfabric::api {
namespace {

ServiceConfig applyConfigText(std::string_view yaml, ServiceConfig c);

template <typename T>
T scalar(const YAML::Node& node, const std::string& key) {
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    throw ConfigError("config: \"" + key + "\" has the wrong type");
  }
}

/// Keys of a nested mapping must be among `allowed`.
void checkKeys(const YAML::Node& map, const std::string& name,
               const std::set<std::string>& allowed) {
  if (!map.IsMap()) throw ConfigError("config: \"" + name + "\" must be a mapping");
  for (const auto& kv : map) {
    const std::string key = scalar<std::string>(kv.first, "key");
    if (!allowed.count(key)) throw ConfigError("config: unknown key \"" + name + "." + key + "\"");
  }
}

/// metrics.counters: a list of counter set names, or "all".
std::uint32_t parseCounterSets(const YAML::Node& n) {
  if (n.IsScalar() && scalar<std::string>(n, "metrics.counters") == "all")
    return MetricsOptions::allCounterSets();
  if (!n.IsSequence())
    throw ConfigError("metrics.counters: must be a list of counter sets or \"all\"");
  std::uint32_t sets = 0;
  for (const auto& item : n) {
    const std::string name = scalar<std::string>(item, "metrics.counters");
    const auto set = parseCounterSet(name);
    if (!set)
      throw ConfigError("metrics.counters: unknown counter set \"" + name +
                        "\" (traffic, packets, errors, physical_errors, filter_errors, "
                        "congestion, utilization, link)");
    sets |= MetricsOptions::bit(*set);
  }
  return sets;
}

/// metrics.collectors: a mapping of state collector names to true (run) or false (off).
std::vector<std::string> parseDisabledCollectors(const YAML::Node& m) {
  if (!m.IsMap()) throw ConfigError("config: \"metrics.collectors\" must be a mapping");
  const auto& names = optionalCollectorNames();
  std::vector<std::string> off;
  for (const auto& kv : m) {
    const std::string key = scalar<std::string>(kv.first, "key");
    if (key == "daemon") throw ConfigError("metrics.collectors.daemon: cannot be turned off");
    if (std::find(names.begin(), names.end(), key) == names.end())
      throw ConfigError("config: unknown key \"metrics.collectors." + key + "\"");
    if (!scalar<bool>(kv.second, "metrics.collectors." + key)) off.push_back(key);
  }
  return off;
}

void applyMetricsKeys(const YAML::Node& m, ServiceConfig& c) {
  checkKeys(m, "metrics", {"port_labels", "ports", "counters", "collectors"});
  if (auto n = m["port_labels"])
    c.metricsPortLabels = scalar<std::string>(n, "metrics.port_labels");
  if (auto n = m["ports"]) {
    const std::string v = scalar<std::string>(n, "metrics.ports");
    const auto scope = parsePortScope(v);
    if (!scope) throw ConfigError("metrics.ports: must be switch or all (got \"" + v + "\")");
    c.metrics.ports = *scope;
  }
  if (auto n = m["counters"]) c.metrics.counterSets = parseCounterSets(n);
  if (auto n = m["collectors"]) c.metrics.disabledCollectors = parseDisabledCollectors(n);
}

void applyOperationalKeys(const YAML::Node& root, ServiceConfig& c) {
  if (auto n = root["clear_saturated_counters"])
    c.clearSaturatedCounters = scalar<bool>(n, "clear_saturated_counters");
  if (auto n = root["expected_topology"])
    c.expectedTopology = scalar<std::string>(n, "expected_topology");
  if (auto m = root["metrics"]) applyMetricsKeys(m, c);
  if (auto m = root["tls"]) {
    checkKeys(m, "tls", {"cert", "key"});
    if (auto n = m["cert"]) c.tlsCert = scalar<std::string>(n, "tls.cert");
    if (auto n = m["key"]) c.tlsKey = scalar<std::string>(n, "tls.key");
  }
}

/// One pool.quotas entry (a mapping of scalars) through the quota parser of the pool.
scheduler_hooks::QuotaRule parseQuota(const YAML::Node& item, std::size_t index) {
  const std::string where = "pool.quotas[" + std::to_string(index) + "]";
  if (!item.IsMap()) throw ConfigError("config: each pool.quotas entry must be a mapping");
  nlohmann::json j = nlohmann::json::object();
  for (const auto& kv : item) {
    const std::string key = scalar<std::string>(kv.first, where + " (a key)");
    const std::string path = where + "." + key;
    if (!kv.second.IsScalar()) throw ConfigError("config: \"" + path + "\" must be a scalar");
    const std::string text = scalar<std::string>(kv.second, path);
    if (key == "max_fraction" || key == "max_percent") {
      try {
        j[key] = kv.second.as<double>();
      } catch (const YAML::Exception&) {
        throw ConfigError("pool.quotas: " + key + " must be a number, got " + text);
      }
    } else {
      j[key] = text;
    }
  }
  try {
    return scheduler_hooks::quotaFromJson(j);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(std::string("pool.") + e.what());
  }
}

}  // namespace

PoolConfig parsePoolConfig(const YAML::Node& node) {
  if (!node.IsMap()) throw ConfigError("config: \"pool\" must be a mapping");
  PoolConfig c;
  c.enabled = true;
  for (const auto& kv : node) {
    const std::string key = scalar<std::string>(kv.first, "pool (a key)");
    if (key != "inventory" && key != "journal" && key != "quotas" && key != "compact_every")
      throw ConfigError("config: unknown key \"pool." + key + "\"");
  }
  if (auto n = node["inventory"]) c.inventory = scalar<std::string>(n, "pool.inventory");
  if (auto n = node["journal"]) c.journal = scalar<std::string>(n, "pool.journal");
  if (auto n = node["compact_every"]) c.compactEvery = scalar<std::size_t>(n, "pool.compact_every");
  if (!c.inventory.empty() && !std::filesystem::is_regular_file(c.inventory))
    throw ConfigError("pool.inventory: no such file: " + c.inventory);
  if (c.compactEvery < 1) throw ConfigError("pool.compact_every: must be >= 1");
  if (auto q = node["quotas"]) {
    if (!q.IsSequence()) throw ConfigError("config: pool.quotas must be a list");
    for (std::size_t i = 0; i < q.size(); ++i) c.quotas.push_back(parseQuota(q[i], i));
  }
  return c;
}

ListenAddress parseListenAddress(std::string_view text) {
  ListenAddress out;
  std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == text.size())
    throw ConfigError("listen: expected HOST:PORT, got \"" + std::string(text) + "\"");
  std::string_view host = text.substr(0, colon);
  std::string_view port = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.empty()) throw ConfigError("listen: empty host in \"" + std::string(text) + "\"");
  int p = -1;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (ec != std::errc() || ptr != port.data() + port.size() || p < 0 || p > 65535)
    throw ConfigError("listen: bad port in \"" + std::string(text) + "\"");
  out.host = std::string(host);
  out.port = p;
  return out;
}

std::chrono::milliseconds secondsToInterval(double seconds, std::string_view key) {
  if (!(seconds > 0.0) || seconds > 7 * 24 * 3600.0)
    throw ConfigError(std::string(key) + ": must be a number of seconds > 0 (got " +
                      std::to_string(seconds) + ")");
  auto ms = std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000.0 + 0.5));
  return ms.count() == 0 ? std::chrono::milliseconds(1) : ms;
}

void ServiceConfig::validate() const {
  if (listen.port < 0 || listen.port > 65535) throw ConfigError("listen: bad port");
  if (listen.host.empty()) throw ConfigError("listen: empty host");
  if (crawlInterval.count() <= 0) throw ConfigError("crawl_interval: must be > 0");
  if (sweepInterval.count() <= 0) throw ConfigError("sweep_interval: must be > 0");
  if (crawlTimeout.count() <= 0) throw ConfigError("crawl_timeout: must be > 0");
  if (caPort < 0 || caPort > 255) throw ConfigError("ca_port: must be 0..255");
  if (spdlog::level::from_str(logLevel) == spdlog::level::off && logLevel != "off")
    throw ConfigError("log_level: unknown level \"" + logLevel + "\"");
  if (madWindow < 1 || madWindow > 256) throw ConfigError("mad.window: must be 1..256");
  if (madTimeoutMs < 1) throw ConfigError("mad.timeout_ms: must be >= 1");
  if (madRetries < 0 || madRetries > 20) throw ConfigError("mad.retries: must be 0..20");
  validateMadPolicy();
  if (madTransport != "subprocess" && madTransport != "inprocess")
    throw ConfigError("mad_transport: must be subprocess or inprocess (got \"" + madTransport +
                      "\")");
  if (historyDepth < 2) throw ConfigError("history_depth: must be >= 2");
  if (!(crawlCheckMaxLoss >= 0.0 && crawlCheckMaxLoss <= 1.0))
    throw ConfigError("crawl_check.max_loss: must be 0..1");
  if (crawlCheckRemovalAfter < 1) throw ConfigError("crawl_check.removal_after: must be >= 1");
  if (eventCapacity < 1) throw ConfigError("event_capacity: must be >= 1");
  if (!(stateEventMaxAgeDays >= 0.0 && stateEventMaxAgeDays <= 36500.0))
    throw ConfigError("state.event_max_age_days: must be 0..36500 (0: no limit)");
  if (stateMaxSizeMb > (1u << 20)) throw ConfigError("state.max_size_mb: must be 0..1048576");
  if (!(stateForgetMissingAfterDays >= 0.0 && stateForgetMissingAfterDays <= 36500.0))
    throw ConfigError("state.forget_missing_after_days: must be 0..36500 (0: never)");
  if (!nodeNameMap.empty() && !std::filesystem::is_regular_file(nodeNameMap))
    throw ConfigError("node_name_map: no such file: " + nodeNameMap);
  if (!k8sNodeNameMap.empty() && !std::filesystem::is_regular_file(k8sNodeNameMap))
    throw ConfigError("k8s_node_name_map: no such file: " + k8sNodeNameMap);
  validateOperational();
  ha.validate();
}

void ServiceConfig::validateMadPolicy() const {
  if (madPolicy != "adaptive" && madPolicy != "fixed")
    throw ConfigError("mad.policy: must be adaptive or fixed (got \"" + madPolicy + "\")");
  if (madMinWindow < 1 || madMinWindow > madWindow)
    throw ConfigError("mad.min_window: must be 1..mad.window (" + std::to_string(madWindow) +
                      "), got " + std::to_string(madMinWindow));
  if (madTimeoutMinMs < 1) throw ConfigError("mad.timeout_min_ms: must be >= 1");
  if (madTimeoutMaxMs < madTimeoutMinMs || madTimeoutMaxMs > 60'000)
    throw ConfigError("mad.timeout_max_ms: must be mad.timeout_min_ms (" +
                      std::to_string(madTimeoutMinMs) + ")..60000, got " +
                      std::to_string(madTimeoutMaxMs));
  if (!(madRetryBudget >= 0.0 && madRetryBudget <= 1.0))
    throw ConfigError("mad.retry_budget: must be 0..1 (retries per request sent)");
  if (madBreakerAfter < 0 || madBreakerAfter > 1000)
    throw ConfigError("mad.breaker_after: must be 0..1000 (0 = no circuit breaker)");
}

void ServiceConfig::validateOperational() const {
  if (!expectedTopology.empty() && !std::filesystem::is_regular_file(expectedTopology))
    throw ConfigError("expected_topology: no such file: " + expectedTopology);
  if (!metricsPortLabels.empty() && metricsPortLabels != "full" && metricsPortLabels != "minimal")
    throw ConfigError("metrics.port_labels (deprecated, ignored): must be full or minimal (got \"" +
                      metricsPortLabels + "\")");
  if (tlsCert.empty() != tlsKey.empty()) throw ConfigError("tls: both cert and key are needed");
  for (const auto& f : {tlsCert, tlsKey})
    if (!f.empty() && !std::filesystem::is_regular_file(f))
      throw ConfigError("tls: no such file: " + f);
}

ServiceConfig loadConfigText(std::string_view yaml, ServiceConfig base) {
  // Every key is read through scalar() or checked for its shape; this catch is the net under
  // them: a YAML type error anywhere is a ConfigError, never an exception the caller misses.
  try {
    return applyConfigText(yaml, std::move(base));
  } catch (const YAML::Exception& e) {
    throw ConfigError(std::string("config: a value has the wrong type: ") + e.what());
  }
}

namespace {

/// The subnet wait, the MAD proxy's restart backoff and the crawl check.
const std::set<std::string>& startupKeys() {
  static const std::set<std::string> keys = {"wait_for_subnet", "mad_proxy_restart_cap",
                                             "crawl_check", "sm_traps"};
  return keys;
}

void applyStartupKeys(const YAML::Node& root, ServiceConfig& c) {
  if (auto n = root["wait_for_subnet"]) c.waitForSubnet = scalar<bool>(n, "wait_for_subnet");
  if (auto n = root["sm_traps"]) c.smTraps = scalar<bool>(n, "sm_traps");
  if (auto n = root["mad_proxy_restart_cap"])
    c.madProxyRestartCap =
        secondsToInterval(scalar<double>(n, "mad_proxy_restart_cap"), "mad_proxy_restart_cap");
  auto check = root["crawl_check"];
  if (!check) return;
  if (!check.IsMap()) throw ConfigError("config: \"crawl_check\" must be a mapping");
  for (const auto& kv : check) {
    const std::string key = scalar<std::string>(kv.first, "key");
    if (key != "enabled" && key != "max_loss" && key != "removal_after")
      throw ConfigError("config: unknown key \"crawl_check." + key + "\"");
  }
  if (auto n = check["enabled"]) c.crawlCheckEnabled = scalar<bool>(n, "crawl_check.enabled");
  if (auto n = check["max_loss"]) c.crawlCheckMaxLoss = scalar<double>(n, "crawl_check.max_loss");
  if (auto n = check["removal_after"])
    c.crawlCheckRemovalAfter = scalar<std::uint32_t>(n, "crawl_check.removal_after");
}

/// The `state` mapping: where the durable store lives and how long it keeps events.
void applyStateKeys(const YAML::Node& state, ServiceConfig& c) {
  if (!state.IsMap()) throw ConfigError("config: \"state\" must be a mapping");
  for (const auto& kv : state) {
    const std::string key = scalar<std::string>(kv.first, "key");
    if (key != "dir" && key != "event_max_age_days" && key != "event_max_count" &&
        key != "max_size_mb" && key != "forget_missing_after_days")
      throw ConfigError("config: unknown key \"state." + key + "\"");
  }
  if (auto n = state["dir"]) c.stateDir = scalar<std::string>(n, "state.dir");
  if (auto n = state["event_max_age_days"])
    c.stateEventMaxAgeDays = scalar<double>(n, "state.event_max_age_days");
  if (auto n = state["event_max_count"])
    c.stateEventMaxCount = scalar<std::size_t>(n, "state.event_max_count");
  if (auto n = state["max_size_mb"])
    c.stateMaxSizeMb = scalar<std::uint64_t>(n, "state.max_size_mb");
  if (auto n = state["forget_missing_after_days"])
    c.stateForgetMissingAfterDays = scalar<double>(n, "state.forget_missing_after_days");
}

/// The `jobs` mapping: the job_congested thresholds.
void applyJobKeys(const YAML::Node& jobs, ServiceConfig& c) {
  if (!jobs.IsMap()) throw ConfigError("config: \"jobs\" must be a mapping");
  for (const auto& kv : jobs) {
    const std::string key = scalar<std::string>(kv.first, "key");
    if (key != "congested_utilization" && key != "clear_utilization")
      throw ConfigError("config: unknown key \"jobs." + key + "\"");
  }
  if (auto n = jobs["congested_utilization"])
    c.jobsCongestedUtilization = scalar<double>(n, "jobs.congested_utilization");
  if (auto n = jobs["clear_utilization"])
    c.jobsClearUtilization = scalar<double>(n, "jobs.clear_utilization");
  if (!(c.jobsCongestedUtilization > 0.0 && c.jobsCongestedUtilization <= 1.0))
    throw ConfigError("jobs.congested_utilization: must be in (0, 1]");
  if (!(c.jobsClearUtilization > 0.0 && c.jobsClearUtilization <= c.jobsCongestedUtilization))
    throw ConfigError("jobs.clear_utilization: must be in (0, congested_utilization]");
}

/// The `mad` mapping: the engine's limits and its policy.
void applyMadKeys(const YAML::Node& mad, ServiceConfig& c) {
  static const std::set<std::string> keys = {"window",         "timeout_ms",   "retries",
                                             "policy",         "min_window",   "timeout_min_ms",
                                             "timeout_max_ms", "retry_budget", "breaker_after"};
  for (const auto& kv : mad) {
    const std::string key = scalar<std::string>(kv.first, "key");
    if (!keys.count(key)) throw ConfigError("config: unknown key \"mad." + key + "\"");
  }
  if (auto n = mad["window"]) c.madWindow = scalar<int>(n, "mad.window");
  if (auto n = mad["timeout_ms"]) c.madTimeoutMs = scalar<int>(n, "mad.timeout_ms");
  if (auto n = mad["retries"]) c.madRetries = scalar<int>(n, "mad.retries");
  if (auto n = mad["policy"]) c.madPolicy = scalar<std::string>(n, "mad.policy");
  if (auto n = mad["min_window"]) c.madMinWindow = scalar<int>(n, "mad.min_window");
  if (auto n = mad["timeout_min_ms"]) c.madTimeoutMinMs = scalar<int>(n, "mad.timeout_min_ms");
  if (auto n = mad["timeout_max_ms"]) c.madTimeoutMaxMs = scalar<int>(n, "mad.timeout_max_ms");
  if (auto n = mad["retry_budget"]) c.madRetryBudget = scalar<double>(n, "mad.retry_budget");
  if (auto n = mad["breaker_after"]) c.madBreakerAfter = scalar<int>(n, "mad.breaker_after");
}

ServiceConfig applyConfigText(std::string_view yaml, ServiceConfig c) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    throw ConfigError(std::string("config: YAML syntax error: ") + e.what());
  }
  if (root.IsNull()) return c;
  if (!root.IsMap()) throw ConfigError("config: the top level must be a mapping");
  static const std::set<std::string> known = {
      "listen", "crawl_interval", "sweep_interval",    "crawl_timeout",
      "ca",     "ca_port",        "log_level",         "api_token",
      "mad",    "history_depth",  "event_capacity",    "node_name_map",
      "pool",   "state",          "k8s_node_name_map", "jobs",
      "ha",     "subnet_name"};
  // Operational keys (docs/daemon.md): parsed by applyOperationalKeys below.
  static const std::set<std::string> operational = {"clear_saturated_counters", "expected_topology",
                                                    "metrics", "tls"};
  for (const auto& kv : root) {
    const std::string key = scalar<std::string>(kv.first, "key");
    if (!known.count(key) && !operational.count(key) && key != "osm_events" &&
        key != "mad_transport" && !startupKeys().count(key))
      throw ConfigError("config: unknown key \"" + key + "\"");
  }
  applyOperationalKeys(root, c);
  applyStartupKeys(root, c);
  if (auto n = root["listen"]) c.listen = parseListenAddress(scalar<std::string>(n, "listen"));
  if (auto n = root["crawl_interval"])
    c.crawlInterval = secondsToInterval(scalar<double>(n, "crawl_interval"), "crawl_interval");
  if (auto n = root["sweep_interval"])
    c.sweepInterval = secondsToInterval(scalar<double>(n, "sweep_interval"), "sweep_interval");
  if (auto n = root["crawl_timeout"])
    c.crawlTimeout = secondsToInterval(scalar<double>(n, "crawl_timeout"), "crawl_timeout");
  if (auto n = root["ca"]) c.ca = scalar<std::string>(n, "ca");
  if (auto n = root["ca_port"]) c.caPort = scalar<int>(n, "ca_port");
  if (auto n = root["log_level"]) c.logLevel = scalar<std::string>(n, "log_level");
  if (auto n = root["api_token"]) c.apiToken = scalar<std::string>(n, "api_token");
  if (auto n = root["node_name_map"]) c.nodeNameMap = scalar<std::string>(n, "node_name_map");
  if (auto n = root["k8s_node_name_map"])
    c.k8sNodeNameMap = scalar<std::string>(n, "k8s_node_name_map");
  if (auto n = root["osm_events"]) c.osmEvents = scalar<std::string>(n, "osm_events");
  if (auto n = root["mad_transport"]) c.madTransport = scalar<std::string>(n, "mad_transport");
  if (auto n = root["history_depth"]) c.historyDepth = scalar<std::size_t>(n, "history_depth");
  if (auto n = root["event_capacity"]) c.eventCapacity = scalar<std::size_t>(n, "event_capacity");
  if (auto n = root["pool"]) c.pool = parsePoolConfig(n);
  if (auto n = root["state"]) applyStateKeys(n, c);
  if (auto n = root["jobs"]) applyJobKeys(n, c);
  if (auto n = root["ha"]) applyHaKeys(n, c.ha);
  if (auto n = root["subnet_name"]) c.subnetName = scalar<std::string>(n, "subnet_name");
  if (auto mad = root["mad"]) {
    if (!mad.IsMap()) throw ConfigError("config: \"mad\" must be a mapping");
    applyMadKeys(mad, c);
  }
  c.validate();
  return c;
}

}  // namespace

ServiceConfig loadConfigFile(const std::filesystem::path& path, ServiceConfig base) {
  std::ifstream in(path);
  if (!in) throw ConfigError("config: cannot read " + path.string());
  std::ostringstream buf;
  buf << in.rdbuf();
  try {
    return loadConfigText(buf.str(), std::move(base));
  } catch (const ConfigError& e) {
    throw ConfigError(path.string() + ": " + e.what());
  }
}

}  // namespace ibfabric::api
