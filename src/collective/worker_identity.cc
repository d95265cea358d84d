#include "collective/worker_identity.h"

#include <fmt/format.h>

#include "launch/task_environment.h"
#include "util/error.h"
#include "util/ports.h"
#include "util/strings.h"

namespace dlaunch::collective {

WorkerIdentity read_worker_identity(const util::Environment& original) {
  util::Environment environment = original;
  if (!environment.has("RANK") && environment.has("SLURM_PROCID")) launch::add_task_environment(environment);
  auto number = [&](const char* name, std::int64_t low, std::int64_t high) {
    auto value = environment.get(name);
    if (!value)
      throw util::InputError(fmt::format(
          "{} is not set: dlaunch check runs as a worker; start it with a launcher, e.g. "
          "'dlaunch run --nproc-per-node 4 -- dlaunch check' or torchrun, or with srun",
          name));
    return static_cast<int>(util::parse_int_in_range(*value, low, high, name));
  };
  WorkerIdentity identity;
  identity.world_size = number("WORLD_SIZE", 1, 1 << 20);
  identity.rank = number("RANK", 0, identity.world_size - 1);
  identity.local_rank = environment.has("LOCAL_RANK") ? number("LOCAL_RANK", 0, 1 << 20) : 0;
  identity.master_port = number("MASTER_PORT", 1, 65535);
  identity.master_addr = environment.get("MASTER_ADDR").value_or("127.0.0.1");
  identity.host = util::local_host_name();
  identity.socket_ifname = environment.get("GLOO_SOCKET_IFNAME").value_or("");
  return identity;
}

}  // namespace dlaunch::collective
