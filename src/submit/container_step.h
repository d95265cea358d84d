// How a job step runs in a container image with pyxis (srun
// --container-image=IMAGE): which dlaunch runs in the image, and the one
// --container-mounts that brings it and the submission folder in.
//
// The job script runs on the batch host, outside the image, and so does its
// step guard (`dlaunch __run-step`, this machine's dlaunch). The step's
// `dlaunch run` (or `dlaunch exec`) runs inside the image, where this
// machine's path to dlaunch rarely exists: it is the image's own dlaunch
// when --container-dlaunch names one, else this machine's binary mounted
// read-only at kContainerDlaunch. The launchers write the job's logs and
// verdict into the submission folder, which the step guard reads outside:
// it is mounted at its own path. Pure: settings in, srun words out.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "submit/submit_settings.h"

namespace dlaunch::submit {

// Where this machine's dlaunch (and, for --gate, dlaunch-check beside it,
// which dlaunch runs from its own folder) appear in the image.
inline constexpr const char* kContainerDlaunch = "/opt/dlaunch/bin/dlaunch";
inline constexpr const char* kContainerDlaunchCheck = "/opt/dlaunch/bin/dlaunch-check";

struct ContainerStep {
  std::string image;         // pyxis's --container-image value
  std::string image_source;  // where it was given: "--container-image", "srun-arg (from --srun-arg)"
  std::string dlaunch;       // the dlaunch the step runs in the image
  // This machine's files mounted read-only into the image (host path,
  // path in the image): dlaunch unless --container-dlaunch names the
  // image's own, and dlaunch-check with --gate. Empty: the image's own.
  std::vector<std::pair<std::string, std::string>> mounted_binaries;
  // The --srun-args without their --container-image and --container-mounts,
  // then one of each: the user's mounts first, then the submission folder
  // and the binaries. One option holds every mount, so nothing depends on
  // how pyxis treats a second one.
  std::vector<std::string> srun_args;
};

// The container step SETTINGS ask for: --container-image, or an
// --container-image among SRUN_ARGS given the old way (--srun-arg). nullopt
// without either. HOST_DLAUNCH is this machine's dlaunch, SUBMISSION_DIR the
// job's folder; GATE: the step runs dlaunch-check too. Throws InputError,
// naming the setting and its source, for: two different images; an empty
// image or one without its value; --container-dlaunch without an image or
// not an absolute path; an --sbatch-arg=--container-image (it would run the
// job script itself in the image, where neither the step guard nor srun
// is); a mount of the user's onto a path dlaunch mounts its binary at; a
// path dlaunch mounts that pyxis cannot take (',' or ':' in it).
std::optional<ContainerStep> container_step(const SubmitSettings& settings, const std::string& host_dlaunch,
                                            const std::string& submission_dir, bool gate);

// The lines of the job script that say where the step runs and which
// dlaunch runs there ("# ..."), for CONTAINER.
std::string container_comment(const ContainerStep& container);

}  // namespace dlaunch::submit
