#include "discovery/netfile.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <tuple>

namespace ibfabric {

std::string_view toString(NodeType t) {
  switch (t) {
    case NodeType::kCa:
      return "CA";
    case NodeType::kSwitch:
      return "Switch";
    case NodeType::kRouter:
      return "Router";
  }
  return "?";
}

bool operator==(const NetPort& a, const NetPort& b) {
  return std::tie(a.port, a.remoteId, a.remotePort, a.remotePortGuid, a.remoteDesc, a.rate,
                  a.portGuid, a.lid,
                  a.remoteLid) == std::tie(b.port, b.remoteId, b.remotePort, b.remotePortGuid,
                                           b.remoteDesc, b.rate, b.portGuid, b.lid, b.remoteLid);
}

bool operator==(const NetNode& a, const NetNode& b) {
  return std::tie(a.type, a.numPorts, a.id, a.desc, a.guid, a.sysImageGuid, a.vendorId, a.deviceId,
                  a.lid, a.enhancedPort0,
                  a.ports) == std::tie(b.type, b.numPorts, b.id, b.desc, b.guid, b.sysImageGuid,
                                       b.vendorId, b.deviceId, b.lid, b.enhancedPort0, b.ports);
}

const NetPort* NetNode::port(PortNum p) const {
  for (const auto& np : ports)
    if (np.port == p) return &np;
  return nullptr;
}

void NetFabric::reindex() {
  index_.clear();
  index_.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) index_.emplace(nodes[i].id, i);
}

const NetNode* NetFabric::find(std::string_view id) const {
  auto it = index_.find(std::string(id));
  return it == index_.end() ? nullptr : &nodes[it->second];
}

std::size_t NetFabric::switchCount() const {
  return static_cast<std::size_t>(std::count_if(
      nodes.begin(), nodes.end(), [](const NetNode& n) { return n.type == NodeType::kSwitch; }));
}

std::size_t NetFabric::caCount() const {
  return static_cast<std::size_t>(std::count_if(
      nodes.begin(), nodes.end(), [](const NetNode& n) { return n.type == NodeType::kCa; }));
}

std::size_t NetFabric::linkCount() const {
  std::size_t count = 0;
  for (const auto& n : nodes) {
    for (const auto& p : n.ports) {
      const NetNode* r = find(p.remoteId);
      const NetPort* back = r ? r->port(p.remotePort) : nullptr;
      bool listedBack = back && back->remoteId == n.id && back->remotePort == p.port;
      // A cable listed on both ends is counted from its "smaller" end only.
      if (!listedBack || std::tie(n.id, p.port) < std::tie(r->id, back->port)) ++count;
    }
  }
  return count;
}

