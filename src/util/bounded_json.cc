#include "util/bounded_json.h"

#include <fmt/format.h>

#include "util/error.h"

namespace dlaunch::util {
namespace {

// Thrown from the parser's callback to stop it at once: nlohmann 3.11.2
// (Debian 12) has no depth option, but its callback is told each object's
// and array's depth as it opens. Stopping there, rather than returning
// false (which only discards the value and parses on, keeping a pointer per
// level), leaves at most MAX_DEPTH levels built, whatever the input.
struct TooDeep {};

}  // namespace

nlohmann::json parse_json_bounded(std::string_view text, std::string* why, int max_depth) {
  if (why != nullptr) why->clear();
  auto bound = [max_depth](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    bool opens = event == nlohmann::json::parse_event_t::object_start ||
                 event == nlohmann::json::parse_event_t::array_start;
    if (opens && depth >= max_depth) throw TooDeep{};
    return true;
  };
  try {
    return nlohmann::json::parse(text, bound);
  } catch (const TooDeep&) {
    if (why != nullptr) *why = fmt::format("nested deeper than {} levels", max_depth);
  } catch (const nlohmann::json::exception& error) {
    if (why != nullptr) *why = error.what();
  }
  return nlohmann::json(nlohmann::json::value_t::discarded);
}

std::optional<nlohmann::json> read_json_file(const std::string& path, const OutsideFile& expect) {
  auto text = read_outside_file(path, expect);
  if (!text) return std::nullopt;
  std::string why;
  nlohmann::json document = parse_json_bounded(*text, &why);
  if (document.is_discarded())
    throw InputError(fmt::format("{} is not valid JSON ({}); was it edited by hand or cut short by a full disk?",
                                 path, why));
  return document;
}

std::string string_member(const nlohmann::json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : "";
}

}  // namespace dlaunch::util
