#include "report/report_html.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "report/judge.h"

namespace aiscale::report {
namespace {

size_t Count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

// A scaling decision of workload `w` at `t_s`, from `from` to `to`, for `why`.
Decision Scaled(const std::string& w, double t_s, int from, int to, const std::string& why) {
  Decision d;
  d.workload = w;
  d.at = TimePoint{} + Seconds(t_s);
  d.current = from;
  d.ready = from;
  d.recommendation = {to, true, "scale_up", why, {}};
  d.stabilized = to;
  d.constrained = to;
  d.action = Action::kScaled;
  return d;
}

// A run of one InferenceService workload, with a short timeline whose figures scale with `k`
// (so runs differ), and one scaling decision.
RunSummary InferenceRun(const std::string& label, double k, Baseline role = Baseline::kNone) {
  RunSummary r;
  r.label = label;
  r.policy = label;
  r.baseline = role;
  WorkloadSummary w;
  w.name = "svc";
  w.kind = "InferenceService";
  w.gpu_hours = 10 * k;
  w.cost_usd = 25 * k;
  w.rescales = 7;
  ServingFigures s;
  s.requests = 1000;
  s.slo_attainment = 1.0 - 0.008 * k;
  s.latency_p50_s = 1.0;
  s.latency_p99_s = 9.5 * k;
  s.ttft_p50_s = 0.3;
  s.ttft_p99_s = 1.7 * k;
  s.timed_out = 3;
  s.cold_start_s = 240;
  s.slo = {2.0, 20.0, 0.99};
  s.static_peak_replicas = 18;
  w.serving = s;
  OracleFigures o;
  o.gpu_hours = 4;
  o.attainment = 0.995;
  w.oracle = o;
  for (int i = 0; i < 6; ++i) {
    TimelinePoint p;
    p.t_s = 30.0 * i;
    p.desired = static_cast<int>(2 * k) + i;
    p.ready = static_cast<int>(2 * k) + i / 2;
    p.request_rate = 1.5 * i;
    p.latency_p99_s = i == 0 ? 0.0 : 3.0 * k * i;
    p.ttft_p99_s = i == 0 ? 0.0 : 0.4 * k * i;
    w.timeline.push_back(p);
  }
  r.workloads.push_back(w);
  r.decisions = DigestDecisions({Scaled("svc", 60, 3, 5, "load 2.1/s over target")}, 1);
  return r;
}

// A training run: nodes, phases, a failure and a rescale decision.
RunSummary TrainingRun(const std::string& label, Baseline role = Baseline::kNone) {
  RunSummary r;
  r.label = label;
  r.policy = label;
  r.baseline = role;
  WorkloadSummary w;
  w.name = "job";
  w.kind = "TrainingJob";
  w.gpu_hours = 100;
  w.completion_time_s = 4200;
  w.mean_gpu_util = 0.5;
  w.rescales = 1;
  w.max_failure_replacement_s = 300;
  w.training = TrainingFigures{};
  RunEvent failure;
  failure.kind = RunEvent::Kind::kFailure;
  failure.t_s = 1800;
  w.events = {failure};
  for (int i = 0; i < 8; ++i) {
    TimelinePoint p;
    p.t_s = 600.0 * i;
    p.desired = 8;
    p.ready = i == 3 ? 7 : 8;
    p.phase = i % 3;
    p.restarting = i == 4 ? 1 : 0;
    p.samples_per_s = 100.0 * i;
    p.gpu_util = 50;
    w.timeline.push_back(p);
  }
  r.workloads.push_back(w);
  r.decisions = DigestDecisions({Scaled("job", 2400, 8, 7, "eval phase: 7 nodes do as well")}, 1);
  return r;
}

Report Make(const std::string& scenario, std::vector<RunSummary> runs) {
  Report r;
  r.scenario = scenario;
  r.file = "x.yaml";
  r.seed = 1;
  r.duration_limit_s = 3600;
  r.runs = std::move(runs);
  return r;
}

TEST(ReportHtml, InferencePageDrawsEveryRunOnEveryChart) {
  struct Case {
    const char* name;
    std::vector<std::string> policies;
  };
  const std::vector<Case> cases = {
      {"one policy", {"hpa"}},
      {"the usual comparison", {"predictive", "hpa", "kpa", "static-peak"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<RunSummary> runs;
    for (size_t i = 0; i < c.policies.size(); ++i) {
      runs.push_back(InferenceRun(c.policies[i], 1.0 + static_cast<double>(i)));
    }
    const std::string html = ReportHtml(Make("inf", runs));
    // Demand, latency, TTFT: one series per run; replicas overlaid and per run: ready and
    // desired each.
    EXPECT_EQ(Count(html, "class=\"series\""), 7 * c.policies.size());
    for (const auto& p : c.policies) {
      SCOPED_TRACE(p);
      const std::string pol = "data-policy=\"" + p + "\"";
      for (const char* chart : {"demand", "latency", "ttft"}) {
        EXPECT_EQ(Count(html, "data-chart=\"" + std::string(chart) + "\" " + pol), 1u) << chart;
      }
      for (const char* chart : {"replicas", "replicas-run"}) {
        SCOPED_TRACE(chart);
        const std::string at = "data-chart=\"" + std::string(chart) + "\" " + pol;
        EXPECT_EQ(Count(html, at + " data-kind=\"ready\""), 1u);
        EXPECT_EQ(Count(html, at + " data-kind=\"desired\""), 1u);
      }
      // The legend toggles the run; the table has its column; the log can filter on it.
      EXPECT_EQ(Count(html, "data-toggle=\"policy:" + p + "\""), 1u);
      EXPECT_EQ(Count(html, "<th " + pol + ">"), 1u);
      EXPECT_EQ(Count(html, "<option value=\"" + p + "\">"), 1u);
    }
    EXPECT_EQ(Count(html, "data-legend=\"policies\""), 1u);
    // The SLO bound on both latency charts, and only there.
    EXPECT_EQ(Count(html, "data-ref=\"slo\""), 2u);
    EXPECT_EQ(Count(html, "data-chart=\"latency\" data-ref=\"slo\""), 1u);
    EXPECT_EQ(Count(html, "data-chart=\"ttft\" data-ref=\"slo\""), 1u);
    EXPECT_NE(html.find(">SLO 20 s<"), std::string::npos);
    EXPECT_NE(html.find(">SLO 2 s<"), std::string::npos);
    EXPECT_EQ(Count(html, "<th class=\"oracle\" data-policy=\"oracle\">"), 1u);
    // No training section for inference-only runs.
    EXPECT_EQ(html.find("data-chart=\"nodes\""), std::string::npos);
  }
}

TEST(ReportHtml, DesiredIsDrawnOverReadyAndEveryRunOnItsOwnScale) {
  // hpa spikes to 100 replicas; predictive stays near 3. The overlay shares one scale; the
  // per-run charts do not, so predictive's chart tops out near its own values.
  RunSummary spike = InferenceRun("hpa", 1);
  for (auto& p : spike.workloads[0].timeline) p.desired = p.ready = 100;
  const std::string html = ReportHtml(Make("inf", {InferenceRun("predictive", 1), spike}));
  // Desired after ready in each chart, dashed and narrow; ready wide and pale.
  const size_t ready = html.find(
      "data-chart=\"replicas-run\" data-policy=\"predictive\" "
      "data-kind=\"ready\"");
  const size_t desired = html.find(
      "data-chart=\"replicas-run\" data-policy=\"predictive\" "
      "data-kind=\"desired\"");
  ASSERT_NE(ready, std::string::npos);
  ASSERT_NE(desired, std::string::npos);
  EXPECT_LT(ready, desired);
  const std::string ready_path = html.substr(ready, html.find("/>", ready) - ready);
  const std::string desired_path = html.substr(desired, html.find("/>", desired) - desired);
  EXPECT_NE(ready_path.find("stroke-width=\"5\""), std::string::npos) << ready_path;
  EXPECT_NE(ready_path.find("stroke-opacity"), std::string::npos) << ready_path;
  EXPECT_NE(desired_path.find("stroke-dasharray"), std::string::npos) << desired_path;
  // predictive's own chart: its y axis labels stop at a round value near 8, not 100.
  const size_t own = html.rfind("<svg class=\"chart\"", ready);
  const std::string axis = html.substr(own, ready - own);
  EXPECT_EQ(axis.find(">100<"), std::string::npos) << axis.substr(0, 600);
  EXPECT_NE(axis.find(">8<"), std::string::npos) << axis.substr(0, 600);
}

TEST(ReportHtml, ChartsCarryHoverDataAndRescaleReasons) {
  const std::string html = ReportHtml(Make("inf", {InferenceRun("predictive", 1)}));
  // Each series carries its drawn points for the hover read-out, and a label.
  EXPECT_NE(html.find("data-label=\"predictive desired\""), std::string::npos);
  EXPECT_NE(html.find("data-pts=\"0 2 30 3 60 4 90 5 120 6 150 7\""), std::string::npos);
  // Every chart says how to map a pointer to a time.
  EXPECT_EQ(Count(html, "<svg class=\"chart\""), Count(html, "data-t-max=\""));
  // The rescale at 60 s: a marker whose tooltip says why.
  EXPECT_NE(html.find("<title>0:01:00  3 -&gt; 5  [scale_up] load 2.1/s over target</title>"),
            std::string::npos);
}

TEST(ReportHtml, TheTableShowsTheFiguresAndTheOracle) {
  const std::string html =
      ReportHtml(Make("inf", {InferenceRun("predictive", 1), InferenceRun("hpa", 2)}));
  struct Case {
    const char* name;
    const char* text;
  };
  const std::vector<Case> cases = {
      {"GPU-hours, then the oracle's",
       "<td>GPU-hours</td><td>10.0</td><td>20.0</td>"
       "<td class=\"oracle\">4.0</td>"},
      {"ratio to the oracle",
       "<td>GPU-hours / oracle</td><td>2.50</td><td>5.00</td>"
       "<td class=\"oracle\">1.00</td>"},
      {"SLO attainment missed is marked", "<td>0.9920</td><td class=\"bad\">0.9840</td>"},
      {"oracle attainment", "<td class=\"oracle\">0.9950</td>"},
      {"p99 latency", "<td>19.00</td>"},
      {"p99 TTFT", "<td>3.40</td>"},
      {"static-peak size", "static-peak size 18 replicas"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_NE(html.find(c.text), std::string::npos) << c.text;
  }
}

TEST(ReportHtml, TrainingPageShowsWhyNotOnlyWhenStaticWasNotBeaten) {
  struct Case {
    const char* name;
    double gpu_hours;  // the training run's; static's is 100
    bool shown;        // the why_not text is on the page
  };
  const std::vector<Case> cases = {{"did not beat static", 99.5, true}, {"beat static", 70, false}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    RunSummary training = TrainingRun("training");
    training.workloads[0].gpu_hours = c.gpu_hours;
    Report r = Make("train", {training, TrainingRun("static", Baseline::kStatic)});
    Judge(r, Targets{});
    const std::string html = ReportHtml(r);
    EXPECT_EQ(html.find("GPU-hours 0.995x static (not below 0.99x)") != std::string::npos, c.shown);
    EXPECT_EQ(html.find("does not beat static") != std::string::npos, c.shown);
    EXPECT_EQ(html.find("<b>training</b> beats static: GPU-hours 0.700x, completion 1.000x") !=
                  std::string::npos,
              !c.shown);
    // One verdict line: static is never judged against itself.
    EXPECT_EQ(Count(html, "data-verdict=\"vs_static\""), 1u);
    for (const char* p : {"training", "static"}) {
      SCOPED_TRACE(p);
      const std::string pol = "data-policy=\"" + std::string(p) + "\"";
      EXPECT_EQ(Count(html, "data-chart=\"nodes\" " + pol), 2u);  // desired and ready
      EXPECT_EQ(Count(html, "data-chart=\"gpu_util\" " + pol), 1u);
      EXPECT_EQ(Count(html, "data-chart=\"samples\" " + pol), 1u);
    }
    EXPECT_EQ(Count(html, "data-event=\"failure\""), 6u);                   // 3 charts x 2 runs
    EXPECT_EQ(Count(html, "class=\"marker\" data-event=\"rescale\""), 2u);  // nodes, 2 runs
    EXPECT_NE(html.find("eval phase: 7 nodes do as well</title>"), std::string::npos);
    EXPECT_NE(html.find(">training/static</th>"), std::string::npos);
  }
}

TEST(ReportHtml, TheTrainingOraclesFiguresAndPlanAreShown) {
  RunSummary training = TrainingRun("training"), st = TrainingRun("static", Baseline::kStatic);
  for (RunSummary* r : {&training, &st}) {
    OracleFigures o;
    o.gpu_hours = 80;
    o.completion_time_s = 4320;
    o.mean_gpu_util = 0.6;
    o.rescales = 2;
    o.plan = {600, {8, 8, 4, 4, 8}, false};
    r->workloads[0].oracle = o;
  }
  const std::string html = ReportHtml(Make("train", {training, st}));
  EXPECT_NE(html.find("<td>GPU-hours</td><td>100.0</td><td>100.0</td><td class=\"oracle\">"
                      "80.0</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<td>GPU-hours / oracle</td><td>1.25</td><td>1.25</td>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"oracle\">1.20</td>"), std::string::npos);  // 4320 s in h
  EXPECT_EQ(Count(html, "data-kind=\"oracle\""), 2u);  // its plan on each run's nodes chart
}

TEST(ReportHtml, VerdictsSayWhyNot) {
  RunSummary a = InferenceRun("predictive", 1), b = InferenceRun("hpa", 2);
  a.workloads[0].verdict = Verdict{{}, true, "", ""};
  b.workloads[0].verdict = Verdict{{}, false, "GPU-hours 5.00x the oracle (<= 1.15x)", ""};
  const std::string html = ReportHtml(Make("inf", {a, b}));
  EXPECT_NE(html.find("<b>predictive</b> meets every target"), std::string::npos);
  EXPECT_NE(html.find("<b>hpa</b> misses targets: <span class=\"why\">GPU-hours 5.00x the "
                      "oracle (&lt;= 1.15x)</span>"),
            std::string::npos);
}

TEST(ReportHtml, TheDecisionLogListsWhatEachRunDidAndIsSearchable) {
  RunSummary a = InferenceRun("predictive", 1), b = InferenceRun("hpa", 2);
  Decision veto = Scaled("svc", 90, 5, 5, "load fell");
  veto.action = Action::kNone;
  veto.vetoed = true;
  b.decisions = DigestDecisions({veto, Scaled("svc", 120, 5, 4, "load fell")}, 2);
  const std::string html = ReportHtml(Make("inf", {a, b}));
  EXPECT_EQ(Count(html, "<tr data-run=\"predictive\">"), 1u);
  EXPECT_EQ(Count(html, "<tr data-run=\"hpa\">"), 2u);
  EXPECT_NE(html.find("<td>vetoed</td>"), std::string::npos);
  EXPECT_NE(html.find("scale-down vetoed: a required signal had no data"), std::string::npos);
  EXPECT_NE(html.find("<input type=\"search\" class=\"logq\" data-log=\"decisions\""),
            std::string::npos);
  EXPECT_NE(html.find("<table id=\"decisions\">"), std::string::npos);
  // Closed until asked for: a long log laid out at once made a report slow to open.
  EXPECT_NE(html.find("<details class=\"logbox\" data-log=\"decisions\"><summary>show the 3 "
                      "decisions</summary>"),
            std::string::npos);
}

TEST(ReportHtml, SeveralWorkloadsGetTotalsAndASectionEach) {
  RunSummary a = InferenceRun("aiscale", 1), b = InferenceRun("static", 2, Baseline::kStatic);
  for (RunSummary* r : {&a, &b}) {
    WorkloadSummary job = TrainingRun(r->label).workloads[0];
    r->workloads.push_back(job);
  }
  Report r = Make("pool", {a, b});
  Judge(r, Targets{});
  const std::string html = ReportHtml(r);
  EXPECT_EQ(Count(html, "<section class=\"totals\">"), 1u);
  EXPECT_EQ(Count(html, "<section class=\"inference\" data-workload=\"svc\">"), 1u);
  EXPECT_EQ(Count(html, "<section class=\"training\" data-workload=\"job\">"), 1u);
  // Totals: 10 + 100 and 20 + 100 GPU-hours.
  EXPECT_NE(html.find("<td>GPU-hours</td><td>110.0</td><td>120.0</td>"), std::string::npos);
  EXPECT_EQ(Count(html, "data-verdict=\"vs_static\""), 1u);  // in the totals only
}

TEST(ReportHtml, IsSelfContainedAndEscapesNames) {
  struct Case {
    const char* name;
    Report report;
    bool urls_in_names;  // the input itself holds URLs (shown escaped, as text)
  };
  const std::vector<Case> cases = {
      {"inference", Make("inf", {InferenceRun("predictive", 1), InferenceRun("hpa", 2)}), false},
      {"training", Make("train", {TrainingRun("training"), TrainingRun("static")}), false},
      {"mixed", Make("mixed", {InferenceRun("hpa", 1), TrainingRun("static")}), false},
      {"no runs", Make("empty", {}), false},
      // Names from the scenario file are text, never markup.
      {"hostile names",
       Make("<script src=\"https://x/y.js\"></script>", {InferenceRun("<img src=http://x>", 1)}),
       true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string html = ReportHtml(c.report);
    // Exactly one script, inline; nothing that loads anything.
    EXPECT_EQ(Count(html, "<script"), 1u);
    EXPECT_EQ(Count(html, "<script>"), 1u);
    for (const char* banned : {"<link", "<img", "<iframe", "@import", "url(", "fetch(",
                               "XMLHttpRequest", "innerHTML", "eval("}) {
      EXPECT_EQ(html.find(banned), std::string::npos) << banned;
    }
    EXPECT_NE(html.find("Content-Security-Policy\" content=\"default-src 'none'"),
              std::string::npos);
    if (!c.urls_in_names) {
      for (const char* banned : {"http://", "https://", " src=", " href="}) {
        EXPECT_EQ(html.find(banned), std::string::npos) << banned;
      }
    } else {
      EXPECT_NE(html.find("&lt;img src=http://x&gt;"), std::string::npos);
      EXPECT_NE(html.find("data-toggle=\"policy:&lt;img src=http://x&gt;\""), std::string::npos);
    }
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_NE(html.find("<meta charset=\"utf-8\">"), std::string::npos);
    EXPECT_NE(html.find("</html>"), std::string::npos);
  }
}

}  // namespace
}  // namespace aiscale::report

namespace aiscale::report {
namespace {

TEST(ReportHtml, ASweepDrawsEachPolicysFrontierAndSaysWhoDominates) {
  Report r = Make("sweep", {InferenceRun("slo x1", 1)});
  Sweep s;
  s.families = {{"slo",
                 "slo",
                 "headroom.prior",
                 {{"slo x1", 0, 10, 0.995, false}, {"slo x2", 1, 12, 0.999, false}}},
                {"<b>hpa</b>",
                 "hpa",
                 "target",
                 {{"hpa x1", 1, 14, 0.99, false}, {"hpa x2", 2, 9, 0.6, false}}}};
  JudgeSweep(s);
  s.target = 0.99;
  r.sweep = s;
  const std::string html = ReportHtml(r);
  EXPECT_EQ(Count(html, "data-chart=\"frontier\""), 2u);
  EXPECT_EQ(Count(html, "<circle class=\"dot\""), 4u);
  EXPECT_NE(
      html.find("slo does not dominate &lt;b&gt;hpa&lt;/b&gt; (nothing of it matches hpa x2)"),
      std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;hpa&lt;/b&gt; does not dominate slo"), std::string::npos);
  EXPECT_EQ(html.find("<b>hpa"), std::string::npos);
  EXPECT_NE(html.find("slo: the cheapest run that attains 0.9900 is slo x1 (10.0 GPU-hours)"),
            std::string::npos);
  const size_t at = html.find("<section class=\"sweep\">");
  ASSERT_NE(at, std::string::npos);
  const std::string section = html.substr(at, html.find("</section>", at) - at);
  EXPECT_EQ(Count(section, "<tr data-run="), 4u);
  // Without a sweep there is no such section.
  r.sweep.reset();
  EXPECT_EQ(ReportHtml(r).find("Cost/SLO frontiers"), std::string::npos);
}

}  // namespace
}  // namespace aiscale::report
