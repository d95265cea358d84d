// Parsing JSON that comes from outside dlaunch (a file anyone could have
// edited, a peer's message) with a bound on its nesting.
//
// nlohmann::json parses any depth (its parser keeps its own stack), but
// the document it builds is then copied, compared and dumped by functions
// that recurse once per level: a file of a million '[' overflows the stack
// (SIGSEGV) at the first copy. Nothing dlaunch reads nests more than a few
// levels, so every reader of outside JSON parses through here, which
// refuses a document nested deeper than kMaxJsonDepth before any of it is
// used.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>
#include <optional>

#include "util/outside_file.h"

namespace dlaunch::util {

// Far above anything dlaunch writes or reads (a stack report: 5 levels),
// far below what overflows a stack (thousands).
inline constexpr int kMaxJsonDepth = 64;

// TEXT as JSON. A discarded value (is_discarded()) when it is not JSON or
// nests objects and arrays deeper than MAX_DEPTH, as nlohmann's
// parse(text, nullptr, false) gives for the first; WHY, when given, gets
// the reason in words then ("" on success).
nlohmann::json parse_json_bounded(std::string_view text, std::string* why = nullptr, int max_depth = kMaxJsonDepth);

// The JSON document in the file at PATH: read as read_outside_file(PATH,
// EXPECT) reads (a regular file, at most EXPECT.max_bytes, never
// blocking), parsed as parse_json_bounded parses. nullopt when there is no
// file. Throws as read_outside_file does, and InputError naming PATH when
// it holds no JSON or nests too deep.
std::optional<nlohmann::json> read_json_file(const std::string& path, const OutsideFile& expect);

// OBJECT's member KEY when it is a string; "" when it is missing or of
// another type (a file written by another version, or edited by hand).
std::string string_member(const nlohmann::json& object, const char* key);

}  // namespace dlaunch::util
