#pragma once

// The text of BOINC's notices made plain, for people who read it in a terminal or a tray menu: projects
// write their news in HTML, and the client marks its own notices for translation.

#include <string>
#include <string_view>

namespace nicer::boinc {

/// @p html (a notice's description: markup, links, entities) as plain text: tags dropped (a link keeps
/// its words), a line break for <br> and between blocks (<p>, <li>, <div>, ...), script and style dropped,
/// entities decoded (named, decimal, hex), runs of blanks as one space, at most one empty line in a row.
/// A "<" that starts no tag ("1 < 2") stays.
std::string htmlToPlainText(std::string_view html);

/// @p text without the translation markers that the client puts around the text of its own notices for
/// the Manager to translate: each _(" and the ") that closes it. (lib/str_util.cpp's strip_translation()
/// removes every ") as well; a quote in parentheses stays here.)
std::string stripTranslation(std::string_view text);

} // namespace nicer::boinc
