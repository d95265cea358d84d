#include "submit/dlaunch_binary.h"

#include <array>
#include <filesystem>
#include <fmt/format.h>
#include <string_view>

#include "util/error.h"

namespace dlaunch::submit {
namespace {

// Folders every machine has its own of, whatever their file system.
constexpr std::array<std::string_view, 4> kPerMachineFolders = {"/tmp", "/var/tmp", "/dev/shm", "/run"};

bool is_under(const std::string& path, std::string_view folder) {
  return path.starts_with(folder) && (path.size() == folder.size() || path[folder.size()] == '/');
}

// Libraries nearly every image of a Linux distribution has: the C and C++
// runtimes. The rest are named first, as the ones to look for.
constexpr std::array<std::string_view, 7> kCommonLibraries = {
    "libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libpthread.so.0", "libdl.so.2", "librt.so.1"};

bool is_common(const std::string& library) {
  for (std::string_view common : kCommonLibraries)
    if (library == common) return true;
  return false;
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) {
    if (!text.empty()) text += ", ";
    text += item;
  }
  return text;
}

// "loader L, glibc 2.34 or newer and libfmt.so.9, ... (besides ..., which most images have)".
std::string needs_of(const util::ElfNeeds& needs) {
  std::vector<std::string> rare, common;
  for (const std::string& library : needs.libraries) (is_common(library) ? common : rare).push_back(library);
  std::vector<std::string> parts;
  if (!needs.interpreter.empty()) parts.push_back(std::string("its loader ") + needs.interpreter);
  if (!needs.newest_glibc.empty()) parts.push_back(fmt::format("glibc {} or newer", needs.newest_glibc));
  if (!rare.empty()) parts.push_back(joined(rare));
  std::string text = joined(parts);
  if (!common.empty()) text += fmt::format(" (besides {}, which most images have)", joined(common));
  return text;
}

// The nearest folder of PATH that exists: a dry run's submission folder is not made.
std::string existing_folder(std::filesystem::path path) {
  std::error_code error;
  while (!path.empty() && path != path.root_path() && !std::filesystem::exists(path, error))
    path = path.parent_path();
  return path.empty() ? "/" : path.string();
}

// Which machines other than this one run REQUEST's dlaunch by its path here.
std::string who_runs_it(const JobRequest& request, bool foreground) {
  std::string who;
  if (!foreground && request.launch == LaunchMode::kNode) who = "the batch host runs it as the step guard";
  if (request.container && request.container->mounted_binaries.empty()) return who;
  if (!who.empty()) who += " and ";
  return who + (request.container ? "every node mounts it into the container image" : "every node runs it");
}

}  // namespace

std::optional<std::string> node_local_reason(const std::string& path,
                                             const std::optional<util::FileSystemType>& binary_fs,
                                             const std::optional<util::FileSystemType>& folder_fs) {
  for (std::string_view folder : kPerMachineFolders)
    if (is_under(path, folder)) return fmt::format("it is under {}, which every machine has its own of", folder);
  if (!binary_fs) return std::nullopt;
  if (binary_fs->reach == util::FileSystemReach::kMemory)
    return fmt::format("it is on {}, in this machine's memory", binary_fs->name);
  if (binary_fs->reach == util::FileSystemReach::kLocal && folder_fs &&
      folder_fs->reach == util::FileSystemReach::kShared && !is_under(path, "/usr"))
    return fmt::format("it is on a local disk ({}), while the submission folder is on a shared file system ({})",
                       binary_fs->name, folder_fs->name);
  return std::nullopt;
}

std::string image_needs_text(const std::string& image,
                             const std::vector<std::pair<std::string, util::ElfNeeds>>& binaries) {
  std::string text;
  for (const auto& [path, needs] : binaries) {
    if (needs.is_static()) continue;
    text += fmt::format("{} is dynamically linked: the image {} must have {}.\n", path, image, needs_of(needs));
  }
  if (text.empty()) return "";
  return text + "Without them the step fails at once with \"error while loading shared libraries\"; a "
                "statically linked dlaunch, or one installed in the image (--container-dlaunch PATH), needs none";
}

std::optional<std::string> node_local_warning(const JobRequest& request, bool foreground) {
  const std::string who = who_runs_it(request, foreground);
  if (who.empty()) return std::nullopt;
  auto reason = node_local_reason(request.dlaunch_path, util::file_system_of(request.dlaunch_path),
                                  util::file_system_of(existing_folder(request.submission_dir)));
  if (!reason) return std::nullopt;
  return fmt::format(
      "the job runs this machine's dlaunch {} by that path ({}), but {}: the other machines will likely not find "
      "it. Install dlaunch where every node sees the same path (your home or project folder on the shared file "
      "system) and submit with that one{}",
      request.dlaunch_path, who, *reason,
      // The image's own dlaunch spares the nodes, not the batch host's step guard.
      request.container && !who.starts_with("the batch host")
          ? ", or install it in the image and name it with --container-dlaunch PATH"
          : "");
}

std::string container_needs_note(const JobRequest& request) {
  if (!request.container) return "";
  std::vector<std::pair<std::string, util::ElfNeeds>> binaries;
  for (const auto& [host, target] : request.container->mounted_binaries) {
    std::string problem;
    if (auto needs = util::elf_needs(host, problem)) binaries.emplace_back(host, *needs);
  }
  return image_needs_text(request.container->image, binaries);
}

void check_mounted_binaries(const JobRequest& request) {
  if (!request.container) return;
  for (const auto& [host, target] : request.container->mounted_binaries) {
    std::error_code error;
    if (std::filesystem::is_regular_file(host, error)) continue;
    const bool check = target == std::string(kContainerDlaunchCheck);
    throw util::InputError(fmt::format(
        "cannot mount {} into the container image as {}: it is not a file here{}. Name a dlaunch installed in "
        "the image with --container-dlaunch PATH, or run a dlaunch {}",
        host, target,
        check ? " (--gate runs dlaunch-check from dlaunch's folder)" : " (was it replaced or removed while this ran?)",
        check ? "installed with its dlaunch-check beside it" : "that exists here"));
  }
}

}  // namespace dlaunch::submit
