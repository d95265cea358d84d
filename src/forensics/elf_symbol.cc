#include "forensics/elf_symbol.h"

#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <gelf.h>
#include <libelf.h>
#include <sstream>
#include <unistd.h>

#include "util/elf_handle.h"
#include "util/fd.h"

namespace dlaunch::forensics {
namespace {

// SYMBOL's value in the symbol table of section SCN, if it holds it.
std::optional<GElf_Addr> find_in_table(Elf* elf, Elf_Scn* scn, const GElf_Shdr& header, const std::string& symbol) {
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr || header.sh_entsize == 0) return std::nullopt;
  std::size_t count = header.sh_size / header.sh_entsize;
  for (std::size_t i = 0; i < count; ++i) {
    GElf_Sym sym;
    if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr || sym.st_value == 0) continue;
    const char* name = elf_strptr(elf, header.sh_link, sym.st_name);
    if (name != nullptr && symbol == name && GELF_ST_TYPE(sym.st_info) == STT_FUNC) return sym.st_value;
  }
  return std::nullopt;
}

// The lowest address the kernel mapped PID's executable at (its first
// mapping, file offset 0), from /proc/PID/maps.
std::optional<std::uintptr_t> executable_base(pid_t pid) {
  char exe[4096];
  ssize_t length = ::readlink(fmt::format("/proc/{}/exe", pid).c_str(), exe, sizeof(exe) - 1);
  if (length <= 0) return std::nullopt;
  std::string path(exe, static_cast<std::size_t>(length));
  std::ifstream maps(fmt::format("/proc/{}/maps", pid));
  std::string line;
  while (std::getline(maps, line)) {
    // "start-end perms offset dev inode   path"
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, file;
    fields >> range >> perms >> offset >> dev >> inode;
    std::getline(fields >> std::ws, file);
    if (file != path || std::stoull(offset, nullptr, 16) != 0) continue;
    return static_cast<std::uintptr_t>(std::stoull(range.substr(0, range.find('-')), nullptr, 16));
  }
  return std::nullopt;
}

// Where the executable's first loadable segment expects to be (0 for most PIEs).
std::optional<GElf_Addr> first_load_address(Elf* elf) {
  std::size_t count = 0;
  if (elf_getphdrnum(elf, &count) != 0) return std::nullopt;
  for (std::size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) != nullptr && phdr.p_type == PT_LOAD)
      return phdr.p_vaddr & ~(static_cast<GElf_Addr>(phdr.p_align ? phdr.p_align : 1) - 1);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::uintptr_t> symbol_address(pid_t pid, const std::string& symbol, std::string& problem) {
  util::Fd fd(::open(fmt::format("/proc/{}/exe", pid).c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    problem = fmt::format("cannot read the worker's executable (/proc/{}/exe): {}", pid, std::strerror(errno));
    return std::nullopt;
  }
  util::ElfHandle elf(fd.get());
  GElf_Ehdr ehdr;
  if (elf.get() == nullptr || gelf_getehdr(elf.get(), &ehdr) == nullptr) {
    problem = fmt::format("the worker's executable is not ELF: {}", elf_errmsg(-1));
    return std::nullopt;
  }
  std::optional<GElf_Addr> value;
  for (Elf_Scn* scn = elf_nextscn(elf.get(), nullptr); scn != nullptr && !value; scn = elf_nextscn(elf.get(), scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr) continue;
    if (header.sh_type == SHT_DYNSYM || header.sh_type == SHT_SYMTAB) value = find_in_table(elf.get(), scn, header, symbol);
  }
  if (!value) {
    problem = fmt::format("the worker's executable has no symbol {}", symbol);
    return std::nullopt;
  }
  if (ehdr.e_type == ET_EXEC) return static_cast<std::uintptr_t>(*value);
  auto base = executable_base(pid);
  auto first = first_load_address(elf.get());
  if (!base || !first) {
    problem = fmt::format("cannot tell where the worker's executable is loaded (/proc/{}/maps)", pid);
    return std::nullopt;
  }
  return static_cast<std::uintptr_t>(*base - *first + *value);
}

}  // namespace dlaunch::forensics
