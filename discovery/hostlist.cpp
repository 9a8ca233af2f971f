#include "discovery/hostlist.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <tuple>

namespace ibfabric {
namespace {

struct Split {
  std::string prefix;
  std::string digits;  // empty when the name has no numeric suffix
};

Split splitName(const std::string& name) {
  std::size_t end = name.size();
  std::size_t start = end;
  while (start > 0 && name[start - 1] >= '0' && name[start - 1] <= '9') --start;
  // Very long digit runs cannot be numbers we range over; keep them as plain names.
  if (end - start > 18) start = end;
  return {name.substr(0, start), name.substr(start)};
}

std::uint64_t toNumber(std::string_view digits, std::string_view context) {
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc{} || p != digits.data() + digits.size() ||
      digits.size() > 18) {
    throw std::invalid_argument("hostlist: '" + std::string(digits) + "' in '" +
                                std::string(context) + "' is not a number");
  }
  return v;
}

std::string padded(std::uint64_t v, std::size_t width) {
  std::string s = std::to_string(v);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

}  // namespace

std::string compressHostlist(std::vector<std::string> names) {
  // Group key: prefix, digit width (0 = no number). Values: the numbers, sorted.
  std::map<std::tuple<std::string, std::size_t>, std::vector<std::uint64_t>> groups;
  std::vector<std::string> plain;
  for (const auto& name : names) {
    if (name.empty()) continue;
    Split s = splitName(name);
    if (s.digits.empty()) {
      plain.push_back(name);
      continue;
    }
    groups[{s.prefix, s.digits.size()}].push_back(toNumber(s.digits, name));
  }
  std::sort(plain.begin(), plain.end());
  plain.erase(std::unique(plain.begin(), plain.end()), plain.end());

  // Entries sorted by prefix (then width), plain names merged in by their text.
  std::vector<std::pair<std::string, std::string>> entries;  // sort key, text
  for (auto& [key, numbers] : groups) {
    const auto& [prefix, width] = key;
    std::sort(numbers.begin(), numbers.end());
    numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
    std::string text = prefix;
    if (numbers.size() == 1) {
      text += padded(numbers[0], width);
    } else {
      text += '[';
      for (std::size_t i = 0; i < numbers.size();) {
        std::size_t j = i;
        while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
        if (i > 0) text += ',';
        text += padded(numbers[i], width);
        if (j > i) text += '-' + padded(numbers[j], width);
        i = j + 1;
      }
      text += ']';
    }
    entries.emplace_back(prefix + padded(numbers[0], width), std::move(text));
  }
  for (auto& p : plain) entries.emplace_back(p, p);
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& e : entries) {
    if (!out.empty()) out += ',';
    out += e.second;
  }
  return out;
}

std::vector<std::string> expandHostlist(std::string_view list, std::size_t limit) {
  std::vector<std::string> out;
  auto push = [&](std::string name) {
    if (out.size() >= limit) {
      throw std::invalid_argument("hostlist: more than " + std::to_string(limit) + " names");
    }
    out.push_back(std::move(name));
  };
  std::size_t i = 0;
  while (i < list.size()) {
    // One item: up to the next comma outside brackets.
    std::size_t j = i;
    int depth = 0;
    for (; j < list.size(); ++j) {
      if (list[j] == '[') ++depth;
      if (list[j] == ']') --depth;
      if (depth < 0)
        throw std::invalid_argument("hostlist: unbalanced ']' in '" + std::string(list) + "'");
      if (list[j] == ',' && depth == 0) break;
    }
    if (depth != 0) {
      throw std::invalid_argument("hostlist: unbalanced '[' in '" + std::string(list) + "'");
    }
    std::string_view item = list.substr(i, j - i);
    i = j + 1;
    if (item.empty()) continue;
    auto open = item.find('[');
    if (open == std::string_view::npos) {
      push(std::string(item));
      continue;
    }
    auto close = item.find(']', open);
    if (item.find('[', open + 1) != std::string_view::npos) {
      throw std::invalid_argument("hostlist: more than one bracket group in '" + std::string(item) +
                                  "'");
    }
    std::string prefix(item.substr(0, open));
    std::string suffix(item.substr(close + 1));
    std::string_view ranges = item.substr(open + 1, close - open - 1);
    if (ranges.empty()) {
      throw std::invalid_argument("hostlist: empty brackets in '" + std::string(item) + "'");
    }
    std::size_t k = 0;
    while (k <= ranges.size()) {
      std::size_t comma = ranges.find(',', k);
      if (comma == std::string_view::npos) comma = ranges.size();
      std::string_view range = ranges.substr(k, comma - k);
      k = comma + 1;
      auto dash = range.find('-');
      std::string_view lo = range.substr(0, dash);
      std::string_view hi = dash == std::string_view::npos ? lo : range.substr(dash + 1);
      std::uint64_t a = toNumber(lo, item);
      std::uint64_t b = toNumber(hi, item);
      if (b < a) {
        throw std::invalid_argument("hostlist: descending range '" + std::string(range) + "' in '" +
                                    std::string(item) + "'");
      }
      if (b - a >= limit) {
        throw std::invalid_argument("hostlist: more than " + std::to_string(limit) + " names");
      }
      for (std::uint64_t v = a; v <= b; ++v) push(prefix + padded(v, lo.size()) + suffix);
    }
  }
  return out;
}

}  // namespace ibfabric
