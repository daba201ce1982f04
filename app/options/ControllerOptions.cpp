#include "options/ControllerOptions.h"

#include "control/ParameterTable.h"
#include "control/ParameterText.h"

#include <string>
#include <vector>

namespace nicer::options {

void addParameterOptions(CLI::App& app, control::ControllerParams& params, PeriodOption period) {
    for (const auto& info : control::parameterTable()) {
        if (period == PeriodOption::Left && info.type == control::ParameterType::Duration) {
            continue;
        }
        const auto set = [&params, &info](double value) {
            if (auto done = info.set(params, value); !done) {
                throw CLI::ValidationError(std::string("--") + info.key, done.error().message);
            }
        };
        const std::string name = std::string("--") + info.key;
        if (info.type == control::ParameterType::Hours) {
            // A config file's unquoted value is split at its commas ("sat,sun" included), as an array would
            // be: the parts are joined again, so that it reads as written.
            app.add_option_function<std::vector<std::string>>(
                   name,
                   [&params, &info](const std::vector<std::string>& parts) {
                       std::string text;
                       for (const auto& part : parts) {
                           text += (text.empty() ? "" : ",") + part;
                       }
                       if (auto done = info.setText(params, text); !done) {
                           throw CLI::ValidationError(std::string("--") + info.key, done.error().message);
                       }
                   },
                   control::parameterHelp(info))
                ->allow_extra_args(false)
                ->default_str(control::parameterAsText(info, params));
            continue;
        }
        CLI::Option* option = info.type == control::ParameterType::Count
                                  ? app.add_option_function<int>(
                                        name, [set](int v) { set(v); }, control::parameterHelp(info))
                                  : app.add_option_function<double>(name, set, control::parameterHelp(info));
        option->default_str(control::parameterAsText(info, params));
    }
}

CLI::Option* addSignalOption(CLI::App& app, control::Signal& signal, const std::string& help) {
    return app
        .add_option_function<std::string>(
            "--signal",
            [&signal](const std::string& text) {
                const auto parsed = control::parseSignal(text);
                if (!parsed) {
                    throw CLI::ValidationError("--signal", "'" + text + "' is not auto, machine or outside");
                }
                signal = *parsed;
            },
            help)
        ->default_str("auto");
}

} // namespace nicer::options
