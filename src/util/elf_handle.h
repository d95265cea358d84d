// libelf's handle on an open ELF file, ended with its scope: the one RAII
// wrapper for every reader of ELF files here (forensics/elf_symbol finds a
// symbol, util/elf_needs lists what a program needs to load).
#pragma once

#include <libelf.h>

namespace dlaunch::util {

class ElfHandle {
 public:
  // Reads the ELF file open on FD (which must outlive the handle); get()
  // is null when FD holds no ELF file libelf can read.
  explicit ElfHandle(int fd) {
    elf_version(EV_CURRENT);
    elf_ = elf_begin(fd, ELF_C_READ, nullptr);
  }
  ~ElfHandle() {
    if (elf_ != nullptr) elf_end(elf_);
  }
  ElfHandle(const ElfHandle&) = delete;
  ElfHandle& operator=(const ElfHandle&) = delete;
  Elf* get() const { return elf_; }

 private:
  Elf* elf_ = nullptr;
};

}  // namespace dlaunch::util
