// ExpositionParser: the Prometheus text format 0.0.4 and OpenMetrics 1.0 text, parsed into
// metric families and samples that point into the response body (no copy per sample).
//
// Why hand-written: an exposition endpoint is read every few seconds for every replica, and a
// dcgm-exporter on an 8-GPU node or a vLLM server with many histograms sends thousands of
// lines; the parser is one pass over the bytes, string_views into the body, no regex, and an
// allocation only for a label value that carries escapes.
//
// Contract: pure functions, no I/O, never throw. A malformed payload is Status::Invalid whose
// message names the 1-based line and what is wrong ("line 12: expected '=' after label name
// \"gpu\""). Input size, sample count and labels per sample are bounded (ParseLimits) so a
// hostile endpoint cannot exhaust memory. What is accepted beyond the two specs (so real
// exporters parse): blanks/tabs between tokens, a space after a comma between labels (older
// dcgm-exporter), a trailing comma, CR before LF, empty lines, unknown comment lines; OpenMetrics
// exemplars ("# {...} v") and start timestamps ("st@...") are skipped. A Exposition is immutable
// once built; it is safe to read from several threads.
//
//   ASSIGN_OR_RETURN(Exposition e, ParseExposition(std::move(body), FormatFromContentType(ct)));
//   for (const MetricFamily* f : e.FindFamilies("DCGM_FI_DEV_GPU_UTIL")) ...
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace aiscale::monitor {

enum class MetricType : uint8_t {
  kUntyped,  // Prometheus "untyped", OpenMetrics "unknown", or no TYPE line
  kCounter,
  kGauge,
  kHistogram,
  kGaugeHistogram,
  kSummary,
  kInfo,
  kStateSet,
};
std::string_view MetricTypeName(MetricType t);

enum class ExpositionFormat {
  kPrometheusText,  // text/plain; version=0.0.4 (timestamps in integer milliseconds)
  kOpenMetrics,     // application/openmetrics-text (timestamps in seconds; must end in # EOF)
};
// application/openmetrics-text... -> kOpenMetrics; anything else (text/plain, missing) ->
// kPrometheusText, the format every exporter falls back to.
ExpositionFormat FormatFromContentType(std::string_view content_type);

struct LabelView {
  std::string_view name;
  std::string_view value;  // unescaped
};

struct Sample {
  std::string_view name;  // as written: x, x_total, x_bucket, x_sum...
  uint32_t family = 0;    // index into Exposition::families()
  uint32_t first_label = 0;
  uint32_t num_labels = 0;
  double value = 0;  // NaN and +-Inf are values, passed through
  bool has_timestamp = false;
  int64_t timestamp_ms = 0;  // since the Unix epoch (OpenMetrics seconds are converted)
};

struct MetricFamily {
  std::string_view name;  // from TYPE/HELP, or the first sample's name when untyped
  MetricType type = MetricType::kUntyped;
  std::string_view help;  // unescaped
  std::string_view unit;
  uint32_t first_sample = 0;
  uint32_t num_samples = 0;
};

struct ParseLimits {
  size_t max_bytes = 64u << 20;
  size_t max_samples = 1'000'000;
  size_t max_labels_per_sample = 64;
  // Asked every few thousand lines; true stops the parse with kUnavailable "cancelled" (a
  // stopping daemon does not wait out a parse of a huge target). Null: never.
  std::function<bool()> cancelled;
};

class Exposition {
 public:
  Exposition(Exposition&&) = default;
  Exposition& operator=(Exposition&&) = default;

  ExpositionFormat format() const { return format_; }
  const std::vector<MetricFamily>& families() const { return families_; }
  const std::vector<Sample>& samples() const { return samples_; }
  std::span<const Sample> SamplesOf(const MetricFamily& f) const {
    return {samples_.data() + f.first_sample, f.num_samples};
  }
  std::span<const LabelView> Labels(const Sample& s) const {
    return {labels_.data() + s.first_label, s.num_labels};
  }
  // The value of label `name`; empty when absent (Prometheus treats the two alike).
  std::string_view Label(const Sample& s, std::string_view name) const;
  // Families called `name`, in order (several only if the exposer interleaved them; a family
  // declared by HELP/TYPE whose samples came after other families is continued by a second
  // entry with the same metadata, and the empty declaration is then left out). A counter
  // is also found by its sample name: "x_total" finds family "x" and "x" finds "x_total".
  std::vector<const MetricFamily*> FindFamilies(std::string_view name) const;

 private:
  friend class ExpositionBuilder;
  Exposition() = default;

  ExpositionFormat format_ = ExpositionFormat::kPrometheusText;
  std::unique_ptr<std::string> text_;  // the views below point into it (heap: stable on move)
  std::deque<std::string> unescaped_;  // label values / help texts that had escapes
  std::vector<MetricFamily> families_;
  std::vector<Sample> samples_;
  std::vector<LabelView> labels_;
};

// Parses `text` (taken over: the result's views point into it). Errors: kInvalid with the line.
Result<Exposition> ParseExposition(std::string text, ExpositionFormat format,
                                   const ParseLimits& limits = {});

}  // namespace aiscale::monitor
