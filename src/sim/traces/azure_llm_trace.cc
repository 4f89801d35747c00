#include "sim/traces/azure_llm_trace.h"

#include "sim/traces/csv_fields.h"
#include "sim/traces/line_trace_stream.h"

namespace aiscale::sim::traces {
namespace {

constexpr const char* kTime = "TIMESTAMP";
constexpr const char* kContext = "ContextTokens";
constexpr const char* kGenerated = "GeneratedTokens";

class AzureStream final : public LineTraceStream {
 public:
  explicit AzureStream(std::string path)
      : LineTraceStream(std::move(path), Format::kCsv, true, kTime) {}

 protected:
  Status ParseHeader(std::string_view line, const std::string& where) override {
    ASSIGN_OR_RETURN(cols_, FindColumns(line, {kTime, kContext, kGenerated}, where));
    return Status::Ok();
  }
  Status ParseRow(std::string_view line, const std::string& where, TraceRequest& req) override {
    RETURN_IF_ERROR(SplitCsv(line, fields_, where));
    const char* names[] = {kTime, kContext, kGenerated};
    for (size_t i = 0; i < 3; ++i) {
      if (cols_[i] >= fields_.size()) return FieldError(where, names[i], "missing value");
    }
    ASSIGN_OR_RETURN(req.arrival_ns, ParseDateTimeNs(fields_[cols_[0]], kTime, where));
    ASSIGN_OR_RETURN(req.input_tokens, ParseCount(fields_[cols_[1]], kContext, where));
    ASSIGN_OR_RETURN(req.output_tokens, ParseCount(fields_[cols_[2]], kGenerated, where));
    // A request always yields at least one token (the first one ends its prefill).
    if (req.output_tokens == 0) req.output_tokens = 1;
    return Status::Ok();
  }

 private:
  std::vector<size_t> cols_;
  std::vector<std::string> fields_;
};

class AzureSource final : public RequestSource {
 public:
  explicit AzureSource(std::string path) : path_(std::move(path)) {}
  Result<std::unique_ptr<RequestStream>> Open() const override {
    return std::unique_ptr<RequestStream>(std::make_unique<AzureStream>(path_));
  }
  std::string Describe() const override { return "azure_llm_2023 " + path_; }

 private:
  std::string path_;
};

}  // namespace

std::unique_ptr<RequestSource> AzureLlmTrace(std::string path) {
  return std::make_unique<AzureSource>(std::move(path));
}

}  // namespace aiscale::sim::traces
