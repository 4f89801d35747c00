// Telemetry: rendering checked line by line, and every rendering checked against the text
// exposition format 0.0.4 rules (prometheus.io/docs/instrumenting/exposition_formats) by a
// small independent parser below.
#include "core/telemetry.h"

#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

namespace aiscale {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Parses `a="x",b="y"` (escapes \\ \" \n only); false on any other shape.
bool ParseLabels(const std::string& s, std::vector<std::pair<std::string, std::string>>& out) {
  static const std::regex kName("[a-zA-Z_][a-zA-Z0-9_]*");
  size_t i = 0;
  while (i < s.size()) {
    const size_t eq = s.find("=\"", i);
    if (eq == std::string::npos || !std::regex_match(s.substr(i, eq - i), kName)) return false;
    std::string value;
    size_t j = eq + 2;
    for (; j < s.size() && s[j] != '"'; ++j) {
      if (s[j] == '\\') {
        if (++j >= s.size()) return false;
        if (s[j] == 'n') {
          value += '\n';
        } else if (s[j] == '\\' || s[j] == '"') {
          value += s[j];
        } else {
          return false;
        }
      } else {
        value += s[j];
      }
    }
    if (j >= s.size()) return false;
    out.emplace_back(s.substr(i, eq - i), value);
    i = j + 1;
    if (i < s.size() && s[i++] != ',') return false;
  }
  return true;
}

bool ParseValue(const std::string& s, double& v) {
  if (s == "+Inf" || s == "-Inf" || s == "NaN") {
    v = s == "NaN" ? std::nan("") : (s[0] == '+' ? INFINITY : -INFINITY);
    return true;
  }
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return !s.empty() && *end == '\0';
}

struct HistogramSeries {
  std::vector<std::pair<double, double>> buckets;  // le, count
  double count = -1;
};

// Every rule of the format this renderer must keep; returns the broken ones.
std::vector<std::string> ExpositionErrors(const std::string& text) {
  static const std::regex kMeta(R"(# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*))");
  static const std::regex kSample(R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+))");
  std::vector<std::string> errors;
  if (!text.empty() && text.back() != '\n') errors.push_back("last line lacks a line feed");
  std::map<std::string, std::string> types;
  std::set<std::string> finished;  // families whose block has ended
  std::string current;
  std::map<std::string, HistogramSeries> hist;  // by family + labels without le
  auto type_of = [&types](const std::string& family) {
    auto it = types.find(family);
    return it == types.end() ? std::string() : it->second;
  };
  for (const std::string& line : Lines(text)) {
    std::smatch m;
    if (std::regex_match(line, m, kMeta)) {
      const std::string name = m[2];
      if (name != current) {
        if (!current.empty()) finished.insert(current);
        if (finished.count(name)) errors.push_back("family split: " + name);
        current = name;
      }
      if (m[1] == "TYPE") {
        if (types.count(name)) errors.push_back("second TYPE for " + name);
        types[name] = m[3];
        static const std::set<std::string> kTypes = {"counter", "gauge", "histogram", "summary",
                                                     "untyped"};
        if (!kTypes.count(m[3])) errors.push_back("bad type: " + line);
      }
      continue;
    }
    if (!std::regex_match(line, m, kSample)) {
      errors.push_back("not a sample: " + line);
      continue;
    }
    std::string name = m[1], family = name;
    for (const std::string suffix : {"_bucket", "_sum", "_count"}) {
      const std::string base =
          name.size() > suffix.size() ? name.substr(0, name.size() - suffix.size()) : std::string();
      if (name.ends_with(suffix) && type_of(base) == "histogram") family = base;
    }
    if (family != current) errors.push_back("sample outside its family's block: " + line);
    if (!types.count(family)) errors.push_back("sample before TYPE: " + line);
    std::vector<std::pair<std::string, std::string>> labels;
    double v = 0;
    if (!ParseLabels(m[3], labels)) errors.push_back("bad labels: " + line);
    if (!ParseValue(m[4], v)) errors.push_back("bad value: " + line);
    if (type_of(family) != "histogram") continue;
    std::string le, key = family;
    for (const auto& [k, val] : labels) {
      if (k == "le") {
        le = val;
      } else {
        key += "," + k + "=" + val;
      }
    }
    HistogramSeries& h = hist[key];
    if (name == family + "_bucket") {
      double bound = 0;
      if (!ParseValue(le, bound)) errors.push_back("bad le: " + line);
      if (!h.buckets.empty() && (bound <= h.buckets.back().first || v < h.buckets.back().second)) {
        errors.push_back("buckets not ascending and cumulative: " + line);
      }
      h.buckets.emplace_back(bound, v);
    } else if (name == family + "_count") {
      h.count = v;
    }
  }
  for (const auto& [key, h] : hist) {
    if (h.buckets.empty() || !std::isinf(h.buckets.back().first)) {
      errors.push_back("buckets do not end in +Inf: " + key);
    } else if (h.buckets.back().second != h.count) {
      errors.push_back("_count differs from the +Inf bucket: " + key);
    }
  }
  return errors;
}

TEST(Telemetry, RendersEveryTypeLineByLine) {
  Telemetry t;
  t.DeclareHistogram("aiscale_tick_duration_seconds", "Tick wall time.", {1, 0.1, 0.01, 0.1});
  t.DeclareCounter("aiscale_ticks_total", "Controller ticks completed.");
  t.DeclareGauge("aiscale_desired_replicas", "Replicas the last decision asked for.");
  t.Add("aiscale_ticks_total", {});
  t.Add("aiscale_ticks_total", {}, 2);
  t.Set("aiscale_desired_replicas", {{"workload", "serving/llm"}, {"engine", "kubernetes"}}, 4);
  t.Set("aiscale_desired_replicas", {{"engine", "local"}, {"workload", "bert"}}, 1.5);
  t.Observe("aiscale_tick_duration_seconds", {}, 0.004);
  t.Observe("aiscale_tick_duration_seconds", {}, 0.05);
  t.Observe("aiscale_tick_duration_seconds", {}, 7);
  const std::vector<std::string> want = {
      "# HELP aiscale_desired_replicas Replicas the last decision asked for.",
      "# TYPE aiscale_desired_replicas gauge",
      R"(aiscale_desired_replicas{engine="kubernetes",workload="serving/llm"} 4)",
      R"(aiscale_desired_replicas{engine="local",workload="bert"} 1.5)",
      "# HELP aiscale_telemetry_misuse_total Telemetry updates ignored: undeclared family, wrong "
      "type, bad name, label or value.",
      "# TYPE aiscale_telemetry_misuse_total counter",
      "aiscale_telemetry_misuse_total 0",
      "# HELP aiscale_tick_duration_seconds Tick wall time.",
      "# TYPE aiscale_tick_duration_seconds histogram",
      R"(aiscale_tick_duration_seconds_bucket{le="0.01"} 1)",
      R"(aiscale_tick_duration_seconds_bucket{le="0.1"} 2)",
      R"(aiscale_tick_duration_seconds_bucket{le="1"} 2)",
      R"(aiscale_tick_duration_seconds_bucket{le="+Inf"} 3)",
      "aiscale_tick_duration_seconds_sum 7.054",
      "aiscale_tick_duration_seconds_count 3",
      "# HELP aiscale_ticks_total Controller ticks completed.",
      "# TYPE aiscale_ticks_total counter",
      "aiscale_ticks_total 3",
  };
  const std::string text = t.RenderText();
  EXPECT_EQ(Lines(text), want);
  EXPECT_EQ(ExpositionErrors(text), std::vector<std::string>{});
}

TEST(Telemetry, EscapesLabelValuesAndHelp) {
  struct Case {
    const char* name;
    std::string value;
    std::string rendered;  // inside the quotes
  };
  const std::vector<Case> cases = {
      {"plain", "serving/llm-0", "serving/llm-0"}, {"backslash", R"(C:\jobs)", R"(C:\\jobs)"},
      {"quote", R"(say "hi")", R"(say \"hi\")"},   {"newline", "a\nb", R"(a\nb)"},
      {"all three", "\\\"\n", R"(\\\"\n)"},        {"utf8 kept", "caf\xc3\xa9", "caf\xc3\xa9"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Telemetry t;  // "a" sorts before aiscale_telemetry_misuse_total
    t.DeclareGauge("a", "line one\nback\\slash \"quoted\"");
    t.Set("a", {{"w", c.value}}, 1);
    const std::string text = t.RenderText();
    const auto lines = Lines(text);
    ASSERT_GE(lines.size(), 3u);
    EXPECT_EQ(lines[0], R"(# HELP a line one\nback\\slash "quoted")");
    EXPECT_EQ(lines[2], "a{w=\"" + c.rendered + "\"} 1");
    EXPECT_EQ(ExpositionErrors(text), std::vector<std::string>{});
  }
}

TEST(Telemetry, FormatsSpecialValues) {
  struct Case {
    const char* name;
    double value;
    std::string text;
  };
  const std::vector<Case> cases = {
      {"integer", 42, "42"},        {"fraction", 0.25, "0.25"},
      {"negative", -3.5, "-3.5"},   {"tiny", 1e-9, "1e-09"},
      {"+inf", INFINITY, "+Inf"},   {"-inf", -INFINITY, "-Inf"},
      {"nan", std::nan(""), "NaN"}, {"round trip", 0.1 + 0.2, "0.30000000000000004"},
      {"large", 1.5e20, "1.5e+20"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Telemetry t;
    t.DeclareGauge("a", "h");
    t.Set("a", {}, c.value);
    EXPECT_EQ(Lines(t.RenderText())[2], "a " + c.text);
  }
}

TEST(Telemetry, MisuseIsCountedAndIgnored) {
  struct Case {
    const char* name;
    std::function<void(Telemetry&)> misuse;
  };
  const std::vector<Case> cases = {
      {"undeclared", [](Telemetry& t) { t.Add("nope_total", {}); }},
      {"counter set", [](Telemetry& t) { t.Set("c_total", {}, 1); }},
      {"gauge add", [](Telemetry& t) { t.Add("g", {}); }},
      {"gauge observe", [](Telemetry& t) { t.Observe("g", {}, 1); }},
      {"histogram add", [](Telemetry& t) { t.Add("h_seconds", {}); }},
      {"negative increment", [](Telemetry& t) { t.Add("c_total", {}, -1); }},
      {"nan increment", [](Telemetry& t) { t.Add("c_total", {}, std::nan("")); }},
      {"nan observation", [](Telemetry& t) { t.Observe("h_seconds", {}, std::nan("")); }},
      {"bad label name",
       [](Telemetry& t) {
         t.Set("g", {{"bad-name", "x"}}, 1);
       }},
      {"reserved label name",
       [](Telemetry& t) {
         t.Set("g", {{"__name__", "x"}}, 1);
       }},
      {"repeated label",
       [](Telemetry& t) {
         t.Set("g", {{"a", "x"}, {"a", "y"}}, 1);
       }},
      {"le on histogram",
       [](Telemetry& t) {
         t.Observe("h_seconds", {{"le", "1"}}, 1);
       }},
      {"bad metric name", [](Telemetry& t) { t.DeclareGauge("1bad", "h"); }},
      {"empty metric name", [](Telemetry& t) { t.DeclareGauge("", "h"); }},
      {"redeclared as other type", [](Telemetry& t) { t.DeclareGauge("c_total", "h"); }},
      {"misuse family declared",
       [](Telemetry& t) { t.DeclareGauge("aiscale_telemetry_misuse_total", "h"); }},
      {"forget undeclared", [](Telemetry& t) { t.Forget("nope", "w", "x"); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Telemetry t;
    t.DeclareCounter("c_total", "c");
    t.DeclareGauge("g", "g");
    t.DeclareHistogram("h_seconds", "h", {1});
    const std::string before = t.RenderText();
    c.misuse(t);
    EXPECT_EQ(t.Value("aiscale_telemetry_misuse_total", {}), 1);
    std::string after = t.RenderText();
    const std::string counted = "aiscale_telemetry_misuse_total 1";
    ASSERT_NE(after.find(counted), std::string::npos);
    after.replace(after.find(counted), counted.size(), "aiscale_telemetry_misuse_total 0");
    EXPECT_EQ(after, before);  // nothing else changed
  }
}

TEST(Telemetry, SeriesAreOneByLabelSetWhateverTheOrder) {
  Telemetry t;
  t.DeclareCounter("aiscale_apply_errors_total", "Actuator errors.");
  t.Add("aiscale_apply_errors_total", {{"workload", "a"}, {"code", "unavailable"}});
  t.Add("aiscale_apply_errors_total", {{"code", "unavailable"}, {"workload", "a"}});
  EXPECT_EQ(t.Value("aiscale_apply_errors_total", {{"workload", "a"}, {"code", "unavailable"}}), 2);
  EXPECT_EQ(t.Value("aiscale_apply_errors_total", {{"workload", "b"}}), 0);
  EXPECT_EQ(t.Value("undeclared", {}), 0);
}

TEST(Telemetry, ForgetDropsTheWorkloadsSeries) {
  Telemetry t;
  t.DeclareGauge("aiscale_current_replicas", "Replicas now.");
  t.Set("aiscale_current_replicas", {{"workload", "a"}}, 1);
  t.Set("aiscale_current_replicas", {{"workload", "b"}}, 2);
  t.Forget("aiscale_current_replicas", "workload", "a");
  const auto lines = Lines(t.RenderText());
  ASSERT_EQ(lines.size(), 3u + 3u);
  EXPECT_EQ(lines[2], R"(aiscale_current_replicas{workload="b"} 2)");
  EXPECT_EQ(t.Value("aiscale_telemetry_misuse_total", {}), 0);
}

TEST(Telemetry, HistogramsWithLabelsStayValid) {
  Telemetry t;
  t.DeclareHistogram("aiscale_fetch_duration_seconds", "Signal fetch latency.",
                     {0.005, 0.05, 0.5, NAN, INFINITY});
  t.DeclareHistogram("aiscale_empty_seconds", "No buckets but +Inf.", {});
  for (double v : {0.001, 0.005, 0.2, 3.0, -1.0}) {
    t.Observe("aiscale_fetch_duration_seconds", {{"source", "prometheus"}}, v);
  }
  t.Observe("aiscale_fetch_duration_seconds", {{"source", "scrape"}}, INFINITY);
  t.Observe("aiscale_empty_seconds", {}, 2);
  const std::string text = t.RenderText();
  EXPECT_EQ(ExpositionErrors(text), std::vector<std::string>{});
  EXPECT_NE(text.find(R"(aiscale_fetch_duration_seconds_bucket{source="prometheus",le="0.005"} 3)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(aiscale_fetch_duration_seconds_bucket{source="scrape",le="0.5"} 0)"),
            std::string::npos);
  EXPECT_NE(text.find(R"(aiscale_fetch_duration_seconds_bucket{source="scrape",le="+Inf"} 1)"),
            std::string::npos);
  EXPECT_NE(text.find("aiscale_empty_seconds_bucket{le=\"+Inf\"} 1\n"), std::string::npos);
}

TEST(Telemetry, TheValidatorCatchesBrokenText) {
  // The checker above must be able to fail, or the tests that use it prove nothing.
  const std::vector<std::pair<const char*, std::string>> cases = {
      {"two TYPE lines", "# TYPE a counter\n# TYPE a counter\na 1\n"},
      {"bad name", "# TYPE 1a gauge\n1a 1\n"},
      {"no TYPE", "a 1\n"},
      {"bad escape", "# TYPE a gauge\na{x=\"\\t\"} 1\n"},
      {"not cumulative",
       "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n"},
      {"no +Inf", "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_count 2\n"},
      {"no final line feed", "# TYPE a gauge\na 1"},
  };
  for (const auto& [name, text] : cases) {
    SCOPED_TRACE(name);
    EXPECT_FALSE(ExpositionErrors(text).empty());
  }
}

TEST(Telemetry, ConcurrentUpdatesAreAllCounted) {
  Telemetry t;
  t.DeclareCounter("c_total", "c");
  t.DeclareHistogram("h_seconds", "h", {0.5});
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&t, i] {
      for (int k = 0; k < 1000; ++k) {
        t.Add("c_total", {{"thread", std::to_string(i % 2)}});
        t.Observe("h_seconds", {}, 0.1);
        if (k % 100 == 0) (void)t.RenderText();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(t.Value("c_total", {{"thread", "0"}}) + t.Value("c_total", {{"thread", "1"}}), 4000);
  EXPECT_NE(t.RenderText().find("h_seconds_count 4000\n"), std::string::npos);
}

}  // namespace
}  // namespace aiscale
