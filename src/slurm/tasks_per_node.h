// SLURM_TASKS_PER_NODE, e.g. "4(x2),2": how many tasks each node of a step runs.
#pragma once

#include <string>
#include <vector>

namespace dlaunch::slurm {

// {4, 4, 2} for "4(x2),2". Throws InputError naming the text for anything
// that is not Slurm's format.
std::vector<int> parse_tasks_per_node(const std::string& text);

}  // namespace dlaunch::slurm
