// Settings as flags give them (each value's source is its flag), and the
// job request or refusal they make: shared by the tests of dlaunch submit's
// options, its job script and its config file.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include "submit/job_script.h"
#include "submit/submit_settings.h"
#include "util/error.h"
#include "../test_support/input_error.h"

namespace dlaunch::test_support {

inline submit::JobRequest request_for(const submit::SubmitSettings& settings) {
  return submit::make_job_request(settings, {"train.py"}, "/opt/dlaunch", "/out/x", "x");
}

inline submit::SubmitSettings with(std::initializer_list<std::pair<const char*, submit::Value>> values) {
  submit::SubmitSettings settings = submit::default_submit_settings();
  for (const auto& [name, value] : values) settings.set(name, value, std::string("--") + name);
  return settings;
}

// The message of the InputError that SETTINGS give, or "no error".
inline std::string error_of(const submit::SubmitSettings& settings) {
  return input_error_of([&] { request_for(settings); });
}

inline std::string signal_error(const std::string& text) {
  return error_of(with({{"signal", text}}));
}

}  // namespace dlaunch::test_support
