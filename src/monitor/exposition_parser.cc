#include "monitor/exposition_parser.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "core/numeric.h"

namespace aiscale::monitor {

std::string_view MetricTypeName(MetricType t) {
  switch (t) {
    case MetricType::kUntyped:
      return "untyped";
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kGaugeHistogram:
      return "gaugehistogram";
    case MetricType::kSummary:
      return "summary";
    case MetricType::kInfo:
      return "info";
    case MetricType::kStateSet:
      return "stateset";
  }
  return "untyped";
}

ExpositionFormat FormatFromContentType(std::string_view content_type) {
  // Media types are case-insensitive; compare the type/subtype before any parameter.
  std::string_view media = content_type.substr(0, content_type.find(';'));
  while (!media.empty() && media.front() == ' ') media.remove_prefix(1);
  constexpr std::string_view kOm = "application/openmetrics-text";
  if (media.size() < kOm.size()) return ExpositionFormat::kPrometheusText;
  for (size_t i = 0; i < kOm.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(media[i])) != kOm[i]) {
      return ExpositionFormat::kPrometheusText;
    }
  }
  return ExpositionFormat::kOpenMetrics;
}

std::string_view Exposition::Label(const Sample& s, std::string_view name) const {
  for (const LabelView& l : Labels(s)) {
    if (l.name == name) return l.value;
  }
  return {};
}

std::vector<const MetricFamily*> Exposition::FindFamilies(std::string_view name) const {
  constexpr std::string_view kTotal = "_total";
  auto counter_alias = [&](std::string_view fam) {
    // fam + "_total" == name, or name + "_total" == fam.
    if (name.size() == fam.size() + kTotal.size()) {
      return name.starts_with(fam) && name.ends_with(kTotal);
    }
    if (fam.size() == name.size() + kTotal.size()) {
      return fam.starts_with(name) && fam.ends_with(kTotal);
    }
    return false;
  };
  std::vector<const MetricFamily*> out;
  bool any_samples = false;
  for (const MetricFamily& f : families_) {
    if (f.name == name || (f.type == MetricType::kCounter && counter_alias(f.name))) {
      out.push_back(&f);
      any_samples = any_samples || f.num_samples > 0;
    }
  }
  // A declared-only entry (metadata whose samples came later) is noise next to the real one.
  if (any_samples) std::erase_if(out, [](const MetricFamily* f) { return f->num_samples == 0; });
  return out;
}

namespace {

// Character classes by table: the hot loop tests one byte at a time.
struct CharTable {
  std::array<bool, 256> name_start{};
  std::array<bool, 256> name_char{};
  constexpr CharTable() {
    for (int c = 0; c < 256; ++c) {
      bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
      name_start[c] = alpha || c == '_' || c == ':';
      name_char[c] = name_start[c] || (c >= '0' && c <= '9');
    }
  }
};
constexpr CharTable kChars;

inline bool IsBlank(char c) { return c == ' ' || c == '\t'; }
inline bool IsNameStart(char c) { return kChars.name_start[static_cast<unsigned char>(c)]; }
inline bool IsNameChar(char c) { return kChars.name_char[static_cast<unsigned char>(c)]; }

// Go's strconv.ParseFloat accepts a leading '+' (as in "+Inf"); from_chars does not.
bool ParseDouble(std::string_view tok, double* out) {
  const char* b = tok.data();
  const char* e = b + tok.size();
  if (b != e && *b == '+') {
    ++b;
    if (b != e && (*b == '-' || *b == '+')) return false;
  }
  if (b == e) return false;
  auto [p, ec] = std::from_chars(b, e, *out);
  return ec == std::errc() && p == e;
}

bool ParseInt64(std::string_view tok, int64_t* out) {
  const char* b = tok.data();
  const char* e = b + tok.size();
  if (b != e && *b == '+') ++b;
  if (b == e) return false;
  auto [p, ec] = std::from_chars(b, e, *out);
  return ec == std::errc() && p == e;
}

MetricType ParseType(std::string_view t, bool* ok) {
  *ok = true;
  if (t == "counter") return MetricType::kCounter;
  if (t == "gauge") return MetricType::kGauge;
  if (t == "histogram") return MetricType::kHistogram;
  if (t == "summary") return MetricType::kSummary;
  if (t == "untyped" || t == "unknown") return MetricType::kUntyped;
  if (t == "gaugehistogram") return MetricType::kGaugeHistogram;
  if (t == "info") return MetricType::kInfo;
  if (t == "stateset") return MetricType::kStateSet;
  *ok = false;
  return MetricType::kUntyped;
}

// Whether a sample called `name` is part of family `f` (name = family name + a suffix the
// family's type allows).
bool BelongsTo(std::string_view name, const MetricFamily& f) {
  if (!name.starts_with(f.name)) return false;
  std::string_view suffix = name.substr(f.name.size());
  switch (f.type) {
    case MetricType::kCounter:
      return suffix.empty() || suffix == "_total" || suffix == "_created";
    case MetricType::kHistogram:
    case MetricType::kGaugeHistogram:
      return suffix == "_bucket" || suffix == "_sum" || suffix == "_count" ||
             suffix == "_created" || suffix == "_gcount" || suffix == "_gsum";
    case MetricType::kSummary:
      return suffix.empty() || suffix == "_sum" || suffix == "_count" || suffix == "_created";
    case MetricType::kInfo:
      return suffix.empty() || suffix == "_info";
    default:
      return suffix.empty();
  }
}

std::string_view NextToken(std::string_view& rest) {
  size_t i = 0;
  while (i < rest.size() && IsBlank(rest[i])) ++i;
  size_t j = i;
  while (j < rest.size() && !IsBlank(rest[j])) ++j;
  std::string_view tok = rest.substr(i, j - i);
  rest.remove_prefix(j);
  return tok;
}

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

// Builds one Exposition line by line. Lives in the .cc; a friend of Exposition.
class ExpositionBuilder {
 public:
  ExpositionBuilder(std::string text, ExpositionFormat format, const ParseLimits& limits)
      : limits_(limits) {
    e_.format_ = format;
    e_.text_ = std::make_unique<std::string>(std::move(text));
  }

