#pragma once

#include "control/ControllerParams.h"
#include "util/Result.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nicer::control {

/// Sets the parameter @p key (a key of parameterTable()) from its text form (period in seconds). Does not
/// validate ranges: call validate() once all are set, so that min/max can be changed together.
Result<void> setParameterFromText(ControllerParams& params, std::string_view key, std::string_view value);

/// The period for a duration in seconds, rounded to whole milliseconds; an error for a negative, infinite or
/// absurdly long one. The range itself is checked by validate().
Result<std::chrono::milliseconds> periodFromSeconds(double seconds);

struct ParameterInfo;
/// One parameter's value as text (the period in seconds), as parametersAsText writes it.
std::string parameterAsText(const ParameterInfo& info, const ControllerParams& params);

/// Every parameter as key and text, in parameterTable() order; setParameterFromText reads them back exactly.
std::vector<std::pair<std::string, std::string>> parametersAsText(const ControllerParams& params);

/// Reads "key = value" lines (blank lines and # comments ignored) over @p params and validates the result;
/// errors name @p source and the line. Used for the file where the daemon keeps parameters set at run time.
Result<ControllerParams> readParameterFile(const std::string& text, const std::string& source,
                                           ControllerParams params);

/// readParameterFile for the file nicerd wrote itself, which holds every parameter in whole lines: a file cut
/// short (empty, a last line without its newline, a parameter missing) is an error rather than a silent
/// return to the defaults for what was lost. (A parameter added in a later version must be allowed to be
/// missing here, for files written before it.)
Result<ControllerParams> readSavedParameterFile(const std::string& text, const std::string& source,
                                                ControllerParams params);

/// The text readParameterFile reads.
std::string writeParameterFile(const ControllerParams& params);

} // namespace nicer::control
