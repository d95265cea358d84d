#include "check/run_check.h"
#include "cli/dlaunch_main.h"

int main(int argc, char** argv) {
  return dlaunch::cli::run_guarded(
      [&] { return dlaunch::check::run_check(std::vector<std::string>(argv + 1, argv + argc)); });
}
