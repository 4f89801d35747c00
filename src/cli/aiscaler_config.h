// AiScalerWatchConfig: the `aiscalers:` map of a ControllerConfig, which turns on workloads
// from AIScaler objects (aiscalers.aiscale.dev/v1alpha1) watched on Kubernetes, beside or
// instead of the file's own workloads.
//
//   aiscalers:
//     namespaces: [serving, training]  # absent or empty: every namespace
//     auth: {in_cluster: true}          # as a kubernetes target's auth
//     timeout: 10s                      # each API call (list page, status write, Event)
//     status: {metrics_interval: 60s, qps: 20}
//
// Status writes: a change of replicas, conditions or observed generation is written at the
// next tick; a change of signal values alone at most once per metrics_interval per object;
// all writes together at most qps per second. Parsed once, errors at their field paths.
#pragma once

#include <string>
#include <vector>

#include "act/kubernetes_target.h"
#include "core/config/config_node.h"
#include "core/time.h"

namespace aiscale::cli {

struct AiScalerWatchConfig {
  bool enabled = false;  // true when the map is present, unless it says enabled: false
  std::vector<std::string> namespaces;  // empty: all namespaces (a cluster-wide watch)
  act::KubeAuthConfig auth;
  Duration call_timeout = Seconds(10);
  Duration metrics_interval = Seconds(60);
  double status_qps = 20;

  static AiScalerWatchConfig Parse(const config::ConfigNode& node);
};

}  // namespace aiscale::cli
