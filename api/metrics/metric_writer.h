// MetricWriter: the one writer of the Prometheus text exposition format (0.0.4) behind every
// collector of /metrics. It appends to a string: no registry, no per-series label maps, so the
// per-port families of a 10,240-HCA fabric (over a million series) render in about a second.
// A family is written whole: family() (HELP and TYPE) then its samples; label sets are rendered
// once (Labels) and reused by every family that shares them.
//
// Streaming: a writer given a TextSink hands its text to the sink each time the string holds
// `spillAt` bytes and clears it, so a page of hundreds of MB passes through a buffer of that size
// (MetricsPage deflates each piece; api/metrics/gzip_rendering.h). flush() hands the rest.
//
// Owned by whoever renders (MetricsPage, a test); not thread-safe (one writer per rendering).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ibfabric::api {

/// Appends `value` to `out` as Prometheus expects: integers exactly, others shortest round-trip,
/// NaN / +Inf / -Inf spelled out.
void appendValue(std::string& out, double value);
/// The le label of a histogram bucket bound, in plain notation where it is short (0.0005, 1, 2.5):
/// as these families always wrote it.
std::string bucketBound(double bound);
/// Appends a label value with \, " and newline escaped.
void appendLabelValue(std::string& out, std::string_view value);

/// Where a streaming MetricWriter hands its text, piece by piece, in order.
class TextSink {
 public:
  virtual ~TextSink() = default;
  /// Takes the next piece of the text; may throw (the rendering then fails).
  virtual void write(std::string_view text) = 0;
};

/// A family's name, HELP text and TYPE (counter, gauge or histogram): each collector declares its
/// families as constants of this type in one block at the top of its file.
struct MetricFamily {
  std::string_view name;
  std::string_view help;
  std::string_view type;
};

/// A rendered label set: name="value",... (without braces), names in the order added.
class Labels {
 public:
  Labels() = default;
  Labels(std::string_view name, std::string_view value) { add(name, value); }
  Labels& add(std::string_view name, std::string_view value);
  const std::string& text() const { return text_; }
  bool empty() const { return text_.empty(); }
  /// The text, moved out (the set is empty after).
  std::string take() { return std::move(text_); }

 private:
  std::string text_;
};

class MetricWriter {
 public:
  explicit MetricWriter(std::string& out) : out_(out) {}
  /// Streaming into `sink` through `out`: whenever `out` holds `spillAt` bytes or more after a
  /// write, it goes to the sink and is cleared.
  MetricWriter(std::string& out, TextSink& sink, std::size_t spillAt)
      : out_(out), sink_(&sink), spillAt_(spillAt) {}

  /// # HELP and # TYPE lines; `type` is counter, gauge or histogram.
  void family(std::string_view name, std::string_view help, std::string_view type);
  void family(const MetricFamily& f) { family(f.name, f.help, f.type); }
  /// name{labels} value; `labels` already rendered (may be empty).
  void sample(std::string_view name, std::string_view labels, double value);
  void sample(std::string_view name, const Labels& labels, double value) {
    sample(name, labels.text(), value);
  }
  /// Integers (counts, counters) without a detour through double.
  void sampleU(std::string_view name, std::string_view labels, std::uint64_t value);
  void sampleU(std::string_view name, const Labels& labels, std::uint64_t value) {
    sampleU(name, labels.text(), value);
  }
  /// Samples written earlier with a MetricWriter on another string (a family's samples gathered
  /// in one pass with another family's).
  void samples(std::string_view rendered);
  /// Streaming: hands what `out` holds to the sink. Without a sink: nothing.
  void flush();

  /// The text written so far (and before: the writer appends); streaming, only what the sink
  /// has not taken yet.
  std::string& text() { return out_; }

 private:
  void spill() {
    if (sink_ && out_.size() >= spillAt_) flush();
  }

  std::string& out_;
  TextSink* sink_ = nullptr;
  std::size_t spillAt_ = 0;
};

}  // namespace ibfabric::api
