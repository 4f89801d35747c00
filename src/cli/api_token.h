// The steering endpoints' bearer token: read from a file (a Kubernetes Secret mount, a file
// only its owner reads) and checked for shape. Neither function ever puts the token's value in
// a message, so an error can be logged as it is.
#pragma once

#include <string>

#include "core/result.h"

namespace aiscale::cli {

// The file's contents without surrounding whitespace. kInvalid naming the file (not its
// contents) when it cannot be read, is larger than 4 KiB, or is empty.
Result<std::string> ReadTokenFile(const std::string& path);
// ok for "" (steering off) and for 16..512 printable ASCII characters without spaces;
// kInvalid saying which rule is broken otherwise.
Status CheckToken(const std::string& token);

}  // namespace aiscale::cli
