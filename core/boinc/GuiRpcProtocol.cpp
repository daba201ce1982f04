#include "boinc/GuiRpcProtocol.h"

#include "boinc/ReplyXml.h"
#include "util/Text.h"

#include <openssl/evp.h>

#include <array>
#include <memory>
#include <span>

namespace nicer::boinc {

std::string frameRequest(std::string_view body) {
    std::string request = "<boinc_gui_rpc_request>\n";
    request += body;
    request += "</boinc_gui_rpc_request>\n";
    request += kEndOfMessage;
    return request;
}

std::string requestName(std::string_view body) {
    const auto open = body.find('<');
    if (open == std::string_view::npos) {
        return "request";
    }
    const auto end = body.find_first_of(" \t\r\n/>", open + 1);
    const std::string_view name =
        body.substr(open + 1, end == std::string_view::npos ? std::string_view::npos : end - open - 1);
    return name.empty() ? "request" : std::string(name);
}

std::string xmlEscape(std::string_view value) {
    std::string escaped;
    escaped.reserve(value.size());
    for (const char c : value) {
        switch (c) {
        case '&':
            escaped += "&amp;";
            break;
        case '<':
            escaped += "&lt;";
            break;
        case '>':
            escaped += "&gt;";
            break;
        case '"':
            escaped += "&quot;";
            break;
        case '\'':
            escaped += "&apos;";
            break;
        default:
            escaped += c;
            break;
        }
    }
    return escaped;
}

Result<std::string> authHash(std::string_view nonce, std::string_view password) {
    const std::string input = std::string(nonce) + std::string(password);
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int size = 0;
    const std::unique_ptr<EVP_MD, decltype(&EVP_MD_free)> md5(EVP_MD_fetch(nullptr, "MD5", nullptr),
                                                              &EVP_MD_free);
    if (!md5 || EVP_Digest(input.data(), input.size(), digest.data(), &size, md5.get(), nullptr) != 1) {
        return Error{
            "cannot compute the MD5 hash that BOINC's GUI RPC password exchange needs: OpenSSL offers "
            "no MD5 here (a FIPS-only configuration?)"};
    }
    return text::lowerHex(std::span(digest.data(), size));
}

Result<void> ReplyBuffer::append(std::string_view bytes) {
    m_buffer.append(bytes);
    // Every reply that ends in the new bytes, and the one still under way, must fit.
    for (auto end = m_buffer.find(kEndOfMessage, m_scanned); end != std::string::npos;
         end = m_buffer.find(kEndOfMessage, end + 1)) {
        if (end - m_tail > m_limit) {
            break;
        }
        m_tail = end + 1;
    }
    m_scanned = m_buffer.size();
    const auto tailEnd = m_buffer.find(kEndOfMessage, m_tail);
    if ((tailEnd == std::string::npos ? m_buffer.size() : tailEnd) - m_tail > m_limit) {
        clear();
        return Error{"a reply is larger than " + std::to_string(m_limit) + " bytes"};
    }
    return {};
}

std::optional<std::string> ReplyBuffer::next() {
    if (m_tail == 0) {
        return std::nullopt; // no \003 seen yet
    }
    const auto end = m_buffer.find(kEndOfMessage);
    std::string reply = m_buffer.substr(0, end);
    m_buffer.erase(0, end + 1);
    m_scanned -= end + 1;
    m_tail -= end + 1;
    return reply;
}

void ReplyBuffer::clear() {
    m_buffer.clear();
    m_scanned = 0;
    m_tail = 0;
}

Result<std::string> parseNonce(std::string_view reply) {
    pugi::xml_document document;
    auto root = detail::loadReply(document, reply, "auth1");
    if (!root) {
        return root.error();
    }
    const std::string_view nonce = detail::textOf(root->child("nonce"));
    if (nonce.empty()) {
        return detail::replyError("auth1", "has no <nonce>");
    }
    return std::string(nonce);
}

Result<void> parseAuthorized(std::string_view reply) {
    pugi::xml_document document;
    auto root = detail::loadReply(document, reply, "auth2");
    if (!root) {
        return root.error();
    }
    if (!root->child("authorized")) {
        return detail::replyError("auth2", "says neither <authorized/> nor <unauthorized/>");
    }
    return {};
}

Result<void> parseSuccess(std::string_view reply, std::string_view rpc) {
    pugi::xml_document document;
    auto root = detail::loadReply(document, reply, rpc);
    if (!root) {
        return root.error();
    }
    if (root->child("success")) {
        return {};
    }
    if (const pugi::xml_node status = root->child("status")) {
        return detail::replyError(rpc, "is a failure: BOINC error " + std::string(detail::textOf(status)));
    }
    return detail::replyError(rpc, "says neither <success/> nor <error>");
}

} // namespace nicer::boinc
