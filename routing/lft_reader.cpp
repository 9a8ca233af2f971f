#include "routing/lft_reader.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "telemetry/smp_attributes.h"

namespace ibfabric::routing {
namespace {

using mad::MadRequest;
using mad::MadResult;

std::string nodeName(const Node& n) {
  return "\"" + n.description + "\" (" + toString(n.guid) + ")";
}

std::string failureText(const Node& n, std::string_view what, const MadResult& r) {
  char buf[200];
  if (r.ok()) {
    std::snprintf(buf, sizeof buf, "%.*s: MAD status 0x%04x", static_cast<int>(what.size()),
                  what.data(), mad::madStatus(r.reply));
  } else {
    std::snprintf(buf, sizeof buf, "%.*s: %s after %d send%s", static_cast<int>(what.size()),
                  what.data(), mad::toString(r.outcome), r.attempts, r.attempts == 1 ? "" : "s");
  }
  return nodeName(n) + " " + buf;
}

bool good(const MadResult& r) { return r.ok() && mad::madStatus(r.reply) == 0; }

std::uint32_t blockCount(std::uint16_t linearFdbTop) {
  return linearFdbTop / mad::LinearForwardingBlock::kLidsPerBlock + 1u;
}

}  // namespace

LftReader::LftReader(mad::MadEngine& engine, const mad::Clock& clock)
    : engine_(engine), clock_(clock) {}

ForwardingTablesPtr LftReader::read(TopologyPtr topology) {
  const auto start = clock_.now();
  std::vector<std::optional<SwitchTable>> byNode(topology->nodes().size());
  std::vector<std::string> failures;
  std::uint64_t mads = 0;

  // 1. SwitchInfo of every switch with a LID.
  std::vector<NodeIndex> switches;
  std::vector<MadRequest> requests;
  for (const Node& n : topology->nodes()) {
    if (!n.isSwitch()) continue;
    if (n.lid().value() == 0) {
      failures.push_back(nodeName(n) + " has no LID");
      continue;
    }
    switches.push_back(n.index);
    requests.push_back(MadRequest{mad::smpAddress(n.lid()), mad::buildSwitchInfoGet(), {}});
  }
  auto infos = engine_.run(std::move(requests));
  for (const auto& r : infos) mads += static_cast<std::uint64_t>(r.attempts);

  // 2. LFT blocks of every switch that answered.
  struct BlockRef {
    NodeIndex sw;
    std::uint32_t block;
  };
  std::vector<BlockRef> refs;
  requests.clear();
  for (std::size_t i = 0; i < switches.size(); ++i) {
    const Node& n = topology->node(switches[i]);
    if (!good(infos[i])) {
      failures.push_back(failureText(n, "SwitchInfo", infos[i]));
      continue;
    }
    const auto info = mad::decodeSwitchInfo(infos[i].reply);
    SwitchTable t;
    t.switchGuid = n.guid;
    t.switchLid = n.lid();
    t.linearFdbTop = info.linearFdbTop;
    t.ports.assign(static_cast<std::size_t>(info.linearFdbTop) + 1, SwitchTable::kNoPort);
    byNode[n.index] = std::move(t);
    for (std::uint32_t b = 0; b < blockCount(info.linearFdbTop); ++b) {
      refs.push_back({n.index, b});
      requests.push_back(
          MadRequest{mad::smpAddress(n.lid()), mad::buildLinearForwardingTableGet(b), {}});
    }
  }
  auto blocks = engine_.run(std::move(requests));
  std::vector<bool> failed(byNode.size(), false);
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const auto& r = blocks[i];
    mads += static_cast<std::uint64_t>(r.attempts);
    const NodeIndex sw = refs[i].sw;
    if (failed[sw]) continue;
    if (!good(r)) {
      failed[sw] = true;
      failures.push_back(
          failureText(topology->node(sw), "LFT block " + std::to_string(refs[i].block), r));
      continue;
    }
    const auto block = mad::decodeLinearForwardingBlock(r.reply);
    auto& ports = byNode[sw]->ports;
    const std::size_t base = std::size_t{refs[i].block} * mad::LinearForwardingBlock::kLidsPerBlock;
    for (std::size_t k = 0; k < block.ports.size() && base + k < ports.size(); ++k) {
      ports[base + k] = block.ports[k];
    }
  }
  for (std::size_t i = 0; i < failed.size(); ++i) {
    if (failed[i]) byNode[i].reset();  // a partial table would invent black holes
  }

  auto out = std::make_shared<ForwardingTables>(std::move(topology), std::move(byNode), "mad");
  out->readTime = std::chrono::duration_cast<std::chrono::nanoseconds>(clock_.now() - start);
  out->madsUsed = mads;
  out->failures = std::move(failures);
  if (!out->failures.empty()) {
    spdlog::warn("LFT read: {} switch(es) without a table, first: {}", out->failures.size(),
                 out->failures.front());
  }
  return out;
}

