// A job step in a pyxis container: which dlaunch runs in the image, the one
// --container-mounts that brings it and the submission folder, and the
// refusals of what cannot work.
#include "submit/container_step.h"

#include <algorithm>
#include <gtest/gtest.h>

#include "flag_settings.h"
#include "submit/job_script.h"
#include "util/shell_words.h"

namespace dlaunch::submit {
namespace {

using test_support::error_of;
using test_support::request_for;
using test_support::with;
using Args = std::vector<std::string>;

// flag_settings.h's request: this machine's dlaunch is /opt/dlaunch, the folder /out/x.
constexpr const char* kOurMounts = "/out/x:/out/x,/opt/dlaunch:/opt/dlaunch/bin/dlaunch:ro";

std::optional<ContainerStep> step_of(const SubmitSettings& settings, bool gate = false) {
  return container_step(settings, "/opt/dlaunch", "/out/x", gate);
}

std::size_t count_starting(const Args& words, const std::string& prefix) {
  return static_cast<std::size_t>(
      std::count_if(words.begin(), words.end(), [&](const std::string& word) { return word.starts_with(prefix); }));
}

TEST(ContainerStep, NoImageNoContainer) {
  EXPECT_FALSE(step_of(with({{"srun-arg", Args{"--export=ALL"}}})).has_value());
}

TEST(ContainerStep, MountsThisMachinesDlaunchReadOnlyAndTheFolder) {
  auto step = step_of(with({{"container-image", std::string("/images/pt.sqsh")}}));
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(step->image, "/images/pt.sqsh");
  EXPECT_EQ(step->dlaunch, kContainerDlaunch);
  EXPECT_EQ(step->srun_args,
            (Args{"--container-image=/images/pt.sqsh", std::string("--container-mounts=") + kOurMounts}));
}

TEST(ContainerStep, ReadsTheImageGivenAsAnSrunArgBothWays) {
  auto joined = step_of(with({{"srun-arg", Args{"--export=ALL", "--container-image=img:1"}}}));
  ASSERT_TRUE(joined.has_value());
  EXPECT_EQ(joined->image, "img:1");
  EXPECT_EQ(joined->image_source, "srun-arg (from --srun-arg)");
  EXPECT_EQ(joined->srun_args.front(), "--export=ALL");
  EXPECT_EQ(count_starting(joined->srun_args, "--container-image"), 1U);
  auto split = step_of(with({{"srun-arg", Args{"--container-image", "img:1"}}}));
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->srun_args, (Args{"--container-image=img:1", std::string("--container-mounts=") + kOurMounts}));
  EXPECT_NE(error_of(with({{"srun-arg", Args{"--container-image"}}})).find("has no value after it"),
            std::string::npos);
}

TEST(ContainerStep, MergesTheUsersMountsIntoOneOption) {
  auto step = step_of(with({{"container-image", std::string("img")},
                            {"srun-arg", Args{"--container-mounts=/data:/data", "--container-mounts",
                                              "/scratch:/scratch:ro,/home/me"}}}));
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(count_starting(step->srun_args, "--container-mounts"), 1U);
  EXPECT_EQ(step->srun_args.back(),
            std::string("--container-mounts=/data:/data,/scratch:/scratch:ro,/home/me,") + kOurMounts);
}

TEST(ContainerStep, TheUsersMountOfTheFolderOrOfThisDlaunchIsNotRepeated) {
  auto step = step_of(with({{"container-image", std::string("img")},
                            {"srun-arg", Args{"--container-mounts=/out/x/,/opt/dlaunch:/opt/dlaunch/bin/dlaunch"}}}));
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(step->srun_args.back(), "--container-mounts=/out/x/,/opt/dlaunch:/opt/dlaunch/bin/dlaunch");
}

TEST(ContainerStep, RefusesAMountOfAnotherFileWhereDlaunchGoes) {
  const Args mount{"--container-mounts=/mine/dlaunch:/opt/dlaunch/bin/dlaunch/"};
  std::string error = error_of(with({{"container-image", std::string("img")}, {"srun-arg", mount}}));
  EXPECT_NE(error.find("mounts '/mine/dlaunch' onto /opt/dlaunch/bin/dlaunch, where dlaunch mounts this "
                       "machine's dlaunch"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("--container-dlaunch PATH"), std::string::npos) << error;
}

TEST(ContainerStep, TheImagesOwnDlaunchMountsNoBinary) {
  auto step = step_of(with({{"container-image", std::string("img")},
                            {"container-dlaunch", std::string("/usr/local/bin/dlaunch")}}),
                      true);
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(step->dlaunch, "/usr/local/bin/dlaunch");
  EXPECT_TRUE(step->mounted_binaries.empty());
  EXPECT_EQ(step->srun_args.back(), "--container-mounts=/out/x:/out/x");
  EXPECT_NE(error_of(with({{"container-image", std::string("img")}, {"container-dlaunch", std::string("dlaunch")}}))
                .find("must be an absolute path in the image"),
            std::string::npos);
  EXPECT_NE(error_of(with({{"container-dlaunch", std::string("/usr/bin/dlaunch")}})).find("needs a container image"),
            std::string::npos);
}

TEST(ContainerStep, TheGateMountsDlaunchCheckBesideIt) {
  auto step = step_of(with({{"container-image", std::string("img")}}), true);
  ASSERT_TRUE(step.has_value());
  ASSERT_EQ(step->mounted_binaries.size(), 2U);
  EXPECT_EQ(step->mounted_binaries[1].first, "/opt/dlaunch-check");  // beside /opt/dlaunch
  EXPECT_EQ(step->mounted_binaries[1].second, kContainerDlaunchCheck);
  EXPECT_NE(step->srun_args.back().find(",/opt/dlaunch-check:/opt/dlaunch/bin/dlaunch-check:ro"), std::string::npos);
}

TEST(ContainerStep, RefusesTwoImagesAndAnImageForTheBatchScript) {
  EXPECT_NE(error_of(with({{"container-image", std::string("a")}, {"srun-arg", Args{"--container-image=b"}}}))
                .find("name different images"),
            std::string::npos);
  EXPECT_NE(error_of(with({{"srun-arg", Args{"--container-image=a", "--container-image=b"}}}))
                .find("names two container images, 'a' and 'b'"),
            std::string::npos);
  // The same image twice is one.
  EXPECT_EQ(error_of(with({{"container-image", std::string("a")}, {"srun-arg", Args{"--container-image=a"}}})),
            "no error");
  std::string batch = error_of(with({{"sbatch-arg", Args{"--container-image=a"}}}));
  EXPECT_NE(batch.find("would run the job script itself in the image"), std::string::npos) << batch;
  EXPECT_NE(error_of(with({{"container-image", std::string("")}})).find("is empty"), std::string::npos);
}

TEST(ContainerStep, RefusesAPathPyxisCannotMount) {
  auto step = [] {
    return container_step(with({{"container-image", std::string("img")}}), "/opt/d,1/dlaunch", "/out/x", false);
  };
  EXPECT_NE(test_support::input_error_of(step).find("dlaunch '/opt/d,1/dlaunch' cannot be mounted"), std::string::npos);
  auto folder = [] {
    return container_step(with({{"container-image", std::string("img")}}), "/opt/dlaunch", "/o:x", false);
  };
  EXPECT_NE(test_support::input_error_of(folder).find("the submission folder '/o:x' cannot be mounted"),
            std::string::npos);
}

TEST(ContainerStep, TheJobScriptRunsTheImagesDlaunchAndKeepsTheGuardHere) {
  JobRequest request = request_for(with({{"container-image", std::string("/images/pt.sqsh")}}));
  std::string script = job_script(request);
  EXPECT_NE(script.find("# The step runs in the container image /images/pt.sqsh (pyxis)"), std::string::npos)
      << script;
  EXPECT_NE(script.find("# dlaunch in the image is this machine's /opt/dlaunch, mounted read-only as "
                        "/opt/dlaunch/bin/dlaunch"),
            std::string::npos)
      << script;
  // The step guard runs on the batch host, with this machine's dlaunch; the step's launcher in the image.
  EXPECT_NE(script.find("/opt/dlaunch __run-step /out/x/exit_code 35 -- srun "), std::string::npos) << script;
  EXPECT_NE(script.find(std::string("--container-image=/images/pt.sqsh --container-mounts=") + kOurMounts +
                        " /opt/dlaunch/bin/dlaunch run --log-dir \"$log_dir\""),
            std::string::npos)
      << script;
}

TEST(ContainerStep, SrunAndTaskLaunchRunTheImagesDlaunchToo) {
  JobRequest foreground = request_for(with({{"container-image", std::string("img")}, {"srun", true}}));
  Args words = foreground_command(foreground);
  EXPECT_EQ(words.front(), "/opt/dlaunch");  // the step guard, here
  EXPECT_NE(std::find(words.begin(), words.end(), kContainerDlaunch), words.end()) << util::shell_join(words);
  JobRequest task = request_for(with({{"container-image", std::string("img")}, {"launch", std::string("task")}}));
  std::string script = job_script(task);
  EXPECT_NE(script.find("/opt/dlaunch/bin/dlaunch exec --"), std::string::npos) << script;
}

TEST(ContainerStep, AControlCharacterInTheImageIsRefused) {
  EXPECT_NE(error_of(with({{"container-image", std::string("img\nrm -rf ~")}})).find("contains a newline"),
            std::string::npos);
}

}  // namespace
}  // namespace dlaunch::submit
