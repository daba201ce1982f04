#pragma once

// The CLI11 options of the controller, shared by nicerd and `nicer simulate`: one option per parameter of
// control::parameterTable(), and --signal.

#include "control/Controller.h"
#include "control/ControllerParams.h"

#include <CLI/CLI.hpp>

#include <string>

namespace nicer::options {

/// Whether the period is one of the options: `nicer simulate` replays a trace, which has no clock.
enum class PeriodOption { Included, Left };

/**
 * Adds --<key> for each of the controller's parameters, from their table: each sets its value in @p params as
 * it is parsed (the period in seconds), refusing one the parameter cannot hold; the ranges, which depend on
 * one another, are left to control::validate() once all are set. The defaults shown are @p params' values.
 */
void addParameterOptions(CLI::App& app, control::ControllerParams& params,
                         PeriodOption period = PeriodOption::Included);

/// Adds --signal (auto, machine or outside; default auto) into @p signal; @p help says what each means to the
/// command.
CLI::Option* addSignalOption(CLI::App& app, control::Signal& signal, const std::string& help);

} // namespace nicer::options
