#include "submit/container_step.h"

#include <filesystem>
#include <fmt/format.h>
#include <string_view>

#include "util/error.h"
#include "util/strings.h"

namespace dlaunch::submit {
namespace {

constexpr std::string_view kImageOption = "--container-image";
constexpr std::string_view kMountsOption = "--container-mounts";

// An option NAME of srun's at ARGS[AT], as NAME=VALUE or NAME VALUE.
struct FoundOption {
  std::string value;
  std::size_t words = 1;  // the option's words in ARGS: 1 or 2
};

std::optional<FoundOption> option_at(const std::vector<std::string>& args, std::size_t at, std::string_view name,
                                     const std::string& source) {
  const std::string& word = args[at];
  if (word.starts_with(name) && word.size() > name.size() && word[name.size()] == '=')
    return FoundOption{word.substr(name.size() + 1), 1};
  if (word != name) return std::nullopt;
  if (at + 1 == args.size())
    throw util::InputError(fmt::format("srun-arg {} (from {}) has no value after it; give it as {}=VALUE", name,
                                       source, name));
  return FoundOption{args[at + 1], 2};
}

// What the user's srun args say of the container: its image and mounts,
// and every other word, in order.
struct UserContainerArgs {
  std::optional<std::string> image;
  std::vector<std::string> mounts;  // SRC[:DST[:FLAGS]] items
  std::vector<std::string> rest;
};

void take_image(UserContainerArgs& found, const std::string& image, const std::string& source) {
  if (found.image && *found.image != image)
    throw util::InputError(fmt::format("srun-arg (from {}) names two container images, '{}' and '{}': a step "
                                       "runs in one. Keep one --container-image",
                                       source, *found.image, image));
  found.image = image;
}

UserContainerArgs split_container_args(const std::vector<std::string>& args, const std::string& source) {
  UserContainerArgs found;
  for (std::size_t i = 0; i < args.size();) {
    if (auto image = option_at(args, i, kImageOption, source)) {
      take_image(found, image->value, source);
      i += image->words;
    } else if (auto mounts = option_at(args, i, kMountsOption, source)) {
      for (const std::string& item : util::split(mounts->value, ','))
        if (!item.empty()) found.mounts.push_back(item);
      i += mounts->words;
    } else {
      found.rest.push_back(args[i++]);
    }
  }
  return found;
}

// The path a mount item SRC[:DST[:FLAGS]] mounts onto in the image (pyxis
// takes a lone SRC as SRC:SRC), without a trailing '/'.
std::string mount_target(const std::string& item) {
  auto fields = util::split(item, ':');
  std::string target = fields.size() > 1 ? fields[1] : fields[0];
  while (target.size() > 1 && target.ends_with('/')) target.pop_back();
  return target;
}

std::string mount_source(const std::string& item) { return util::split(item, ':')[0]; }

// PATH goes into a --container-mounts value, which ',' and ':' split.
void check_mountable(const std::string& what, const std::string& path) {
  if (path.find_first_of(",:") == std::string::npos) return;
  throw util::InputError(fmt::format(
      "{} '{}' cannot be mounted into the container: pyxis's --container-mounts splits paths at ',' and "
      "':'. Move it to a path without them{}",
      what, path, what.starts_with("dlaunch") ? ", or name the image's own with --container-dlaunch PATH" : ""));
}

// The image: --container-image, or the old way's --srun-arg, which must agree.
std::optional<std::pair<std::string, std::string>> image_of(const SubmitSettings& settings,
                                                            const UserContainerArgs& user,
                                                            const std::string& srun_source) {
  auto setting = settings.string("container-image");
  if (setting && user.image && *setting != *user.image)
    throw util::InputError(fmt::format(
        "container-image '{}' (from {}) and srun-arg --container-image='{}' (from {}) name different images: a "
        "step runs in one. Keep container-image and drop the srun-arg",
        *setting, settings.find("container-image")->source, *user.image, srun_source));
  if (setting) return std::pair{*setting, std::string(settings.find("container-image")->source)};
  if (user.image) return std::pair{*user.image, fmt::format("srun-arg (from {})", srun_source)};
  return std::nullopt;
}

// An --sbatch-arg=--container-image runs the job script itself in the
// image (pyxis 0.12 and later), where neither the step guard nor srun is.
void refuse_batch_image(const SubmitSettings& settings) {
  for (const std::string& arg : settings.list("sbatch-arg")) {
    if (arg != kImageOption && !arg.starts_with(std::string(kImageOption) + "=")) continue;
    throw util::InputError(fmt::format(
        "sbatch-arg {} (from {}) would run the job script itself in the image, where the step guard "
        "(this machine's dlaunch) and srun are not. Give the image with --container-image IMAGE (container_image "
        "in dlaunch.toml): the job step runs in it, the job script on the batch host",
        arg, settings.find("sbatch-arg")->source));
  }
}

// Which dlaunch the step runs in the image, and what is mounted for it.
void choose_dlaunch(ContainerStep& step, const SubmitSettings& settings, const std::string& host_dlaunch,
                    bool gate) {
  if (auto own = settings.string("container-dlaunch")) {
    if (!own->starts_with('/'))
      throw util::InputError(fmt::format(
          "container-dlaunch '{}' (from {}) must be an absolute path in the image, e.g. /usr/local/bin/dlaunch: "
          "srun starts it before any PATH of the image's applies",
          *own, settings.find("container-dlaunch")->source));
    step.dlaunch = *own;
    return;
  }
  check_mountable("dlaunch", host_dlaunch);
  step.dlaunch = kContainerDlaunch;
  step.mounted_binaries.emplace_back(host_dlaunch, kContainerDlaunch);
  if (gate) {
    auto check = (std::filesystem::path(host_dlaunch).parent_path() / "dlaunch-check").string();
    step.mounted_binaries.emplace_back(check, kContainerDlaunchCheck);
  }
}

// A mount of the user's onto a path dlaunch mounts a binary at would hide
// it (or be hidden): refused, unless it mounts the same file.
void refuse_conflicting_mounts(const ContainerStep& step, const std::vector<std::string>& mounts,
                               const std::string& srun_source) {
  for (const std::string& item : mounts) {
    for (const auto& [host, target] : step.mounted_binaries) {
      if (mount_target(item) != target || mount_source(item) == host) continue;
      throw util::InputError(fmt::format(
          "srun-arg --container-mounts (from {}) mounts '{}' onto {}, where dlaunch mounts this machine's {}. "
          "To run a dlaunch of your own in the image, name it with --container-dlaunch PATH; else drop that "
          "mount",
          srun_source, mount_source(item), target, std::filesystem::path(host).filename().string()));
    }
  }
}

// The one --container-mounts value: the user's mounts, the submission
// folder at its own path, the binaries read-only; none twice.
std::string mounts_value(const ContainerStep& step, const std::vector<std::string>& user_mounts,
                         const std::string& submission_dir) {
  std::vector<std::string> items = user_mounts;
  auto has_target = [&](const std::string& target) {
    for (const std::string& item : items)
      if (mount_target(item) == target) return true;
    return false;
  };
  if (!has_target(submission_dir)) items.push_back(submission_dir + ":" + submission_dir);
  for (const auto& [host, target] : step.mounted_binaries)
    if (!has_target(target)) items.push_back(host + ":" + target + ":ro");
  std::string value;
  for (const std::string& item : items) {
    if (!value.empty()) value += ',';
    value += item;
  }
  return value;
}

}  // namespace

std::optional<ContainerStep> container_step(const SubmitSettings& settings, const std::string& host_dlaunch,
                                            const std::string& submission_dir, bool gate) {
  refuse_batch_image(settings);
  const auto* srun_found = settings.find("srun-arg");
  const std::string srun_source = srun_found != nullptr ? srun_found->source : "--srun-arg";
  UserContainerArgs user = split_container_args(settings.list("srun-arg"), srun_source);
  auto image = image_of(settings, user, srun_source);
  if (!image) {
    if (const auto* own = settings.find("container-dlaunch"))
      throw util::InputError(fmt::format(
          "container-dlaunch (from {}) needs a container image: give it with --container-image IMAGE",
          own->source));
    return std::nullopt;
  }
  if (image->first.empty())
    throw util::InputError(fmt::format("the container image (from {}) is empty; give the image pyxis should "
                                       "start, e.g. --container-image /shared/images/pytorch.sqsh",
                                       image->second));
  ContainerStep step;
  step.image = image->first;
  step.image_source = image->second;
  choose_dlaunch(step, settings, host_dlaunch, gate);
  refuse_conflicting_mounts(step, user.mounts, srun_source);
  check_mountable("the submission folder", submission_dir);
  step.srun_args = std::move(user.rest);
  step.srun_args.push_back(fmt::format("{}={}", kImageOption, step.image));
  step.srun_args.push_back(fmt::format("{}={}", kMountsOption, mounts_value(step, user.mounts, submission_dir)));
  return step;
}

std::string container_comment(const ContainerStep& container) {
  std::string text = fmt::format("# The step runs in the container image {} (pyxis), with the submission folder\n",
                                 container.image);
  text += "# mounted at its own path; this script and its step guard run on the batch host.\n";
  if (container.mounted_binaries.empty())
    return text + fmt::format("# dlaunch in the image is the image's own: {}\n", container.dlaunch);
  text += fmt::format("# dlaunch in the image is this machine's {}, mounted read-only as {}:\n",
                      container.mounted_binaries.front().first, container.dlaunch);
  text += "# the image must have the libraries it links (dlaunch submit --dry-run lists them).\n";
  return text;
}

}  // namespace dlaunch::submit
