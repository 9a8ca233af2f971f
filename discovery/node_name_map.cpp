#include "discovery/node_name_map.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ibfabric {
namespace {

std::string_view trimLeft(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

std::string_view trim(std::string_view s) {
  s = trimLeft(s);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

NodeNameMap NodeNameMap::parse(std::string_view text, std::string_view sourceName) {
  NodeNameMap map;
  int lineNo = 0;
  auto problem = [&](const std::string& what) {
    map.problems_.push_back(
        Problem{lineNo, std::string(sourceName) + ":" + std::to_string(lineNo) + ": " + what});
  };
  while (!text.empty()) {
    auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    ++lineNo;
    line = trim(line);
    if (line.empty() || line.front() == '#') continue;

    auto end = line.find_first_of(" \t");
    std::string_view guidText = line.substr(0, end);
    auto guid = parseGuid(guidText);
    if (!guid) {
      problem("expected a GUID, got \"" + std::string(guidText) + "\"");
      continue;
    }
    std::string_view rest =
        end == std::string_view::npos ? std::string_view{} : trimLeft(line.substr(end));
    if (rest.empty() || rest.front() != '"') {
      problem("expected a quoted name after " + std::string(guidText));
      continue;
    }
    auto close = rest.find('"', 1);
    if (close == std::string_view::npos) {
      problem("unterminated quoted name");
      continue;
    }
    std::string_view tail = trim(rest.substr(close + 1));
    if (!tail.empty() && tail.front() != '#') {
      problem("unexpected text after the name: \"" + std::string(tail) + "\"");
      continue;
    }
    std::string name(rest.substr(1, close - 1));
    auto [it, added] = map.names_.try_emplace(*guid, name);
    if (!added) {
      problem("duplicate GUID " + toString(*guid) + " (this entry wins)");
      it->second = std::move(name);
    }
  }
  return map;
}

NodeNameMap NodeNameMap::load(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read node-name map " + path.string());
  std::ostringstream buf;
  buf << in.rdbuf();
  return parse(buf.str(), path.string());
}

const std::string* NodeNameMap::find(Guid guid) const {
  auto it = names_.find(guid);
  return it == names_.end() ? nullptr : &it->second;
}

}  // namespace ibfabric
