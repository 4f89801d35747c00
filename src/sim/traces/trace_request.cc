#include "sim/traces/trace_request.h"

#include <algorithm>

namespace aiscale::sim::traces {
namespace {

class VectorStream final : public RequestStream {
 public:
  explicit VectorStream(std::shared_ptr<const std::vector<TraceRequest>> v) : v_(std::move(v)) {}
  Status Next(std::vector<TraceRequest>& out, size_t max) override {
    const size_t n = std::min(max, v_->size() - pos_);
    out.insert(out.end(), v_->begin() + static_cast<long>(pos_),
               v_->begin() + static_cast<long>(pos_ + n));
    pos_ += n;
    return Status::Ok();
  }

 private:
  std::shared_ptr<const std::vector<TraceRequest>> v_;
  size_t pos_ = 0;
};

class VectorSourceImpl final : public RequestSource {
 public:
  VectorSourceImpl(std::vector<TraceRequest> v, std::string d)
      : v_(std::make_shared<const std::vector<TraceRequest>>(std::move(v))), d_(std::move(d)) {}
  Result<std::unique_ptr<RequestStream>> Open() const override {
    return std::unique_ptr<RequestStream>(std::make_unique<VectorStream>(v_));
  }
  std::string Describe() const override { return d_; }

 private:
  std::shared_ptr<const std::vector<TraceRequest>> v_;
  std::string d_;
};

}  // namespace

std::unique_ptr<RequestSource> VectorSource(std::vector<TraceRequest> requests,
                                            std::string description) {
  return std::make_unique<VectorSourceImpl>(std::move(requests), std::move(description));
}

Result<std::vector<TraceRequest>> ReadAll(RequestStream& s) {
  std::vector<TraceRequest> all;
  while (true) {
    const size_t before = all.size();
    RETURN_IF_ERROR(s.Next(all, 1 << 14));
    if (all.size() == before) return all;
  }
}

}  // namespace aiscale::sim::traces