namespace {

// ---- Enabled widths/speeds, as ibsim derives them per port -------------------------------------

// Widths use the LinkWidth bit values (the same bits as ibsim's `width=` mask); speeds one bit per
// LinkSpeed enumerator.
struct Enables {
  std::uint8_t widths = 0;
  std::uint16_t speeds = 0;
};

std::uint16_t speedBit(LinkSpeed s) {
  return static_cast<std::uint16_t>(1u << static_cast<int>(s));
}

std::uint16_t speedsUpTo(LinkSpeed s) {
  std::uint16_t bits = 0;
  for (int i = 0; i <= static_cast<int>(s); ++i) bits |= speedBit(static_cast<LinkSpeed>(i));
  return bits;
}

// What a "4xHDR" tail enables in ibsim: 4x also enables 1x, 12x enables 1x/4x/12x; a speed
// enables every slower one.
Enables enablesForRate(LinkRate r) {
  std::uint8_t w = static_cast<std::uint8_t>(r.width);
  if (r.width == LinkWidth::k4x) w |= static_cast<std::uint8_t>(LinkWidth::k1x);
  if (r.width == LinkWidth::k12x)
    w |= static_cast<std::uint8_t>(LinkWidth::k1x) | static_cast<std::uint8_t>(LinkWidth::k4x);
  return {w, speedsUpTo(r.speed)};
}

// ibsim `speed=` bits (1 SDR, 2 DDR, 4 QDR) and `extspeed=` bits (1 FDR, 2 EDR, 4 HDR).
std::uint16_t speedsFromMasks(int speed, int ext) {
  std::uint16_t bits = 0;
  if (speed & 1) bits |= speedBit(LinkSpeed::kSdr);
  if (speed & 2) bits |= speedBit(LinkSpeed::kDdr);
  if (speed & 4) bits |= speedBit(LinkSpeed::kQdr);
  if (ext & 1) bits |= speedBit(LinkSpeed::kFdr);
  if (ext & 2) bits |= speedBit(LinkSpeed::kEdr);
  if (ext & 4) bits |= speedBit(LinkSpeed::kHdr);
  return bits;
}

// ibsim's link-level defaults when a file sets nothing: 4x, SDR, no extended speeds.
struct KeywordState {
  int width = 2;
  int speed = 1;
  int ext = 0;
  bool seen = false;  // any width=/speed=/extspeed= line so far
};

// ---- Small text helpers
// --------------------------------------------------------------------------

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

struct Cursor {
  std::string_view s;
  void skipSpace() {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  }
  bool eat(char c) {
    if (s.empty() || s.front() != c) return false;
    s.remove_prefix(1);
    return true;
  }
  bool eat(std::string_view w) {
    if (!startsWith(s, w)) return false;
    s.remove_prefix(w.size());
    return true;
  }
  // Digits (decimal, or hex with 0x) as an unsigned number.
  std::optional<std::uint64_t> number() {
    int base = 10;
    std::string_view t = s;
    if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
      base = 16;
      t.remove_prefix(2);
    }
    std::uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v, base);
    if (ec != std::errc() || ptr == t.data()) return std::nullopt;
    s = std::string_view(ptr, static_cast<std::size_t>(s.data() + s.size() - ptr));
    return v;
  }
  std::optional<std::uint64_t> hex() {
    std::uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    if (ec != std::errc() || ptr == s.data()) return std::nullopt;
    s = std::string_view(ptr, static_cast<std::size_t>(s.data() + s.size() - ptr));
    return v;
  }
  std::optional<std::string_view> quoted() {
    if (!eat('"')) return std::nullopt;
    auto end = s.find('"');
    if (end == std::string_view::npos) return std::nullopt;
    auto q = s.substr(0, end);
    s.remove_prefix(end + 1);
    return q;
  }
  std::string_view word() {
    skipSpace();
    std::size_t n = 0;
    while (n < s.size() && !std::isspace(static_cast<unsigned char>(s[n]))) ++n;
    auto w = s.substr(0, n);
    s.remove_prefix(n);
    return w;
  }
};

std::string quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string portRef(std::string_view id, PortNum p) { return quote(id) + "[" + toString(p) + "]"; }

std::string hexNoPrefix(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%" PRIx64, v);
  return buf;
}

// ---- Parser
// ----------------------------------------------------------------------------------------

