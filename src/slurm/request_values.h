// The spelling of the values sbatch takes for a job's time limit and
// memory, checked before a job script is written: sbatch would refuse
// "--time=tomorrow" or "--mem=64GB" only at submission, and --dry-run not
// at all.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace dlaunch::slurm {

// What is wrong with TIME as sbatch --time reads it, or nullopt when sbatch
// takes it: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS (whole
// numbers), or UNLIMITED / INFINITE. The text says which forms exist.
std::optional<std::string> time_limit_problem(std::string_view time);

// What is wrong with SIZE as sbatch --mem reads it, or nullopt when sbatch
// takes it: a whole number with an optional unit K, M, G or T (either case;
// megabytes without one).
std::optional<std::string> memory_size_problem(std::string_view size);

}  // namespace dlaunch::slurm
