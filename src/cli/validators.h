// The kinds of config document aiscale knows, and for each the function that validates it.
//
// Why a table: `aiscale validate` dispatches on `kind`, and a new kind is one line in
// validators.cc next to its validator (docs/architecture.md, practice 6), not a branch in the
// command. A validator records every error in root.errors() and returns an error Status when it
// recorded any.
#pragma once

#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/result.h"

namespace aiscale::cli {

using Validator = Status (*)(const config::ConfigNode& root);

struct KindValidator {
  std::string kind;
  Validator validate;
};

// The kinds `validate` accepts in a header, in the order they are listed in errors.
const std::vector<std::string>& KnownKinds();
// The validators; a known kind without one only has its header checked.
const std::vector<KindValidator>& Validators();
// The validator for `kind`, or nullptr.
Validator FindValidator(const std::string& kind);

}  // namespace aiscale::cli
