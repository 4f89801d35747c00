#include "sim/traces/alibaba_genai_trace.h"

#include "sim/traces/csv_fields.h"
#include "sim/traces/line_trace_stream.h"

namespace aiscale::sim::traces {
namespace {

constexpr const char* kCreated = "gmt_create";
constexpr const char* kPrompt = "prompt_length";
constexpr const char* kImages = "num_images_per_prompt";
constexpr const char* kSteps = "num_inference_steps";
constexpr uint32_t kDefaultSteps = 30;

class AlibabaStream final : public LineTraceStream {
 public:
  explicit AlibabaStream(std::string path)
      : LineTraceStream(std::move(path), Format::kCsv, true, kCreated) {}

 protected:
  Status ParseHeader(std::string_view line, const std::string& where) override {
    ASSIGN_OR_RETURN(cols_, FindColumns(line, {kCreated, kPrompt, kImages, kSteps}, where));
    return Status::Ok();
  }
  Status ParseRow(std::string_view line, const std::string& where, TraceRequest& req) override {
    RETURN_IF_ERROR(SplitCsv(line, fields_, where));
    const char* names[] = {kCreated, kPrompt, kImages, kSteps};
    for (size_t i = 0; i < 4; ++i) {
      if (cols_[i] >= fields_.size()) return FieldError(where, names[i], "missing value");
    }
    ASSIGN_OR_RETURN(req.arrival_ns, ParseDateTimeNs(fields_[cols_[0]], kCreated, where));
    auto optional_count = [&](size_t col, const char* name, uint32_t fallback) -> Result<uint32_t> {
      if (fields_[col].empty()) return fallback;
      return ParseCount(fields_[col], name, where);
    };
    ASSIGN_OR_RETURN(req.input_tokens, optional_count(cols_[1], kPrompt, 0));
    ASSIGN_OR_RETURN(const uint32_t images, optional_count(cols_[2], kImages, 1));
    ASSIGN_OR_RETURN(const uint32_t steps, optional_count(cols_[3], kSteps, kDefaultSteps));
    const uint64_t work =
        static_cast<uint64_t>(std::max<uint32_t>(images, 1)) * std::max<uint32_t>(steps, 1);
    if (work > 4'000'000'000ULL) return FieldError(where, kSteps, "images x steps too large");
    req.output_tokens = static_cast<uint32_t>(work);
    return Status::Ok();
  }

 private:
  std::vector<size_t> cols_;
  std::vector<std::string> fields_;
};

class AlibabaSource final : public RequestSource {
 public:
  explicit AlibabaSource(std::string path) : path_(std::move(path)) {}
  Result<std::unique_ptr<RequestStream>> Open() const override {
    return std::unique_ptr<RequestStream>(std::make_unique<AlibabaStream>(path_));
  }
  std::string Describe() const override { return "alibaba_genai_v2026 " + path_; }

 private:
  std::string path_;
};

}  // namespace

std::unique_ptr<RequestSource> AlibabaGenAiTrace(std::string path) {
  return std::make_unique<AlibabaSource>(std::move(path));
}

}  // namespace aiscale::sim::traces
