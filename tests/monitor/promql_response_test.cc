// Tables over real /api/v1/query payloads (tests/monitor/testdata/promql_*.json): examples from
// prometheus docs/querying/api.md and web/api/v1/api.go error envelopes, and *_2_42.json
// captured from a local Prometheus 2.42 (Debian 12) with curl.
#include "monitor/promql_response.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

namespace aiscale::monitor {
namespace {

std::string Testdata(const std::string& name) {
  std::ifstream in(std::string(AISCALE_SOURCE_DIR) + "/tests/monitor/testdata/" + name);
  std::ostringstream s;
  s << in.rdbuf();
  EXPECT_FALSE(s.str().empty()) << "missing testdata " << name;
  return s.str();
}

struct Want {
  std::string instance_label;  // label to identify the series by, empty for unlabelled
  std::string instance;
  double ts;
  double value;  // NaN compares by isnan
};

struct OkCase {
  std::string name;
  std::string file;
  std::string result_type;
  std::vector<Want> series;
  int warnings = 0;
  int skipped = 0;
};

TEST(PromQueryResponse, ParsesRealPayloads) {
  const double inf = INFINITY;
  const std::vector<OkCase> cases = {
      {"docs vector, two series",
       "promql_vector_up.json",
       "vector",
       {{"instance", "localhost:9090", 1435781451.781, 1},
        {"instance", "localhost:9100", 1435781451.781, 0}}},
      {"dcgm vector, per-GPU series",
       "promql_vector_dcgm.json",
       "vector",
       {{"pod", "llm-7d9f8b6c5-x2x7q", 1733203200.123, 87},
        {"pod", "llm-7d9f8b6c5-kq4zt", 1733203200.123, 92.5},
        {"pod", "llm-7d9f8b6c5-m8w2n", 1733203199.5, 0}}},
      {"matrix takes each series' newest point",
       "promql_matrix.json",
       "matrix",
       {{"instance", "localhost:9090", 1435781460.781, 1},
        {"instance", "localhost:9091", 1435781460.781, 1}}},
      {"scalar is one unlabelled value", "promql_scalar.json", "scalar", {{"", "", 4, 2}}},
      {"numeric string", "promql_string.json", "string", {{"", "", 1435781451.781, 42}}},
      {"empty vector is zero series", "promql_empty.json", "vector", {}},
      {"NaN and infinities pass through",
       "promql_special_values.json",
       "vector",
       {{"pod", "a", 1733203200, NAN},
        {"pod", "b", 1733203200, inf},
        {"pod", "c", 1733203200, -inf},
        {"pod", "d", 1733203200, 1.5e-7},
        {"pod", "e", 1733203200, -0.25}}},
      {"warnings kept", "promql_warnings.json", "vector", {{"pod", "llm-0", 1733203200.5, 12}}, 1},
      {"captured from Prometheus 2.42",
       "promql_vector_prometheus_2_42.json",
       "vector",
       {{"job", "llm.v2-a", 1796277529.078, 1}, {"job", "prometheus", 1796277529.078, 1}}},
      {"matrix captured from Prometheus 2.42",
       "promql_matrix_prometheus_2_42.json",
       "matrix",
       {{"job", "llm.v2-a", 1796277528.845, 1}, {"job", "prometheus", 1796277528.519, 1}}},
      {"native histogram skipped",
       "promql_native_histogram.json",
       "vector",
       {{"job", "api", 1733203200, 1}},
       0,
       1},
  };
  for (const OkCase& c : cases) {
    SCOPED_TRACE(c.name);
    Result<PromQueryResult> r = ParsePromQueryResponse(Testdata(c.file));
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->result_type, c.result_type);
    EXPECT_EQ(static_cast<int>(r->warnings.size()), c.warnings);
    EXPECT_EQ(r->skipped, c.skipped);
    ASSERT_EQ(r->series.size(), c.series.size());
    for (size_t i = 0; i < c.series.size(); ++i) {
      const Want& w = c.series[i];
      const PromSeries& s = r->series[i];
      if (w.instance_label.empty()) {
        EXPECT_TRUE(s.labels.empty());
      } else {
        ASSERT_NE(s.Label(w.instance_label), nullptr);
        EXPECT_EQ(*s.Label(w.instance_label), w.instance);
      }
      EXPECT_DOUBLE_EQ(s.timestamp_s, w.ts);
      if (std::isnan(w.value)) {
        EXPECT_TRUE(std::isnan(s.value));
      } else {
        EXPECT_EQ(s.value, w.value);
      }
    }
  }
}

TEST(PromQueryResponse, KeepsAllLabels) {
  Result<PromQueryResult> r = ParsePromQueryResponse(Testdata("promql_vector_dcgm.json"));
  ASSERT_TRUE(r.ok());
  const PromSeries& s = r->series.front();
  EXPECT_EQ(s.labels.size(), 13u);
  ASSERT_NE(s.Label("__name__"), nullptr);
  EXPECT_EQ(*s.Label("__name__"), "DCGM_FI_DEV_GPU_UTIL");
  EXPECT_EQ(s.Label("nope"), nullptr);
}

struct ErrCase {
  std::string name;
  std::string body;
  int http_status;
  StatusCode code;
  std::vector<std::string> message_has;
};

TEST(PromQueryResponse, ErrorsHaveKindsAndSayWhy) {
  const std::vector<ErrCase> cases = {
      {"400 bad_data",
       Testdata("promql_error_bad_data.json"),
       400,
       StatusCode::kInvalid,
       {"bad_data", "unclosed left parenthesis", "400"}},
      {"422 execution",
       Testdata("promql_error_execution.json"),
       422,
       StatusCode::kUnavailable,
       {"execution", "many-to-one matching"}},
      {"422 execution, Prometheus 2.42",
       Testdata("promql_error_execution_2_42.json"),
       422,
       StatusCode::kUnavailable,
       {"many-to-many matching not allowed"}},
      {"400 bad escape, Prometheus 2.42",
       Testdata("promql_error_bad_escape_2_42.json"),
       400,
       StatusCode::kInvalid,
       {"unknown escape sequence"}},
      {"503 timeout",
       Testdata("promql_error_timeout.json"),
       503,
       StatusCode::kDeadlineExceeded,
       {"timeout", "query timed out"}},
      {"503 canceled",
       R"({"status":"error","errorType":"canceled","error":"query was canceled"})",
       503,
       StatusCode::kUnavailable,
       {"canceled"}},
      {"404 not_found",
       R"({"status":"error","errorType":"not_found","error":"no such rule"})",
       404,
       StatusCode::kNotFound,
       {"not_found"}},
      {"500 internal",
       R"({"status":"error","errorType":"internal","error":"boom"})",
       500,
       StatusCode::kUnavailable,
       {"internal", "boom"}},
      {"error envelope on 200",
       R"({"status":"error","errorType":"bad_data","error":"x"})",
       200,
       StatusCode::kInvalid,
       {"bad_data"}},
      {"unknown errorType follows HTTP",
       R"({"status":"error","errorType":"weird","error":"x"})",
       429,
       StatusCode::kUnavailable,
       {"weird"}},
      {"proxy HTML 502",
       "<html><body>502 Bad Gateway</body></html>",
       502,
       StatusCode::kUnavailable,
       {"502", "Bad Gateway"}},
      {"401 text", "Unauthorized\n", 401, StatusCode::kPermissionDenied, {"401", "Unauthorized"}},
      {"truncated JSON",
       Testdata("promql_truncated.json"),
       200,
       StatusCode::kInvalid,
       {"invalid JSON", "column"}},
      {"not JSON at all", "not valid json", 200, StatusCode::kInvalid, {"invalid JSON"}},
      {"empty body", "", 200, StatusCode::kInvalid, {"invalid JSON"}},
      {"array top level", "[1,2]", 200, StatusCode::kInvalid, {"not an object"}},
      {"status missing", R"({"data":{}})", 200, StatusCode::kInvalid, {"status"}},
      {"no data", R"({"status":"success"})", 200, StatusCode::kInvalid, {"no data"}},
      {"unknown resultType",
       R"({"status":"success","data":{"resultType":"table","result":[]}})",
       200,
       StatusCode::kInvalid,
       {"table"}},
      {"value not a pair",
       R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1]}]}})",
       200,
       StatusCode::kInvalid,
       {"data.result[0].value"}},
      {"value not numeric",
       R"({"status":"success","data":{"resultType":"vector","result":[{"value":[1,"abc"]}]}})",
       200,
       StatusCode::kInvalid,
       {"non-numeric", "abc"}},
      {"label not a string",
       R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":1},"value":[1,"2"]}]}})",
       200,
       StatusCode::kInvalid,
       {"metric.a"}},
      {"bad timestamp",
       R"({"status":"success","data":{"resultType":"scalar","result":[true,"2"]}})",
       200,
       StatusCode::kInvalid,
       {"timestamp"}},
      {"timestamp out of range",
       R"({"status":"success","data":{"resultType":"scalar","result":[1e300,"2"]}})",
       200,
       StatusCode::kInvalid,
       {"timestamp"}},
      {"matrix values not array",
       R"({"status":"success","data":{"resultType":"matrix","result":[{"values":{}}]}})",
       200,
       StatusCode::kInvalid,
       {"values"}},
      {"string result not a number",
       R"({"status":"success","data":{"resultType":"string","result":[1,"hello"]}})",
       200,
       StatusCode::kInvalid,
       {"hello"}},
      {"success on a 500", Testdata("promql_empty.json"), 500, StatusCode::kUnavailable, {"500"}},
  };
  for (const ErrCase& c : cases) {
    SCOPED_TRACE(c.name);
    Result<PromQueryResult> r = ParsePromQueryResponse(c.body, c.http_status);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), c.code) << r.status().message();
    for (const std::string& part : c.message_has) {
      EXPECT_NE(r.status().message().find(part), std::string::npos)
          << "'" << part << "' not in: " << r.status().message();
    }
  }
}