  Result<Exposition> Build();

 private:
  Status ParseLine(std::string_view line);
  Status ParseComment(std::string_view rest);
  Status ParseSample(std::string_view line);
  Status ParseLabels(const char*& p, const char* end, std::string_view* name);
  Status ParseValueAndTimestamp(std::string_view rest, Sample* s);
  // Parses a "quoted" string at p (p at the opening quote); leaves p after the closing quote.
  Status ParseQuoted(const char*& p, const char* end, std::string_view* out);
  Status StartFamily(std::string_view name, MetricType type);
  Status StartSampleFamily(std::string_view name);
  Status Fail(std::string_view what) const {
    return Status::Invalid("line " + std::to_string(line_no_) + ": " + std::string(what));
  }
  std::string_view Unescape(std::string_view raw);
  MetricFamily* Current() { return families().empty() ? nullptr : &families().back(); }
  std::vector<MetricFamily>& families() { return e_.families_; }

  Exposition e_;
  ParseLimits limits_;
  int line_no_ = 0;
  bool saw_eof_ = false;
  // Metadata already seen for the current family (a second TYPE/HELP/UNIT is an error).
  bool cur_typed_ = false, cur_helped_ = false, cur_united_ = false;
  size_t sample_first_label_ = 0;  // where the sample being parsed starts in labels_
  // Families started by a HELP/TYPE/UNIT line, by name (for samples that come later).
  std::unordered_map<std::string_view, uint32_t> declared_;
};

Result<Exposition> ExpositionBuilder::Build() {
  const std::string& text = *e_.text_;
  if (text.size() > limits_.max_bytes) {
    return Status::Invalid("exposition of " + std::to_string(text.size()) +
                           " bytes exceeds the limit of " + std::to_string(limits_.max_bytes));
  }
  e_.samples_.reserve(text.size() / 96);
  e_.labels_.reserve(text.size() / 32);
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', end - p));
    const char* line_end = nl ? nl : end;
    if ((++line_no_ & 4095) == 0 && limits_.cancelled && limits_.cancelled()) {
      return Status::Unavailable("cancelled at line " + std::to_string(line_no_));
    }
    std::string_view line(p, line_end - p);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    RETURN_IF_ERROR(ParseLine(line));
    p = nl ? nl + 1 : end;
  }
  if (e_.format_ == ExpositionFormat::kOpenMetrics && !saw_eof_) {
    return Fail("OpenMetrics exposition does not end with '# EOF'");
  }
  return std::move(e_);
}

Status ExpositionBuilder::ParseLine(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && IsBlank(line[i])) ++i;
  if (i == line.size()) return Status::Ok();  // empty lines are ignored
  if (saw_eof_) return Fail("content after '# EOF'");
  if (line[i] == '#') return ParseComment(line.substr(i + 1));
  return ParseSample(line.substr(i));
}

