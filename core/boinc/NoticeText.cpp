#include "boinc/NoticeText.h"

#include "util/Text.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <utility>

namespace nicer::boinc {

namespace {

void appendUtf8(std::string& out, std::uint32_t code) {
    if (code == 0 || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
        code = 0xFFFD;
    }
    if (code < 0x80) {
        out += static_cast<char>(code);
    } else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (code >> 18));
        out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    }
}

// The entity at the start of @p text ("&amp;", "&#39;", "&#x2019;"), decoded onto @p out; its length, or
// 0 when it is none (then the '&' stays as it is).
std::size_t decodeEntity(std::string_view text, std::string& out) {
    const auto semicolon = text.find(';');
    if (semicolon == std::string_view::npos || semicolon < 2 || semicolon > 10) {
        return 0;
    }
    const std::string_view name = text.substr(1, semicolon - 1);
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kNamed{
        {{"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}, {"nbsp", " "}}};
    for (const auto& [entity, replacement] : kNamed) {
        if (name == entity) {
            out += replacement;
            return semicolon + 1;
        }
    }
    if (name.front() == '#') {
        std::uint32_t code = 0;
        const bool hex = name.size() > 1 && (name[1] == 'x' || name[1] == 'X');
        const std::string_view digits = name.substr(hex ? 2 : 1);
        const auto [ptr, ec] =
            std::from_chars(digits.data(), digits.data() + digits.size(), code, hex ? 16 : 10);
        if (digits.empty() || ec != std::errc{} || ptr != digits.data() + digits.size()) {
            return 0;
        }
        appendUtf8(out, code);
        return semicolon + 1;
    }
    return 0;
}

bool isBlockTag(std::string_view name) {
    static constexpr std::array<std::string_view, 15> kBlocks{
        "p", "div", "li", "tr", "ul", "ol", "table", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "blockquote"};
    return std::find(kBlocks.begin(), kBlocks.end(), name) != kBlocks.end();
}

// Plain text with tags and entities resolved, blanks not yet tidied.
std::string stripMarkup(std::string_view html) {
    std::string out;
    out.reserve(html.size());
    std::size_t i = 0;
    while (i < html.size()) {
        const char c = html[i];
        if (c == '<') {
            const auto close = html.find('>', i + 1);
            const std::size_t nameStart = i + 1 + (i + 1 < html.size() && html[i + 1] == '/' ? 1 : 0);
            const bool looksLikeTag =
                close != std::string_view::npos && nameStart < html.size() &&
                (std::isalpha(static_cast<unsigned char>(html[nameStart])) != 0 || html[nameStart] == '!');
            if (!looksLikeTag) {
                out += c; // "a < b" in text
                ++i;
                continue;
            }
            std::size_t nameEnd = nameStart;
            while (nameEnd < close && std::isalnum(static_cast<unsigned char>(html[nameEnd])) != 0) {
                ++nameEnd;
            }
            const std::string name = text::toLowerAscii(html.substr(nameStart, nameEnd - nameStart));
            const bool closing = nameStart == i + 2;
            i = close + 1;
            if (!closing && (name == "script" || name == "style")) {
                const auto end = text::toLowerAscii(html.substr(i)).find("</" + name);
                i = end == std::string::npos ? html.size() : i + end;
                continue;
            }
            // <br> is a line break of its own, even after another; a block starts or ends a line, with one
            // break between blocks.
            if (name == "br" || (isBlockTag(name) && !out.empty() && out.back() != '\n')) {
                out += '\n';
            }
            continue;
        }
        if (c == '&') {
            if (const std::size_t length = decodeEntity(html.substr(i), out); length > 0) {
                i += length;
                continue;
            }
        }
        out += c;
        ++i;
    }
    return out;
}

} // namespace

std::string stripTranslation(std::string_view text) {
    constexpr std::string_view kOpen = "_(\"";
    constexpr std::string_view kClose = "\")";
    std::string out(text);
    for (auto open = out.find(kOpen); open != std::string::npos; open = out.find(kOpen, open)) {
        const auto close = out.find(kClose, open + kOpen.size());
        if (close == std::string::npos) {
            break;
        }
        out.erase(close, kClose.size());
        out.erase(open, kOpen.size());
    }
    return out;
}

std::string htmlToPlainText(std::string_view html) {
    const std::string stripped = stripMarkup(html);
    std::string out;
    out.reserve(stripped.size());
    std::string line;
    int emptyLines = 0;
    const auto flushLine = [&] {
        const std::string_view trimmed = text::trim(line);
        if (trimmed.empty()) {
            ++emptyLines;
        } else {
            if (!out.empty()) {
                out += emptyLines > 0 ? "\n\n" : "\n";
            }
            out += trimmed;
            emptyLines = 0;
        }
        line.clear();
    };
    for (const char c : stripped) {
        if (c == '\n') {
            flushLine();
        } else if (c == ' ' || c == '\t' || c == '\r') {
            if (!line.empty() && line.back() != ' ') {
                line += ' ';
            }
        } else {
            line += c;
        }
    }
    flushLine();
    return out;
}

} // namespace nicer::boinc