class Parser {
 public:
  Parser(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  NetFabric run() {
    int lineNo = 0;
    std::size_t pos = 0;
    while (pos < text_.size()) {
      auto nl = text_.find('\n', pos);
      auto raw =
          text_.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
      pos = nl == std::string_view::npos ? text_.size() : nl + 1;
      ++lineNo;
      if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
      if (raw.size() > kNetFileMaxLine)
        fail(lineNo, "line is " + std::to_string(raw.size()) +
                         " characters long; ibsim reads at most " +
                         std::to_string(kNetFileMaxLine));
      parseLine(lineNo, raw);
    }
    fabric_.reindex();
    validate();
    return std::move(fabric_);
  }

 private:
  [[noreturn]] void fail(int line, const std::string& message) const {
    throw NetFileError(std::string(source_) + ":" + std::to_string(line) + ": " + message);
  }

  void parseLine(int lineNo, std::string_view raw) {
    std::string_view line = trim(raw);
    if (line.empty()) {
      inRecord_ = false;
      return;
    }
    if (line.front() == '#') return;  // comments never end a record (ibsim skips them)
    if (line.front() == '[') {
      if (!inRecord_) fail(lineNo, "port line outside a node record");
      parsePort(lineNo, line);
      return;
    }
    if (line.front() == '@') fail(lineNo, "ibsim port aliases ('@') are not supported");
    inRecord_ = false;
    if (startsWith(line, "Switch")) return parseNode(lineNo, line, NodeType::kSwitch, 6);
    if (startsWith(line, "Hca")) return parseNode(lineNo, line, NodeType::kCa, 3);
    if (startsWith(line, "Ca")) return parseNode(lineNo, line, NodeType::kCa, 2);
    if (startsWith(line, "Rt")) return parseNode(lineNo, line, NodeType::kRouter, 2);
    // ibnetdiscover -g output: chassis headings carry nothing the model needs.
    if (startsWith(line, "Chassis") || startsWith(line, "Non-Chassis") ||
        startsWith(line, "Hostname:"))
      return;
    auto eq = line.find_first_of("=+");
    if (eq == std::string_view::npos) {
      if (startsWith(line, "include") || startsWith(line, "do")) {
        fail(lineNo, "ibsim directive '" + std::string(Cursor{line}.word()) + "' is not supported");
      }
      fail(lineNo, "unrecognized line: " + std::string(line.substr(0, 40)));
    }
    parseAssignment(lineNo, line, eq);
  }

  std::uint64_t assignedValue(int lineNo, std::string_view line, std::size_t eq) const {
    Cursor c{trim(line.substr(eq + 1))};
    auto v = c.number();
    if (!v) fail(lineNo, "expected a number after '" + std::string(line.substr(0, eq + 1)) + "'");
    return *v;
  }

  void parseAssignment(int lineNo, std::string_view line, std::size_t eq) {
    std::string_view key = trim(line.substr(0, eq));
    bool relative = line[eq] == '+';
    auto value = [&] { return assignedValue(lineNo, line, eq); };
    auto base = [&](int type) {
      std::uint64_t v = value();
      if (!relative) absGuid_[type] = v;
      nextGuid_[type] = relative ? absGuid_[type] + v : v;
      if (type == 3) routerGuidSet_ = true;
    };
    if (key == "switchguid") return base(2);
    if (key == "caguid" || key == "hcaguids") return base(1);
    if (key == "rtguid") return base(3);
    if (relative) fail(lineNo, "'+' is only valid for switchguid/caguid/rtguid");
    if (key == "vendid") {
      auto v = value();
      pendingVendor_ =
          v ? std::optional<std::uint32_t>(static_cast<std::uint32_t>(v)) : std::nullopt;
    } else if (key == "devid") {
      auto v = value();
      deviceId_ = v ? std::optional<std::uint32_t>(static_cast<std::uint32_t>(v)) : std::nullopt;
    } else if (key == "sysimgguid") {
      pendingSysImage_ = Guid{value()};
    } else if (key == "width") {
      auto v = value();
      if (v < 1 || v > 31)
        fail(lineNo, "width=" + std::to_string(v) + " is not a width mask (1..31)");
      keywords_.width = static_cast<int>(v);
      keywords_.seen = true;
    } else if (key == "speed") {
      auto v = value();
      if (v < 1 || v > 7)
        fail(lineNo, "speed=" + std::to_string(v) + " is not a speed mask (1..7)");
      keywords_.speed = static_cast<int>(v);
      keywords_.seen = true;
    } else if (key == "extspeed") {
      auto v = value();
      if (v > 7) fail(lineNo, "extspeed=" + std::to_string(v) + " is not a speed mask (0..7)");
      keywords_.ext = static_cast<int>(v);
      keywords_.seen = true;
    } else if (key == "module") {
      fail(lineNo, "ibsim directive 'module' is not supported");
    } else if (key == "pdebug") {
      // ibsim parser debugging: no meaning for the fabric.
    } else {
      fail(lineNo, "unknown setting '" + std::string(key) + "'");
    }
  }

  /// A node or remote description: at most kNetFileMaxDesc characters (ibsim's limit), so that
  /// every line formatNetFile() writes stays within kNetFileMaxLine.
  void checkDesc(int lineNo, std::string_view desc) const {
    if (desc.size() > kNetFileMaxDesc)
      fail(lineNo, "a description of " + std::to_string(desc.size()) + " characters; ibsim reads " +
                       std::to_string(kNetFileMaxDesc) + " at most");
  }

  void checkId(int lineNo, std::string_view id) const {
    if (id.empty()) fail(lineNo, "empty node id");
    if (id.size() > kNetFileMaxId)
      fail(lineNo, "node id \"" + std::string(id) + "\" is longer than " +
                       std::to_string(kNetFileMaxId) + " characters (ibsim limit)");
    if (id.find_first_of("#@") != std::string_view::npos)
      fail(lineNo, "node id \"" + std::string(id) + "\" contains '#' or '@' (reserved by ibsim)");
  }

  void parseNode(int lineNo, std::string_view line, NodeType type, std::size_t keywordLen) {
    NetNode node;
    node.type = type;
    node.line = lineNo;
    Cursor c{line.substr(keywordLen)};
    c.skipSpace();
    auto n = c.number();
    if (!n || *n < 1 || *n > 254)
      fail(lineNo, "expected a port count (1..254) after the node type");
    node.numPorts = static_cast<int>(*n);
    c.skipSpace();
    auto id = c.quoted();
    if (!id) fail(lineNo, "expected a quoted node id");
    checkId(lineNo, *id);
    node.id = std::string(*id);
    c.skipSpace();
    std::string_view rest;
    if (c.eat('#')) {
      c.skipSpace();
      if (!c.s.empty() && c.s.front() == '"') {
        auto d = c.quoted();
        if (!d) fail(lineNo, "unterminated node description");
        node.desc = std::string(*d);
        rest = c.s;
      } else {
        // Unquoted description: ends where ibsim ends it.
        std::size_t end = c.s.size();
        for (std::string_view stop : {" enhanced port ", " base port ", " lid ", " lmc "})
          end = std::min(end, c.s.find(stop));
        node.desc = std::string(trim(c.s.substr(0, end)));
        // Written back quoted (as ibnetdiscover writes it), a '"' would end it early.
        if (node.desc.find('"') != std::string::npos)
          fail(lineNo, "a '\"' inside an unquoted node description");
        rest = c.s.substr(end);
      }
      checkDesc(lineNo, node.desc);
    } else if (!c.s.empty()) {
      fail(lineNo, "unexpected text after the node id: " + std::string(c.s.substr(0, 40)));
    }
    if (type == NodeType::kSwitch) {
      if (rest.find("enhanced port 0") != std::string_view::npos) node.enhancedPort0 = true;
      if (rest.find("base port 0") != std::string_view::npos) node.enhancedPort0 = false;
      if (auto l = rest.find("lid "); l != std::string_view::npos) {
        Cursor lc{rest.substr(l + 4)};
        if (auto v = lc.number(); v && *v > 0 && *v <= 0xBFFF)
          node.lid = Lid{static_cast<std::uint16_t>(*v)};
      }
    }
    if (auto prev = ids_.find(node.id); prev != ids_.end())
      fail(lineNo, "duplicate node id \"" + node.id + "\" (first defined at line " +
                       std::to_string(fabric_.nodes[prev->second].line) + ")");

    // GUIDs: explicit from the id lines before the record, else ibsim's running counters.
    int t = static_cast<int>(type);
    if (type != NodeType::kRouter || routerGuidSet_) {
      node.guid = Guid{nextGuid_[t]};
      nextGuid_[t] += type == NodeType::kSwitch ? 1 : static_cast<std::uint64_t>(node.numPorts) + 1;
    }
    if (node.guid) {
      auto [it, inserted] = guids_.emplace(node.guid->value(), fabric_.nodes.size());
      if (!inserted)
        fail(lineNo, "duplicate GUID " + toString(*node.guid) + " (also node \"" +
                         fabric_.nodes[it->second].id + "\" at line " +
                         std::to_string(fabric_.nodes[it->second].line) + ")");
    }
    node.sysImageGuid = pendingSysImage_;
    node.vendorId = pendingVendor_;
    node.deviceId = deviceId_;  // ibsim keeps devid until the next devid= line
    pendingSysImage_.reset();
    pendingVendor_.reset();

    ids_.emplace(node.id, fabric_.nodes.size());
    fabric_.nodes.push_back(std::move(node));
    enables_.emplace_back();
    nodeKeywords_.push_back(keywords_);
    inRecord_ = true;
  }

  // Options "w=N", "s=N", "e=N" (ibsim) and "v=N" (ibnetdiscover -f, ignored).
  void applyOption(int lineNo, std::string_view token, Enables& en, bool& known) {
    auto eq = token.find('=');
    std::string_view key = token.substr(0, eq);
    Cursor vc{token.substr(eq + 1)};
    auto v = vc.number();
    if (!v || !vc.s.empty()) fail(lineNo, "bad port option '" + std::string(token) + "'");
    if (key == "w") {
      if (*v < 1 || *v > 31)
        fail(lineNo, "w=" + std::to_string(*v) + " is not a width mask (1..31)");
      en.widths = static_cast<std::uint8_t>(*v);
    } else if (key == "s") {
      if (*v < 1 || *v > 7) fail(lineNo, "s=" + std::to_string(*v) + " is not a speed mask (1..7)");
      auto ext = en.speeds & (speedBit(LinkSpeed::kFdr) | speedBit(LinkSpeed::kEdr) |
                              speedBit(LinkSpeed::kHdr));
      en.speeds = static_cast<std::uint16_t>(speedsFromMasks(static_cast<int>(*v), 0) | ext);
    } else if (key == "e") {
      if (*v > 7) fail(lineNo, "e=" + std::to_string(*v) + " is not a speed mask (0..7)");
      auto base = en.speeds & (speedBit(LinkSpeed::kSdr) | speedBit(LinkSpeed::kDdr) |
                               speedBit(LinkSpeed::kQdr) | speedBit(LinkSpeed::kFdr10));
      en.speeds = static_cast<std::uint16_t>(speedsFromMasks(0, static_cast<int>(*v)) | base);
    } else if (key == "v") {
      return;
    } else {
      fail(lineNo, "unknown port option '" + std::string(token) + "'");
    }
    known = true;
  }

  void parsePort(int lineNo, std::string_view line) {
    NetNode& node = fabric_.nodes.back();
    const KeywordState& kw = nodeKeywords_.back();
    Enables en{static_cast<std::uint8_t>(kw.width), speedsFromMasks(kw.speed, kw.ext)};
    bool known = kw.seen;

    NetPort port;
    port.line = lineNo;
    Cursor c{line};
    c.eat('[');
    auto p = c.number();
    if (!p || !c.eat(']')) fail(lineNo, "expected [port] at the start of a port line");
    if (*p == 0) fail(lineNo, "port 0 cannot be linked");
    if (*p > static_cast<std::uint64_t>(node.numPorts))
      fail(lineNo, "port " + std::to_string(*p) + " out of range: \"" + node.id + "\" has " +
                       std::to_string(node.numPorts) + " ports");
    port.port = PortNum{static_cast<std::uint8_t>(*p)};
    if (auto prev = node.port(port.port))
      fail(lineNo, "port " + toString(port.port) + " of \"" + node.id + "\" is used twice (line " +
                       std::to_string(prev->line) + ")");
    if (c.eat("[ext ")) {
      c.number();
      c.eat(']');
    }
    if (c.eat('(')) {
      auto g = c.hex();
      if (!g || !c.eat(')')) fail(lineNo, "bad port GUID");
      port.portGuid = Guid{*g};
    }
    c.skipSpace();
    auto rid = c.quoted();
    if (!rid) fail(lineNo, "expected the quoted id of the remote node");
    checkId(lineNo, *rid);
    port.remoteId = std::string(*rid);
    if (c.eat('[')) {
      auto rp = c.number();
      if (!rp || !c.eat(']') || *rp == 0 || *rp > 254) fail(lineNo, "bad remote port number");
      port.remotePort = PortNum{static_cast<std::uint8_t>(*rp)};
    } else {
      Cursor look = c;
      look.skipSpace();
      if (!look.s.empty() && look.s.front() == '[')
        fail(lineNo,
             "the remote [port] must follow the remote id without a space (ibsim would "
             "read port 1)");
      port.remotePort = PortNum{1};  // ibsim's default
    }
    if (c.eat("[ext ")) {
      c.number();
      c.eat(']');
    }
    c.skipSpace();
    if (c.eat('(')) {
      auto g = c.hex();
      if (!g || !c.eat(')')) fail(lineNo, "bad remote port GUID");
      port.remotePortGuid = Guid{*g};
    }
    // Options before the comment.
    auto hash = c.s.find('#');
    Cursor opts{c.s.substr(0, hash)};
    for (auto tok = opts.word(); !tok.empty(); tok = opts.word()) {
      if (tok.find('=') == std::string_view::npos)
        fail(lineNo, "unexpected text '" + std::string(tok) + "' on port line");
      applyOption(lineNo, tok, en, known);
    }
    if (hash != std::string_view::npos) parseTail(lineNo, c.s.substr(hash + 1), port, en, known);

    node.ports.push_back(std::move(port));
    enables_.back().push_back(known ? std::optional<Enables>(en) : std::nullopt);
  }

  // The comment tail: `"remote desc" lid N 4xHDR` (switch ports) or
  // `lid N lmc M "remote desc" lid N 4xHDR` (CA ports), optionally followed by -f's
  // `s=.. w=.. v=.. e=..` and -g's `slot N` / `(scp)`.
  void parseTail(int lineNo, std::string_view tail, NetPort& port, Enables& en, bool& known) {
    Cursor c{tail};
    c.skipSpace();
    auto q = c.s.find('"');
    std::string_view before = q == std::string_view::npos ? std::string_view{} : c.s.substr(0, q);
    if (q != std::string_view::npos) {
      Cursor b{before};
      if (b.word() == "lid") {
        b.skipSpace();
        if (auto v = b.number(); v && *v > 0 && *v <= 0xBFFF)
          port.lid = Lid{static_cast<std::uint16_t>(*v)};
      }
      c.s.remove_prefix(q);
      auto d = c.quoted();
      if (!d) fail(lineNo, "unterminated remote description");
      port.remoteDesc = std::string(*d);
      checkDesc(lineNo, port.remoteDesc);
    }
    std::string_view w = c.word();
    if (w.empty()) return;
    if (w != "lid") fail(lineNo, "expected 'lid N RATE' after the remote description");
    c.skipSpace();
    auto rl = c.number();
    if (!rl) fail(lineNo, "expected a number after 'lid'");
    if (*rl > 0 && *rl <= 0xBFFF) port.remoteLid = Lid{static_cast<std::uint16_t>(*rl)};
    std::string_view rateText = c.word();
    if (rateText.empty()) return;
    auto rate = parseLinkRate(rateText);
    if (!rate) fail(lineNo, "unknown link rate '" + std::string(rateText) + "'");
    for (auto tok = c.word(); !tok.empty(); tok = c.word()) {
      if (tok.find('=') != std::string_view::npos) applyOption(lineNo, tok, en, known);
    }
    // ibsim reads the tail after the options: the tail decides.
    en = enablesForRate(*rate);
    known = true;
  }

  void validate() {
    for (std::size_t ni = 0; ni < fabric_.nodes.size(); ++ni) {
      NetNode& n = fabric_.nodes[ni];
      for (std::size_t pi = 0; pi < n.ports.size(); ++pi) {
        NetPort& p = n.ports[pi];
        auto it = fabric_.find(p.remoteId);
        if (!it)
          fail(p.line,
               "unknown node \"" + p.remoteId + "\" referenced by " + portRef(n.id, p.port));
        std::size_t ri = static_cast<std::size_t>(it - fabric_.nodes.data());
        NetNode& r = fabric_.nodes[ri];
        if (p.remotePort.value() > r.numPorts)
          fail(p.line, "remote port " + toString(p.remotePort) + " out of range: \"" + r.id +
                           "\" has " + std::to_string(r.numPorts) + " ports");
        if (ri == ni && p.remotePort == p.port)
          fail(p.line, portRef(n.id, p.port) + " is linked to itself");
        auto backIt = std::find_if(r.ports.begin(), r.ports.end(),
                                   [&](const NetPort& x) { return x.port == p.remotePort; });
        if (backIt == r.ports.end())
          fail(p.line, "link " + portRef(n.id, p.port) + " -> " + portRef(r.id, p.remotePort) +
                           ", but \"" + r.id + "\" lists no link on port " +
                           toString(p.remotePort));
        NetPort& back = *backIt;
        if (back.remoteId != n.id || back.remotePort != p.port)
          fail(p.line, "link " + portRef(n.id, p.port) + " -> " + portRef(r.id, p.remotePort) +
                           ", but line " + std::to_string(back.line) + " links " +
                           portRef(r.id, p.remotePort) + " -> " +
                           portRef(back.remoteId, back.remotePort));
        // Rate: once per cable, from what both ends enable.
        if (std::tie(ni, p.port) > std::tie(ri, back.port)) continue;
        const auto& ea = enables_[ni][pi];
        const auto& eb = enables_[ri][static_cast<std::size_t>(backIt - r.ports.begin())];
        if (!ea && !eb) continue;
        Enables defaults{2, speedsFromMasks(1, 0)};
        Enables a = ea ? *ea : defaults;
        Enables b = eb ? *eb : defaults;
        auto rate = activeRate(a, b);
        if (!rate)
          fail(p.line, "link " + portRef(n.id, p.port) + " -> " + portRef(r.id, p.remotePort) +
                           ": the ends share no enabled width or speed (ibsim exits on this)");
        p.rate = rate;
        back.rate = rate;
      }
    }
  }

  static std::optional<LinkRate> activeRate(Enables a, Enables b) {
    std::uint8_t w = a.widths & b.widths;
    std::uint16_t s = a.speeds & b.speeds;
    if (!w || !s) return std::nullopt;
    LinkRate r;
    for (LinkWidth cand :
         {LinkWidth::k12x, LinkWidth::k8x, LinkWidth::k4x, LinkWidth::k2x, LinkWidth::k1x}) {
      if (w & static_cast<std::uint8_t>(cand)) {
        r.width = cand;
        break;
      }
    }
    for (int i = static_cast<int>(LinkSpeed::kXdr); i >= 0; --i) {
      if (s & speedBit(static_cast<LinkSpeed>(i))) {
        r.speed = static_cast<LinkSpeed>(i);
        break;
      }
    }
    return r;
  }

  std::string_view text_;
  std::string_view source_;
  NetFabric fabric_;
  bool inRecord_ = false;
  // Per node, per port (parallel to NetNode::ports): what the port enables, when the file says.
  std::vector<std::vector<std::optional<Enables>>> enables_;
  std::vector<KeywordState> nodeKeywords_;
  KeywordState keywords_;
  std::unordered_map<std::string, std::size_t> ids_;
  std::unordered_map<std::uint64_t, std::size_t> guids_;
  // ibsim's GUID counters, indexed by NodeType (1 CA, 2 switch, 3 router).
  std::array<std::uint64_t, 4> absGuid_{0, 0x100000, 0x200000, 0};
  std::array<std::uint64_t, 4> nextGuid_{0, 0x100000, 0x200000, 0};
  bool routerGuidSet_ = false;
  std::optional<std::uint32_t> pendingVendor_;
  std::optional<std::uint32_t> deviceId_;
  std::optional<Guid> pendingSysImage_;
};

// ---- Writer ------------------------------------------------------------------------------------

std::string rateTail(const NetPort& p) {
  if (!p.rate) return "";
  return " lid " + std::to_string(p.remoteLid ? p.remoteLid->value() : 0) + " " +
         p.rate->toString();
}

}  // namespace