ForwardingTablesPtr LftReader::refresh(TopologyPtr topology, const ForwardingTablesPtr& previous,
                                       LftRefreshStats* stats) {
  LftRefreshStats local;
  LftRefreshStats& st = stats ? *stats : local;
  st = {};
  auto full = [&](std::string reason) {
    st.fullRead = true;
    st.reason = std::move(reason);
    refreshesSinceFull_ = 0;
    return read(std::move(topology));
  };
  if (!previous || !previous->topology()) return full("first read");
  if (previous->topology() != topology) return full("topology changed");
  if (!previous->failures.empty()) return full("previous read had failures");
  if (++refreshesSinceFull_ >= fullReadEvery) return full("age");

  // Probe: SwitchInfo + one round-robin block per switch.
  struct ProbeRef {
    NodeIndex sw;
    std::uint32_t block;
  };
  std::vector<ProbeRef> refs;
  std::vector<MadRequest> requests;
  const std::uint64_t round = probeRound_++;
  for (const Node& n : topology->nodes()) {
    const SwitchTable* t = previous->table(n.index);
    if (!t) continue;
    const std::uint32_t block =
        static_cast<std::uint32_t>((round + n.index) % blockCount(t->linearFdbTop));
    refs.push_back({n.index, block});
    requests.push_back(MadRequest{mad::smpAddress(t->switchLid), mad::buildSwitchInfoGet(), {}});
    requests.push_back(
        MadRequest{mad::smpAddress(t->switchLid), mad::buildLinearForwardingTableGet(block), {}});
  }
  auto results = engine_.run(std::move(requests));
  for (const auto& r : results) st.probeMads += static_cast<std::uint64_t>(r.attempts);
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const Node& n = topology->node(refs[i].sw);
    const SwitchTable* t = previous->table(refs[i].sw);
    const auto& info = results[2 * i];
    const auto& blk = results[2 * i + 1];
    if (!good(info) || !good(blk)) return full("probe: " + nodeName(n) + " did not answer");
    if (mad::decodeSwitchInfo(info.reply).linearFdbTop != t->linearFdbTop) {
      return full("probe: " + nodeName(n) + " LinearFDBTop changed");
    }
    const auto block = mad::decodeLinearForwardingBlock(blk.reply);
    const std::size_t base = std::size_t{refs[i].block} * mad::LinearForwardingBlock::kLidsPerBlock;
    for (std::size_t k = 0; k < block.ports.size() && base + k < t->ports.size(); ++k) {
      if (t->ports[base + k] != block.ports[k]) {
        return full("probe: " + nodeName(n) + " LFT block " + std::to_string(refs[i].block) +
                    " changed");
      }
    }
  }
  st.reason = "unchanged";
  return previous;
}

ForwardingTablesPtr parseOpensmLftDump(const std::filesystem::path& path, TopologyPtr topology) {
  std::ifstream in(path);
  if (!in) throw LftDumpError("cannot read " + path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return parseOpensmLftDumpText(ss.str(), std::move(topology), "opensm-dump " + path.string());
}

namespace {

template <typename T>
bool parseNumber(std::string_view s, T& out, int base) {
  if (base == 16 && (s.starts_with("0x") || s.starts_with("0X"))) s.remove_prefix(2);
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && p == s.data() + s.size();
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> w;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) w.push_back(line.substr(i, j - i));
    i = j;
  }
  return w;
}

}  // namespace

ForwardingTablesPtr parseOpensmLftDumpText(std::string_view text, TopologyPtr topology,
                                           const std::string& source) {
  if (!topology) throw LftDumpError(source + ": no topology to match the switches against");
  std::vector<std::optional<SwitchTable>> byNode(topology->nodes().size());
  std::vector<std::string> failures;
  SwitchTable* current = nullptr;
  bool skipping = false;  // inside the table of a switch not in the topology
  int lineNo = 0;
  auto error = [&](const std::string& why) {
    return LftDumpError(source + ":" + std::to_string(lineNo) + ": " + why);
  };
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++lineNo;
    auto w = words(line);
    if (w.empty()) continue;
    if (w[0] == "Unicast") {
      // Unicast lids [0-14] of switch Lid 2 guid 0x0000000000200000 ('leaf0'):
      if (w.size() < 9 || w[1] != "lids" || w[3] != "of" || w[4] != "switch" || w[5] != "Lid" ||
          w[7] != "guid") {
        throw error("unrecognised table header");
      }
      std::uint16_t lid = 0;
      std::uint64_t guid = 0;
      if (!parseNumber(w[6], lid, 10) || !parseNumber(w[8], guid, 16)) {
        throw error("bad LID or GUID in table header");
      }
      const Node* n = topology->findNode(Guid{guid});
      if (!n || !n->isSwitch()) {
        failures.push_back("switch " + toString(Guid{guid}) +
                           " of the dump is not in the topology");
        current = nullptr;
        skipping = true;
        continue;
      }
      byNode[n->index] = SwitchTable{Guid{guid}, Lid{lid}, 0, {}};
      current = &*byNode[n->index];
      skipping = false;
      continue;
    }
    if (w.size() >= 2 && w[1] == "lids" &&
        w[0].find_first_not_of("0123456789") == std::string_view::npos) {
      continue;  // "14 lids dumped"
    }
    if (w[0].starts_with("0x")) {
      if (skipping) continue;
      if (!current) throw error("LFT entry before any table header");
      std::uint16_t lid = 0;
      unsigned port = 0;
      if (w.size() < 2 || !parseNumber(w[0], lid, 16) || !parseNumber(w[1], port, 10) ||
          port > 255) {
        throw error("bad LFT entry");
      }
      if (current->ports.size() <= lid) current->ports.resize(lid + 1u, SwitchTable::kNoPort);
      current->ports[lid] = static_cast<std::uint8_t>(port);
      current->linearFdbTop = std::max(current->linearFdbTop, lid);
      continue;
    }
    if (w[0].starts_with("#")) continue;
    throw error("unrecognised line");
  }
  for (auto& t : byNode) {
    if (t && t->ports.empty()) t->ports.assign(1, SwitchTable::kNoPort);
  }
  auto out = std::make_shared<ForwardingTables>(std::move(topology), std::move(byNode), source);
  out->failures = std::move(failures);
  return out;
}

}  // namespace ibfabric::routing
