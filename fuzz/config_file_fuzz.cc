// config_file_fuzz: the dlaunch.toml reader (submit/config_file.h) on any text.
//
// apply_config_file reads a path, so the input is written to an in-memory
// file (memfd, created once) and read through /proc/self/fd/N: no product
// code changes and no disk writes. Each input is applied on top of the
// built-in defaults without a profile and with the profile "big" (the seeds'
// name). Checks that the only failure is InputError, and that every setting
// afterwards holds a value of its key's kind (the typed getters would throw
// std::bad_variant_access otherwise).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "submit/config_file.h"
#include "submit/submit_settings.h"
#include "util/error.h"

namespace {

using namespace dlaunch;
using namespace dlaunch::submit;

struct MemoryFile {
  int fd = -1;
  std::string path;

  MemoryFile() {
    fd = ::memfd_create("dlaunch.toml", MFD_CLOEXEC);
    if (fd < 0) {
      std::perror("config_file_fuzz: memfd_create");
      std::abort();
    }
    path = "/proc/self/fd/" + std::to_string(fd);
  }

  void write(const std::uint8_t* data, std::size_t size) const {
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) {
      std::perror("config_file_fuzz: writing the memfd");
      std::abort();
    }
  }
};

void check_kinds(const submit::SubmitSettings& settings) {
  for (const submit::Key& key : submit::submit_keys()) {
    if (settings.find(key.name) == nullptr) continue;
    switch (key.kind) {
      case submit::ValueKind::kInteger: (void)settings.integer(key.name); break;
      case submit::ValueKind::kBool: (void)settings.flag(key.name); break;
      case submit::ValueKind::kString: (void)settings.string(key.name); break;
      case submit::ValueKind::kStringList: (void)settings.list(key.name); break;
    }
  }
  for (const auto& [name, value] : settings.values()) {
    if (submit::find_key(name) == nullptr) {
      std::fprintf(stderr, "config_file_fuzz: setting '%s' has no key\n", name.c_str());
      std::abort();
    }
  }
}

void apply_text(const std::string& path, const std::optional<std::string>& profile) {
  submit::SubmitSettings settings = submit::default_submit_settings();
  try {
    submit::apply_config_file(settings, path, profile);
  } catch (const util::InputError&) {
    return;
  }
  check_kinds(settings);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const MemoryFile file;
  file.write(data, size);
  apply_text(file.path, std::nullopt);
  apply_text(file.path, std::string("big"));
  return 0;
}
