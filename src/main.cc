#include "cli/dlaunch_main.h"

int main(int argc, char** argv) { return dlaunch::cli::dlaunch_main(argc, argv); }
