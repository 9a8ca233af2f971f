#include "api/metrics/metric_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace ibfabric::api {

void appendValue(std::string& out, double value) {
  if (std::isnan(value)) {
    out.append("NaN");
    return;
  }
  if (std::isinf(value)) {
    out.append(value > 0 ? "+Inf" : "-Inf");
    return;
  }
  char buf[32];
  if (value == std::floor(value) && std::fabs(value) < 9.0e15) {
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<std::int64_t>(value));
    out.append(buf, p);
    return;
  }
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, p);
}

std::string bucketBound(double bound) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", bound);
  return buf;
}

void appendLabelValue(std::string& out, std::string_view value) {
  for (char c : value) {
    if (c == '\\') {
      out.append("\\\\");
    } else if (c == '"') {
      out.append("\\\"");
    } else if (c == '\n') {
      out.append("\\n");
    } else {
      out.push_back(c);
    }
  }
}

Labels& Labels::add(std::string_view name, std::string_view value) {
  if (!text_.empty()) text_.push_back(',');
  text_.append(name).append("=\"");
  appendLabelValue(text_, value);
  text_.push_back('"');
  return *this;
}

void MetricWriter::family(std::string_view name, std::string_view help, std::string_view type) {
  out_.append("# HELP ").append(name).append(" ").append(help).append("\n# TYPE ");
  out_.append(name).append(" ").append(type).append("\n");
  spill();
}

void MetricWriter::sample(std::string_view name, std::string_view labels, double value) {
  out_.append(name);
  if (!labels.empty()) out_.append("{").append(labels).append("}");
  out_.push_back(' ');
  appendValue(out_, value);
  out_.push_back('\n');
  spill();
}

void MetricWriter::sampleU(std::string_view name, std::string_view labels, std::uint64_t value) {
  out_.append(name);
  if (!labels.empty()) out_.append("{").append(labels).append("}");
  out_.push_back(' ');
  char buf[24];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out_.append(buf, p);
  out_.push_back('\n');
  spill();
}

void MetricWriter::samples(std::string_view rendered) {
  if (sink_ && rendered.size() >= spillAt_) {  // a large block goes to the sink as it is
    flush();
    sink_->write(rendered);
    return;
  }
  out_.append(rendered);
  spill();
}

void MetricWriter::flush() {
  if (!sink_ || out_.empty()) return;
  sink_->write(out_);
  out_.clear();
}

}  // namespace ibfabric::api
