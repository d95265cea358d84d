// Writing a small file that a reader polls: it sees the old content or the
// new, never a truncated one.
#pragma once

#include <string>

namespace dlaunch::util {

// Writes CONTENT to a temporary file beside PATH and renames it onto PATH.
// The temporary's name is random and it is created with O_EXCL|O_NOFOLLOW
// (util/safe_file.h), and a rename replaces a link planted at PATH instead
// of writing through it, so nothing planted in the folder redirects the
// bytes. Throws SystemError naming PATH when either step fails; the
// temporary is removed then.
void write_file_atomically(const std::string& path, const std::string& content);

// The same, unless PATH exists already: then it is left as it is and
// false returned. Atomic against another writer too (a hard link of the
// written file, which fails when PATH exists, also over NFS), so of two
// writers racing, exactly one wins. Throws SystemError as above.
bool write_file_if_absent(const std::string& path, const std::string& content);

}  // namespace dlaunch::util
