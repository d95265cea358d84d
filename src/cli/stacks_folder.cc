#include "cli/stacks_folder.h"

#include <fmt/format.h>

#include "submit/job_script.h"
#include "submit/submission_folder.h"
#include "util/error.h"
#include "wire/service_endpoint.h"

namespace dlaunch::cli {

void fill_stacks_folder(const std::string& folder, const ssh::JobPlan& plan, const std::string& token) {
  submit::write_secret_file(folder + "/" + submit::kTokenFileName, token);
  rendezvous::write_endpoint(folder, rendezvous::ServiceEndpoint{
                                         plan.master_addr, rendezvous::numeric_address(plan.master_addr, plan.master_port),
                                         plan.master_port, plan.run_id, plan.master_addr});
}

std::optional<util::TemporaryFolder> make_stacks_folder(const ssh::JobPlan& plan, const std::string& token,
                                                        const util::Environment& environment) {
  try {
    util::TemporaryFolder folder(util::temporary_base(environment), fmt::format("dlaunch-{}", plan.run_id));
    fill_stacks_folder(folder.path(), plan, token);
    return folder;
  } catch (const util::SystemError&) {
    return std::nullopt;
  }
}

}  // namespace dlaunch::cli
