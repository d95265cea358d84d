// Opening the files dlaunch writes so that nothing planted at their names
// can send the bytes elsewhere: never through a symbolic link, never into a
// FIFO, a device, another user's file or a hard link of some other file,
// and temporary names nobody can guess ahead (a planted link at a
// predictable "X.<pid>.tmp" made a root run overwrite a file it owned).
//
// Every open here uses O_NOFOLLOW and O_CLOEXEC; a file dlaunch makes is
// created with O_EXCL, so the name is a new file or the open fails.
#pragma once

#include <string>
#include <sys/types.h>

#include "util/fd.h"

namespace dlaunch::util {

// A file opened for writing, or why not.
struct OpenedFile {
  Fd file;
  int error = 0;        // errno when FILE is not valid
  std::string refusal;  // set when what is at the path is no file dlaunch may write: why ("it is a symbolic link ...")

  // The refusal, else strerror(error): one phrase to follow "cannot write X: ".
  std::string reason() const;
};

// Creates PATH, which must not exist (not even as a dangling link), with
// MODE (the umask applies) and FLAGS added to O_WRONLY (O_NONBLOCK). Never
// fails by throwing: see OpenedFile.
OpenedFile create_new_file(const std::string& path, mode_t mode, int flags = 0);

// Opens PATH to write it from its start: a new file, or a regular file of
// this user with no other name (an earlier run's log in a reused folder),
// which is emptied. Anything else there (a symbolic link, a FIFO, a device,
// a folder, another user's file, a hard link) is refused and left as it
// is. Never blocks, even on a FIFO; FLAGS as for create_new_file.
OpenedFile open_file_to_rewrite(const std::string& path, mode_t mode, int flags = 0);

// create_new_file(PATH, MODE) and writes CONTENT. Throws SystemError naming
// PATH and why; a file it created but could not fill is removed.
void write_new_file(const std::string& path, const std::string& content, mode_t mode = 0644);

// A new file beside PATH ("PATH.<16 random hex digits>.tmp"), made with
// O_EXCL: a name no other writer, nor anyone planting links, can know
// ahead, so the file is ours however crowded the folder. Throws
// SystemError naming PATH.
struct TemporaryFile {
  Fd file;
  std::string path;
};
TemporaryFile create_temporary_beside(const std::string& path, mode_t mode = 0644);

}  // namespace dlaunch::util
