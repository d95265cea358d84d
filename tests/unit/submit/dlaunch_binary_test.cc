// Whether the nodes can run the dlaunch a job calls: a path only this
// machine has, and what a container image must provide for a mounted one.
#include "submit/dlaunch_binary.h"

#include <gtest/gtest.h>

#include "flag_settings.h"
#include "../test_support/input_error.h"

namespace dlaunch::submit {
namespace {

using test_support::with;
using util::FileSystemReach;
using util::FileSystemType;

const FileSystemType kNfs{"nfs", FileSystemReach::kShared};
const FileSystemType kExt4{"ext4", FileSystemReach::kLocal};
const FileSystemType kTmpfs{"tmpfs", FileSystemReach::kMemory};
const FileSystemType kFuse{"fuse", FileSystemReach::kUnknown};

std::string reason(const std::string& path, std::optional<FileSystemType> binary,
                   std::optional<FileSystemType> folder) {
  return node_local_reason(path, binary, folder).value_or("shared");
}

TEST(DlaunchBinary, EveryMachinesOwnFoldersAreNodeLocal) {
  EXPECT_EQ(reason("/tmp/build/dlaunch", kNfs, kNfs), "it is under /tmp, which every machine has its own of");
  EXPECT_EQ(reason("/dev/shm/dlaunch", std::nullopt, std::nullopt),
            "it is under /dev/shm, which every machine has its own of");
  EXPECT_EQ(reason("/var/tmp/x/dlaunch", kExt4, kExt4).substr(0, 20), "it is under /var/tmp");
  EXPECT_EQ(reason("/tmpdata/dlaunch", kNfs, kNfs), "shared");  // /tmpdata is not /tmp
}

TEST(DlaunchBinary, MemoryIsNodeLocal) {
  EXPECT_EQ(reason("/scratch/dlaunch", kTmpfs, kNfs), "it is on tmpfs, in this machine's memory");
}

TEST(DlaunchBinary, ALocalDiskIsSuspectOnlyBesideASharedFolder) {
  EXPECT_EQ(reason("/home/me/bin/dlaunch", kExt4, kNfs),
            "it is on a local disk (ext4), while the submission folder is on a shared file system (nfs)");
  // One machine, or every folder local: nothing to compare with.
  EXPECT_EQ(reason("/home/me/bin/dlaunch", kExt4, kExt4), "shared");
  // Where a site installs what every node has.
  EXPECT_EQ(reason("/usr/local/bin/dlaunch", kExt4, kNfs), "shared");
  EXPECT_EQ(reason("/home/me/bin/dlaunch", kNfs, kNfs), "shared");
  EXPECT_EQ(reason("/home/me/bin/dlaunch", kFuse, kNfs), "shared");
  EXPECT_EQ(reason("/home/me/bin/dlaunch", std::nullopt, kNfs), "shared");
}

TEST(DlaunchBinary, TheImageNeedsTheRareLibrariesFirstAndGlibc) {
  util::ElfNeeds needs{"/lib64/ld-linux-x86-64.so.2", {"libfmt.so.9", "libstdc++.so.6", "libcrypto.so.3", "libc.so.6"},
                       "2.34"};
  std::string text = image_needs_text("/images/pt.sqsh", {{"/opt/dlaunch", needs}});
  EXPECT_NE(text.find("/opt/dlaunch is dynamically linked: the image /images/pt.sqsh must have its loader "
                      "/lib64/ld-linux-x86-64.so.2, glibc 2.34 or newer, libfmt.so.9, libcrypto.so.3 (besides "
                      "libstdc++.so.6, libc.so.6, which most images have)."),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("--container-dlaunch PATH"), std::string::npos) << text;
  EXPECT_EQ(image_needs_text("img", {{"/opt/dlaunch", util::ElfNeeds{}}}), "");  // statically linked
}

TEST(DlaunchBinary, TheNoteReadsTheMountedBinarysElf) {
  JobRequest request = make_job_request(with({{"container-image", std::string("img")}}), {"train.py"},
                                        DLAUNCH_BINARY, "/out/x", "x");
  std::string note = container_needs_note(request);
  EXPECT_NE(note.find(std::string(DLAUNCH_BINARY) + " is dynamically linked: the image img must have"),
            std::string::npos)
      << note;
  EXPECT_NE(note.find("libc.so.6"), std::string::npos) << note;
  request.container->mounted_binaries.clear();  // the image's own dlaunch
  EXPECT_EQ(container_needs_note(request), "");
}

TEST(DlaunchBinary, AMountedBinaryThatIsNotHereIsRefused) {
  JobRequest request = make_job_request(with({{"container-image", std::string("img")}}), {"train.py"},
                                        "/no/such/dlaunch", "/out/x", "x");
  std::string error = test_support::input_error_of([&] { check_mounted_binaries(request); });
  EXPECT_NE(error.find("cannot mount /no/such/dlaunch into the container image as /opt/dlaunch/bin/dlaunch: it is "
                       "not a file here"),
            std::string::npos)
      << error;
  JobRequest gate = make_job_request(with({{"container-image", std::string("img")}, {"gate", true}}), {"train.py"},
                                     DLAUNCH_BINARY, "/out/x", "x");
  // The test build has dlaunch-check beside dlaunch: both are there.
  EXPECT_EQ(test_support::input_error_of([&] { check_mounted_binaries(gate); }), "no error");
  gate.container->mounted_binaries[1].first = "/no/such/dlaunch-check";
  EXPECT_NE(test_support::input_error_of([&] { check_mounted_binaries(gate); })
                .find("--gate runs dlaunch-check from dlaunch's folder"),
            std::string::npos);
}

TEST(DlaunchBinary, WarnsOfADlaunchUnderTmpOnlyWhenAnotherMachineRunsIt) {
  JobRequest request = make_job_request(with({}), {"train.py"}, "/tmp/me/dlaunch", "/out/x", "x");
  auto warning = node_local_warning(request, false);
  ASSERT_TRUE(warning.has_value());
  EXPECT_NE(warning->find("the job runs this machine's dlaunch /tmp/me/dlaunch by that path (the batch host runs "
                          "it as the step guard and every node runs it), but it is under /tmp"),
            std::string::npos)
      << *warning;
  // --srun with the image's own dlaunch: only this machine runs /tmp/me/dlaunch.
  JobRequest own = make_job_request(with({{"container-image", std::string("img")},
                                          {"container-dlaunch", std::string("/usr/bin/dlaunch")},
                                          {"srun", true}}),
                                    {"train.py"}, "/tmp/me/dlaunch", "/out/x", "x");
  EXPECT_FALSE(node_local_warning(own, true).has_value());
  JobRequest mounted = make_job_request(with({{"container-image", std::string("img")}, {"srun", true}}),
                                        {"train.py"}, "/tmp/me/dlaunch", "/out/x", "x");
  auto mounted_warning = node_local_warning(mounted, true);
  ASSERT_TRUE(mounted_warning.has_value());
  EXPECT_NE(mounted_warning->find("every node mounts it into the container image"), std::string::npos);
  EXPECT_NE(mounted_warning->find("--container-dlaunch PATH"), std::string::npos);
  // In a batch job the step guard runs it on the batch host whatever the image holds.
  JobRequest batch = make_job_request(with({{"container-image", std::string("img")}}), {"train.py"},
                                      "/tmp/me/dlaunch", "/out/x", "x");
  auto batch_warning = node_local_warning(batch, false);
  ASSERT_TRUE(batch_warning.has_value());
  EXPECT_NE(batch_warning->find("(the batch host runs it as the step guard and every node mounts it into the "
                                "container image)"),
            std::string::npos)
      << *batch_warning;
  EXPECT_EQ(batch_warning->find("--container-dlaunch"), std::string::npos) << *batch_warning;
}

}  // namespace
}  // namespace dlaunch::submit
