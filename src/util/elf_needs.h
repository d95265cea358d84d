// What a program needs from the system it runs on, read from its ELF file:
// its dynamic loader, the shared libraries it names and the newest glibc
// symbol version it calls. dlaunch submit says so when it mounts its own
// binary into a container image, which brings its own libraries.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dlaunch::util {

struct ElfNeeds {
  std::string interpreter;             // PT_INTERP, e.g. /lib64/ld-linux-x86-64.so.2; empty: none
  std::vector<std::string> libraries;  // DT_NEEDED, in the file's order
  std::string newest_glibc;            // of its GLIBC_x.y symbol versions, e.g. "2.34"; empty: none
  // A statically linked program runs on any Linux of its architecture.
  bool is_static() const { return interpreter.empty() && libraries.empty(); }
};

// The needs of the ELF program at PATH. nullopt, with PROBLEM saying why,
// when PATH cannot be opened or is not an ELF file.
std::optional<ElfNeeds> elf_needs(const std::string& path, std::string& problem);

// The newer of two glibc versions ("2.17", "2.34"), compared number by number.
std::string newer_glibc(const std::string& a, const std::string& b);

}  // namespace dlaunch::util
