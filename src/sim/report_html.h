// ReportHtml: report.html, one self-contained page drawn from report.json's data: tables and
// static inline SVG charts (sim/svg_chart.h), no script, no stylesheet or font fetched, no
// network reference of any kind, so it opens from disk anywhere (and with scripts disabled).
//
// Inference runs (run entries of kind InferenceService): one table row per policy (GPU-hours,
// ratio to the oracle, cost, SLO attainment, p50/p99 latency and TTFT, timed out, dropped,
// scale events) plus the oracle's row; then charts with every policy overlaid on one time axis,
// one colour per policy (the legend names them): demand (request/s arriving), replicas (ready
// solid, desired dashed), p99 latency and p99 TTFT with the SLO bound as a dotted line.
// Training and other runs: the summary table (one column per run, ratios against static), and
// per run side by side: nodes desired vs ready, GPU utilization, samples/s, with phases shaded
// and failures and rescales marked.
// Both: one verdict line per run that report.json judged (vs_static; vs_targets), with the
// why_not text when the run did not meet the bar.
//
// Every series is a <path class="series" data-chart="C" data-policy="P" ...> and every SLO
// line a <line class="ref" data-ref="slo" ...>, so tests (and people) can find them.
// Pure: a function of `report` only.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace aiscale::sim {

// `report` is ReportJson()'s output (sim/report.h); missing fields are shown as "-".
std::string ReportHtml(const nlohmann::json& report);

}  // namespace aiscale::sim
