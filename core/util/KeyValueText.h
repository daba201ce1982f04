#pragma once

#include "util/Result.h"

#include <functional>
#include <string>
#include <string_view>

namespace nicer::text {

/// One `key = value` line, both sides trimmed.
struct KeyValueLine {
    std::string_view key;
    std::string_view value;
};

/**
 * Calls @p onLine for each `key = value` line of @p text in order, skipping blank lines and `#` comments, and
 * stops at the first failure. A line without '=' fails as "SOURCE:N: expected 'FORM', found '...'"; an error
 * of @p onLine gets the same "SOURCE:N: " in front. Shared by nicerd's state files.
 */
Result<void> forEachKeyValueLine(std::string_view text, const std::string& source, std::string_view form,
                                 const std::function<Result<void>(const KeyValueLine&)>& onLine);

/// For a file a program writes whole (nicerd's state files): an error when @p text is empty or its last line
/// has no newline, which means the file was cut short, e.g. by a copy or a disk that failed midway.
Result<void> requireWholeLines(std::string_view text, const std::string& source);

} // namespace nicer::text