Status ExpositionBuilder::ParseComment(std::string_view rest) {
  std::string_view keyword = NextToken(rest);
  const bool om = e_.format_ == ExpositionFormat::kOpenMetrics;
  if (keyword == "EOF" && om) {
    saw_eof_ = true;
    return Status::Ok();
  }
  if (keyword != "TYPE" && keyword != "HELP" && keyword != "UNIT") return Status::Ok();
  std::string_view name = NextToken(rest);
  if (name.size() >= 2 && name.front() == '"' && name.back() == '"') {
    name = name.substr(1, name.size() - 2);  // OpenMetrics quoted name (no escapes expected)
  }
  if (name.empty()) return Fail(std::string(keyword) + " line without a metric name");
  MetricFamily* cur = Current();
  const bool same = cur != nullptr && cur->name == name && cur->num_samples == 0;
  if (!same) {
    RETURN_IF_ERROR(StartFamily(name, MetricType::kUntyped));
    declared_[name] = static_cast<uint32_t>(families().size() - 1);
  }
  cur = Current();
  if (keyword == "TYPE") {
    if (cur_typed_) return Fail("second TYPE line for metric " + std::string(name));
    bool ok = false;
    cur->type = ParseType(NextToken(rest), &ok);
    if (!ok) return Fail("unknown metric type in TYPE line for " + std::string(name));
    cur_typed_ = true;
  } else if (keyword == "HELP") {
    if (cur_helped_) return Fail("second HELP line for metric " + std::string(name));
    cur->help = Unescape(TrimBlanks(rest));
    cur_helped_ = true;
  } else {
    if (cur_united_) return Fail("second UNIT line for metric " + std::string(name));
    cur->unit = TrimBlanks(rest);
    cur_united_ = true;
  }
  return Status::Ok();
}

Status ExpositionBuilder::StartFamily(std::string_view name, MetricType type) {
  if (families().size() >= limits_.max_samples) {
    return Fail("more than " + std::to_string(limits_.max_samples) + " metric families");
  }
  MetricFamily f;
  f.name = name;
  f.type = type;
  f.first_sample = static_cast<uint32_t>(e_.samples_.size());
  families().push_back(f);
  cur_typed_ = cur_helped_ = cur_united_ = false;
  return Status::Ok();
}

// Some exposers print every HELP/TYPE block first and the samples after (dcgm-exporter 2.x
// README output): a sample whose family was declared earlier and is still empty continues it
// (a new family entry with the declared metadata, so samples stay contiguous per entry).
Status ExpositionBuilder::StartSampleFamily(std::string_view name) {
  static constexpr std::string_view kSuffixes[] = {
      "", "_total", "_created", "_bucket", "_sum", "_count", "_info", "_gcount", "_gsum"};
  for (std::string_view suffix : kSuffixes) {
    if (!name.ends_with(suffix)) continue;
    auto it = declared_.find(name.substr(0, name.size() - suffix.size()));
    if (it == declared_.end()) continue;
    const MetricFamily declared = families()[it->second];
    if (declared.num_samples != 0 || !BelongsTo(name, declared)) continue;
    RETURN_IF_ERROR(StartFamily(declared.name, declared.type));
    Current()->help = declared.help;
    Current()->unit = declared.unit;
    declared_.erase(it);
    return Status::Ok();
  }
  return StartFamily(name, MetricType::kUntyped);
}

Status ExpositionBuilder::ParseSample(std::string_view line) {
  if (e_.samples_.size() >= limits_.max_samples) {
    return Fail("more than " + std::to_string(limits_.max_samples) + " samples");
  }
  const char* p = line.data();
  const char* end = p + line.size();
  std::string_view name;
  if (IsNameStart(*p)) {
    const char* b = p;
    while (p < end && IsNameChar(*p)) ++p;
    name = std::string_view(b, p - b);
  } else if (*p != '{') {
    return Fail("invalid metric name");
  }
  Sample s;
  s.first_label = static_cast<uint32_t>(e_.labels_.size());
  sample_first_label_ = e_.labels_.size();
  if (p < end && *p == '{') {
    RETURN_IF_ERROR(ParseLabels(p, end, &name));
  } else if (p < end && !IsBlank(*p)) {
    return Fail("invalid character in metric name " + std::string(name));
  }
  if (name.empty()) return Fail("sample without a metric name");
  s.name = name;
  s.num_labels = static_cast<uint32_t>(e_.labels_.size()) - s.first_label;
  RETURN_IF_ERROR(ParseValueAndTimestamp(std::string_view(p, end - p), &s));
  MetricFamily* cur = Current();
  if (cur == nullptr || !BelongsTo(name, *cur)) {
    RETURN_IF_ERROR(StartSampleFamily(name));
    cur = Current();
  }
  s.family = static_cast<uint32_t>(families().size() - 1);
  e_.samples_.push_back(s);
  ++cur->num_samples;
  return Status::Ok();
}

