// The real-trace inference examples the inference benches run, and their common main: each
// example whose file name has the first argument's word (all of them without one), its exit
// codes or'ed together.
#pragma once

#include <string>
#include <vector>

namespace aiscale::bench {

inline const std::vector<std::string>& InferenceExamples() {
  static const std::vector<std::string> files = {
      "examples/inference-azure-code.yaml", "examples/inference-azure-conv.yaml",
      "examples/inference-mooncake.yaml", "examples/inference-alibaba-genai.yaml"};
  return files;
}

template <typename Fn>
int ForEachInferenceExample(int argc, char** argv, Fn run) {
  int rc = 0;
  for (const std::string& f : InferenceExamples()) {
    if (argc > 1 && std::string(argv[1]) != "all" && f.find(argv[1]) == std::string::npos) {
      continue;
    }
    rc |= run(f);
  }
  return rc;
}

}  // namespace aiscale::bench
