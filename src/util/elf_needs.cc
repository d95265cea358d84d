#include "util/elf_needs.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <gelf.h>
#include <libelf.h>
#include <string_view>

#include "util/elf_handle.h"
#include "util/fd.h"
#include "util/strings.h"

namespace dlaunch::util {
namespace {

// The path PT_INTERP names, or "" for a program without one.
std::string interpreter_of(Elf* elf) {
  std::size_t count = 0;
  if (elf_getphdrnum(elf, &count) != 0) return "";
  std::size_t size = 0;
  const char* raw = elf_rawfile(elf, &size);
  for (std::size_t i = 0; i < count; ++i) {
    GElf_Phdr header;
    if (gelf_getphdr(elf, static_cast<int>(i), &header) == nullptr || header.p_type != PT_INTERP) continue;
    if (raw == nullptr || header.p_offset >= size || header.p_filesz > size - header.p_offset) return "";
    std::string path(raw + header.p_offset, header.p_filesz);
    return path.substr(0, path.find('\0'));
  }
  return "";
}

// The DT_NEEDED names of the dynamic section SCN.
void add_needed(Elf* elf, Elf_Scn* scn, const GElf_Shdr& header, ElfNeeds& needs) {
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr || header.sh_entsize == 0) return;
  for (std::size_t i = 0; i < header.sh_size / header.sh_entsize; ++i) {
    GElf_Dyn entry;
    if (gelf_getdyn(data, static_cast<int>(i), &entry) == nullptr || entry.d_tag == DT_NULL) break;
    if (entry.d_tag != DT_NEEDED) continue;
    const char* name = elf_strptr(elf, header.sh_link, entry.d_un.d_val);
    if (name != nullptr) needs.libraries.emplace_back(name);
  }
}

// The newest GLIBC_x.y the version-needs section SCN asks for.
void add_glibc_versions(Elf* elf, Elf_Scn* scn, const GElf_Shdr& header, ElfNeeds& needs) {
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr) return;
  std::size_t offset = 0;
  for (std::size_t file = 0; file < header.sh_info; ++file) {
    GElf_Verneed need;
    if (gelf_getverneed(data, static_cast<int>(offset), &need) == nullptr) return;
    std::size_t aux_offset = offset + need.vn_aux;
    for (std::size_t i = 0; i < need.vn_cnt; ++i) {
      GElf_Vernaux aux;
      if (gelf_getvernaux(data, static_cast<int>(aux_offset), &aux) == nullptr) break;
      const char* name = elf_strptr(elf, header.sh_link, aux.vna_name);
      if (name != nullptr && std::string_view(name).starts_with("GLIBC_"))
        needs.newest_glibc = newer_glibc(needs.newest_glibc, std::string(name + 6));
      if (aux.vna_next == 0) break;
      aux_offset += aux.vna_next;
    }
    if (need.vn_next == 0) return;
    offset += need.vn_next;
  }
}

}  // namespace

std::string newer_glibc(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  auto numbers_a = split(a, '.'), numbers_b = split(b, '.');
  for (std::size_t i = 0; i < std::max(numbers_a.size(), numbers_b.size()); ++i) {
    auto x = i < numbers_a.size() ? parse_int(numbers_a[i]).value_or(0) : 0;
    auto y = i < numbers_b.size() ? parse_int(numbers_b[i]).value_or(0) : 0;
    if (x != y) return x > y ? a : b;
  }
  return a;
}

std::optional<ElfNeeds> elf_needs(const std::string& path, std::string& problem) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    problem = fmt::format("cannot read {}: {}", path, std::strerror(errno));
    return std::nullopt;
  }
  ElfHandle elf(fd.get());
  if (elf.get() == nullptr || elf_kind(elf.get()) != ELF_K_ELF) {
    problem = fmt::format("{} is not an ELF program", path);
    return std::nullopt;
  }
  ElfNeeds needs;
  needs.interpreter = interpreter_of(elf.get());
  for (Elf_Scn* scn = elf_nextscn(elf.get(), nullptr); scn != nullptr; scn = elf_nextscn(elf.get(), scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr) continue;
    if (header.sh_type == SHT_DYNAMIC) add_needed(elf.get(), scn, header, needs);
    if (header.sh_type == SHT_GNU_verneed) add_glibc_versions(elf.get(), scn, header, needs);
  }
  return needs;
}

}  // namespace dlaunch::util
