// The job plan the tests of dlaunch ssh's remote commands and preflight share.
#pragma once

#include "ssh/remote_command.h"

namespace dlaunch::test_support {

inline ssh::JobPlan sample_plan() {
  ssh::JobPlan plan;
  plan.nnodes = 3;
  plan.master_addr = "h1";
  plan.master_port = 29400;
  plan.run_id = "ssh-abc";
  plan.working_dir = "/work/my project";
  plan.env = {{"NCCL_DEBUG", "INFO"}};
  plan.remote_dlaunch = "/opt/dlaunch";
  plan.run_args = {"--max-restarts", "1"};
  plan.command = {"train.py", "--lr", "0.1"};
  plan.ssh_args = {"-F", "cfg"};
  plan.connect_timeout = 7;
  return plan;
}

}  // namespace dlaunch::test_support
