#include "core/strict_json.h"

#include <set>
#include <stdexcept>
#include <vector>

namespace aiscale {
namespace {

using nlohmann::json;

// Thrown from the parse callback only; caught in ParseStrictJson.
struct Rejected : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Tracks where the parser is (a path of keys and indexes) from the callback's events.
class PathTracker {
 public:
  explicit PathTracker(size_t max_depth) : max_depth_(max_depth) {}

  bool Event(json::parse_event_t event, const json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (stack_.size() >= max_depth_) {
          throw Rejected("nested deeper than " + std::to_string(max_depth_) + " levels at " +
                         Path());
        }
        stack_.push_back(Level{event == json::parse_event_t::array_start, 0, "", {}});
        break;
      case json::parse_event_t::key: {
        Level& top = stack_.back();
        const std::string key = parsed.get<std::string>();
        if (!top.keys.insert(key).second) {
          throw Rejected("duplicate key '" + key + "' in the object at " + Path());
        }
        top.key = key;
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        stack_.pop_back();
        ElementDone();
        break;
      case json::parse_event_t::value:
        ElementDone();
        break;
    }
    return true;
  }

 private:
  struct Level {
    bool array;
    size_t index;     // of the element being read, in an array
    std::string key;  // being read, in an object
    std::set<std::string> keys;
  };

  void ElementDone() {
    if (!stack_.empty() && stack_.back().array) ++stack_.back().index;
  }

  // The path of the container being read (its own key or index comes from its parent).
  std::string Path() const {
    std::string p;
    for (size_t i = 0; i + 1 < stack_.size(); ++i) {
      const Level& l = stack_[i];
      if (l.array) {
        p += "[" + std::to_string(l.index) + "]";
      } else {
        p += (p.empty() ? "" : ".") + l.key;
      }
    }
    return p.empty() ? "top level" : p;
  }

  size_t max_depth_;
  std::vector<Level> stack_;
};

}  // namespace

Result<json> ParseStrictJson(std::string_view text, size_t max_depth) {
  PathTracker tracker(max_depth);
  try {
    return json::parse(text.begin(), text.end(),
                       [&tracker](int, json::parse_event_t event, json& parsed) {
                         return tracker.Event(event, parsed);
                       });
  } catch (const Rejected& e) {
    return Status::Invalid(e.what());
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number overflow
    return Status::Invalid(std::string("not valid JSON: ") + e.what());
  }
}

}  // namespace aiscale