Status ExpositionBuilder::ParseLabels(const char*& p, const char* end, std::string_view* name) {
  ++p;  // '{'
  bool first = true;
  while (true) {
    while (p < end && IsBlank(*p)) ++p;
    if (p == end) return Fail("unterminated label set (missing '}')");
    if (*p == '}') {
      ++p;
      return Status::Ok();
    }
    std::string_view key;
    bool quoted_key = false;
    if (*p == '"') {
      RETURN_IF_ERROR(ParseQuoted(p, end, &key));
      quoted_key = true;
    } else if (IsNameStart(*p) && *p != ':') {
      const char* b = p;
      while (p < end && IsNameChar(*p)) ++p;
      key = std::string_view(b, p - b);
    } else {
      return Fail("invalid label name");
    }
    while (p < end && IsBlank(*p)) ++p;
    if (quoted_key && first && name->empty() && p < end && (*p == ',' || *p == '}')) {
      *name = key;  // OpenMetrics {"metric.name",...} form
    } else {
      if (p == end || *p != '=') {
        return Fail("expected '=' after label name \"" + std::string(key) + "\"");
      }
      ++p;
      while (p < end && IsBlank(*p)) ++p;
      if (p == end || *p != '"') {
        return Fail("expected '\"' to open the value of label \"" + std::string(key) + "\"");
      }
      std::string_view value;
      RETURN_IF_ERROR(ParseQuoted(p, end, &value));
      if (e_.labels_.size() - sample_first_label_ >= limits_.max_labels_per_sample) {
        return Fail("more than " + std::to_string(limits_.max_labels_per_sample) +
                    " labels on one sample");
      }
      e_.labels_.push_back(LabelView{key, value});
    }
    first = false;
    while (p < end && IsBlank(*p)) ++p;
    if (p < end && *p == ',') {
      ++p;
    } else if (p < end && *p != '}') {
      return Fail("expected ',' or '}' after label \"" + std::string(key) + "\"");
    }
  }
}

Status ExpositionBuilder::ParseQuoted(const char*& p, const char* end, std::string_view* out) {
  ++p;  // opening quote
  const char* b = p;
  bool escaped = false;
  while (p < end && *p != '"') {
    if (*p == '\\') {
      escaped = true;
      if (++p == end) break;
    }
    ++p;
  }
  if (p == end) return Fail("unterminated quoted string (missing '\"')");
  std::string_view raw(b, p - b);
  ++p;  // closing quote
  *out = escaped ? Unescape(raw) : raw;
  return Status::Ok();
}

// \\ -> \, \" -> ", \n -> newline; any other escape is kept as written (OpenMetrics: a
// single backslash before a normal character stands for itself).
std::string_view ExpositionBuilder::Unescape(std::string_view raw) {
  if (raw.find('\\') == std::string_view::npos) return raw;
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c == '\\' && i + 1 < raw.size()) {
      char n = raw[++i];
      if (n == 'n') {
        out.push_back('\n');
      } else if (n == '\\' || n == '"') {
        out.push_back(n);
      } else {
        out.push_back('\\');
        out.push_back(n);
      }
    } else {
      out.push_back(c);
    }
  }
  e_.unescaped_.push_back(std::move(out));
  return e_.unescaped_.back();
}

Status ExpositionBuilder::ParseValueAndTimestamp(std::string_view rest, Sample* s) {
  std::string_view tok = NextToken(rest);
  if (tok.empty()) return Fail("missing value for " + std::string(s->name));
  if (!ParseDouble(tok, &s->value)) {
    return Fail("invalid value \"" + std::string(tok) + "\" for " + std::string(s->name));
  }
  const bool om = e_.format_ == ExpositionFormat::kOpenMetrics;
  while (true) {
    tok = NextToken(rest);
    if (tok.empty() || tok.front() == '#') return Status::Ok();  // end, or an exemplar
    if (tok.starts_with("st@")) continue;                        // OpenMetrics start timestamp
    if (s->has_timestamp) {
      return Fail("unexpected \"" + std::string(tok) + "\" after the timestamp");
    }
    if (om) {
      double secs = 0;
      if (!ParseDouble(tok, &secs) || !std::isfinite(secs)) {
        return Fail("invalid timestamp \"" + std::string(tok) + "\"");
      }
      s->timestamp_ms = SaturatingToInt64(std::round(secs * 1000.0));  // llround of 1e300 is UB
    } else if (!ParseInt64(tok, &s->timestamp_ms)) {
      return Fail("invalid timestamp \"" + std::string(tok) + "\" (integer milliseconds)");
    }
    s->has_timestamp = true;
  }
}

Result<Exposition> ParseExposition(std::string text, ExpositionFormat format,
                                   const ParseLimits& limits) {
  ExpositionBuilder b(std::move(text), format, limits);
  return b.Build();
}

}  // namespace aiscale::monitor
