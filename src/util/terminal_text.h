// What a terminal makes of a line's bytes, for the relays that show a line
// before its end (process/stream_relay.h on the launcher's console,
// cli/line_printer.h under `dlaunch logs --follow`): both must draw a
// progress bar alike.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace dlaunch::util {

// What a terminal ends up showing of LINE (no '\n'): its text after the
// last '\r', a trailing '\r' (a CRLF line end) aside.
std::string_view visible_of(std::string_view line);

// Columns TEXT takes, near enough: UTF-8 characters (a bar's blocks are 3
// bytes, 1 column each). Wide characters and escapes are not measured.
std::size_t columns_of(std::string_view text);

// What takes a terminal from SHOWN to VISIBLE, both after PREFIX, while the
// line is still open (the cursor ends it): the new text when the line grew,
// else '\r', the prefix and VISIBLE, with spaces over what is left of a
// longer SHOWN. An empty SHOWN is redrawn, never continued.
std::string update_of_open_line(std::string_view prefix, std::string_view shown, std::string_view visible);

}  // namespace dlaunch::util
