// Whether the nodes can run the dlaunch a job calls. The job script names
// this machine's dlaunch by its path, so every node must see that path
// (the batch host runs it as the step guard, each node as its launcher),
// and a dlaunch mounted into a container image needs the image to have its
// libraries. dlaunch cannot look at the nodes from here, so what it can
// only suspect is a warning; a file that is not here is an error.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "submit/job_script.h"
#include "util/elf_needs.h"
#include "util/file_system.h"

namespace dlaunch::submit {

// Why the file at PATH, on BINARY_FS, is likely on this machine only, while
// the job's submission folder is on FOLDER_FS: under /tmp, /var/tmp,
// /dev/shm or /run (every machine has its own), in memory (tmpfs), or on a
// local disk while the folder is on a shared file system (but not under
// /usr, where a site installs what every node has). nullopt when it looks
// shared or cannot be told. Pure.
std::optional<std::string> node_local_reason(const std::string& path,
                                             const std::optional<util::FileSystemType>& binary_fs,
                                             const std::optional<util::FileSystemType>& folder_fs);

// What the image must provide for each mounted binary (its path here and
// its needs): a line each, then what to do without it; "" when every one
// is statically linked. Pure.
std::string image_needs_text(const std::string& image,
                             const std::vector<std::pair<std::string, util::ElfNeeds>>& binaries);

// The warning that REQUEST's dlaunch is likely on this machine only, when
// another machine runs it: the batch host's step guard, or the nodes
// unless they run the image's own dlaunch. FOREGROUND: --srun, whose step
// guard runs here. nullopt when no other machine needs it or it looks
// shared. Reads the file systems (statfs).
std::optional<std::string> node_local_warning(const JobRequest& request, bool foreground);

// What REQUEST's container image must provide to run the binaries mounted
// into it (image_needs_text, from their ELF files); "" without a container
// or with the image's own dlaunch.
std::string container_needs_note(const JobRequest& request);

// Throws InputError before anything is submitted when a binary REQUEST
// mounts into its container image is not a file here (dlaunch-check for
// --gate, or a dlaunch replaced while this one ran).
void check_mounted_binaries(const JobRequest& request);

}  // namespace dlaunch::submit