NetFabric parseNetText(std::string_view text, std::string_view sourceName) {
  return Parser(text, sourceName).run();
}

NetFabric parseNetFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NetFileError(path.string() + ":0: cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw NetFileError(path.string() + ":0: read error");
  return parseNetText(ss.str(), path.string());
}

std::string formatNetFile(const NetFabric& fabric) {
  std::string out;
  out.reserve(fabric.nodes.size() * 160);
  std::optional<std::uint32_t> lastDevid;
  char buf[64];
  for (const auto& n : fabric.nodes) {
    out += '\n';
    if (n.vendorId) {
      std::snprintf(buf, sizeof buf, "vendid=0x%x\n", *n.vendorId);
      out += buf;
    }
    // ibsim keeps the last devid= for later nodes: reset it when this node has none.
    if (n.deviceId || lastDevid) {
      std::snprintf(buf, sizeof buf, "devid=0x%x\n", n.deviceId.value_or(0));
      out += buf;
    }
    lastDevid = n.deviceId;
    if (n.sysImageGuid) out += "sysimgguid=0x" + hexNoPrefix(n.sysImageGuid->value()) + "\n";
    if (n.guid) {
      std::string g = hexNoPrefix(n.guid->value());
      switch (n.type) {
        case NodeType::kSwitch:
          out += "switchguid=0x" + g + "(" + g + ")\n";
          break;
        case NodeType::kCa:
          out += "caguid=0x" + g + "\n";
          break;
        case NodeType::kRouter:
          out += "rtguid=0x" + g + "\n";
          break;
      }
    }
    std::string_view kind = n.type == NodeType::kSwitch ? "Switch"
                            : n.type == NodeType::kCa   ? "Ca"
                                                        : "Rt";
    out += std::string(kind) + "\t" + std::to_string(n.numPorts) + " " + quote(n.id) + "\t\t# " +
           quote(n.desc);
    if (n.type == NodeType::kSwitch && (n.enhancedPort0 || n.lid)) {
      if (n.enhancedPort0) out += *n.enhancedPort0 ? " enhanced port 0" : " base port 0";
      out += " lid " + std::to_string(n.lid ? n.lid->value() : 0) + " lmc 0";
    }
    out += '\n';

    std::vector<const NetPort*> ports;
    for (const auto& p : n.ports) ports.push_back(&p);
    std::sort(ports.begin(), ports.end(),
              [](const NetPort* a, const NetPort* b) { return a->port < b->port; });
    for (const NetPort* p : ports) {
      out += "[" + toString(p->port) + "]";
      if (p->portGuid) out += "(" + hexNoPrefix(p->portGuid->value()) + ") ";
      out += "\t" + quote(p->remoteId) + "[" + toString(p->remotePort) + "]";
      if (p->remotePortGuid) out += "(" + hexNoPrefix(p->remotePortGuid->value()) + ") ";
      out += "\t\t# ";
      if (n.type != NodeType::kSwitch)
        out += "lid " + std::to_string(p->lid ? p->lid->value() : 0) + " lmc 0 ";
      out += quote(p->remoteDesc) + rateTail(*p) + "\n";
    }
  }
  return out;
}

}  // namespace ibfabric
