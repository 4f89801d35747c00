#include "cli/api_token.h"

#include <fstream>
#include <sstream>

namespace aiscale::cli {
namespace {

constexpr size_t kMaxTokenFile = 4096;
constexpr size_t kMinToken = 16, kMaxToken = 512;

}  // namespace

Result<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Invalid("unable to read token file " + path);
  std::string text(kMaxTokenFile + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxTokenFile) {
    return Status::Invalid("token file " + path + " is larger than 4 KiB: not a token");
  }
  const size_t b = text.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return Status::Invalid("token file " + path + " is empty");
  const size_t e = text.find_last_not_of(" \t\r\n");
  return text.substr(b, e - b + 1);
}

Status CheckToken(const std::string& token) {
  if (token.empty()) return Status::Ok();
  if (token.size() < kMinToken || token.size() > kMaxToken) {
    return Status::Invalid("the token must be 16 to 512 characters long (it has " +
                           std::to_string(token.size()) + ")");
  }
  for (char c : token) {
    if (c <= ' ' || c > '~') {
      return Status::Invalid("the token must be printable ASCII without spaces");
    }
  }
  return Status::Ok();
}

}  // namespace aiscale::cli