TEST(PromQueryResponse, BoundsSizeAndNesting) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  Result<PromQueryResult> r = ParsePromQueryResponse(deep);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalid());
  EXPECT_NE(r.status().message().find("nested deeper than 16"), std::string::npos);

  // Brackets inside strings do not count as nesting.
  const std::string bracket_labels =
      R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"le":"[[[[[[[[[[[[[[[[[[[[\"{{{{"},"value":[1,"2"]}]}})";
  EXPECT_TRUE(ParsePromQueryResponse(bracket_labels).ok());

  PromParseLimits small;
  small.max_bytes = 10;
  r = ParsePromQueryResponse(Testdata("promql_empty.json"), 200, small);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("exceeds the limit"), std::string::npos);
}

TEST(PromQueryResponse, ParsesSampleValues) {
  struct Case {
    std::string in;
    bool ok;
    double want;
  };
  const std::vector<Case> cases = {
      {"1", true, 1},
      {"0.5", true, 0.5},
      {"-2", true, -2},
      {"+3", true, 3},
      {"1e+21", true, 1e21},
      {"+Inf", true, INFINITY},
      {"-Inf", true, -INFINITY},
      {"Inf", true, INFINITY},
      {"", false, 0},
      {"+", false, 0},
      {"-", false, 0},
      {"++1", false, 0},
      {"1x", false, 0},
      {"0x10", false, 0},
      {" 1", false, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("'" + c.in + "'");
    double v = 0;
    ASSERT_EQ(ParsePromValue(c.in, v), c.ok);
    if (c.ok) {
      EXPECT_EQ(v, c.want);
    }
  }
  double v = 0;
  ASSERT_TRUE(ParsePromValue("NaN", v));
  EXPECT_TRUE(std::isnan(v));
}

}  // namespace
}  // namespace aiscale::monitor
