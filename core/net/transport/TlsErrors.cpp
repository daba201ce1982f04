#include "net/transport/TlsErrors.h"

#include "net/transport/OpenSsl.h"

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>
#include <cstring>
#include <memory>
#include <string>

namespace nicer::net {

namespace {

struct GeneralNamesDeleter {
    void operator()(GENERAL_NAMES* names) const noexcept { GENERAL_NAMES_free(names); }
};

// The DNS names and IP addresses the server's certificate lists, so a mismatch says what it is valid for.
std::string certificateNames(const SSL* ssl) {
    // The chain as received: after a failed verification OpenSSL has not stored the peer certificate yet.
    STACK_OF(X509)* chain = SSL_get_peer_cert_chain(ssl);
    X509* leaf = chain && sk_X509_num(chain) > 0 ? sk_X509_value(chain, 0) : nullptr;
    if (!leaf) {
        return {};
    }
    const std::unique_ptr<GENERAL_NAMES, GeneralNamesDeleter> names(
        static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(leaf, NID_subject_alt_name, nullptr, nullptr)));
    std::string text;
    for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
        const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
        std::string one;
        if (name->type == GEN_DNS) {
            const ASN1_STRING* dns = name->d.dNSName;
            one.assign(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
                       static_cast<std::size_t>(ASN1_STRING_length(dns)));
        } else if (name->type == GEN_IPADD) {
            const ASN1_OCTET_STRING* ip = name->d.iPAddress;
            const int length = ASN1_STRING_length(ip);
            char address[INET6_ADDRSTRLEN] = {};
            if ((length == 4 || length == 16) &&
                ::inet_ntop(length == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(ip), address,
                            sizeof address)) {
                one = address;
            }
        }
        if (!one.empty()) {
            text += (text.empty() ? "" : ", ") + one;
        }
    }
    return text;
}

Error verifyError(const SSL* ssl, long result, const Endpoint& endpoint) {
    const std::string where = endpoint.toString();
    const std::string reason = X509_verify_cert_error_string(result);
    switch (result) {
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH: {
        const std::string names = certificateNames(ssl);
        return Error{"TLS: certificate is not valid for " + endpoint.host + " (" + reason +
                     (names.empty() ? "" : "; it is for " + names) +
                     "); use a host name the certificate lists, or fix the server's certificate"};
    }
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_UNTRUSTED:
        return Error{"TLS: certificate of " + where + " is not trusted (" + reason +
                     "); pass --ca-file if it is signed by a private CA"};
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
        return Error{"TLS: certificate of " + where + " is not valid at this time (" + reason +
                     "); check the server's certificate and this machine's clock"};
    default:
        return Error{"TLS: certificate of " + where + " failed verification (" + reason + ")"};
    }
}

} // namespace

ConnectionError tlsHandshakeError(const SSL* ssl, int sslError, int systemErrno, const Endpoint& endpoint) {
    const std::string what = "TLS handshake with " + endpoint.toString() + " failed: ";
    if (const long result = SSL_get_verify_result(ssl); result != X509_V_OK) {
        ERR_clear_error();
        return {verifyError(ssl, result, endpoint), true};
    }
    if (sslError == SSL_ERROR_SYSCALL) {
        ERR_clear_error();
        if (systemErrno != 0) {
            return {Error{what + std::strerror(systemErrno)}};
        }
        return {Error{what + "the server closed the connection; is this port serving TLS (https)?"}};
    }
    const int reason = ERR_GET_REASON(ERR_peek_error());
    const std::string errors = takeOpenSslErrors();
    if (reason == SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL) {
        return alpnError(endpoint, "the alert no_application_protocol");
    }
    if (reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_PACKET_LENGTH_TOO_LONG) {
        return {Error{what + errors + "; is this port serving TLS (https), or does the URL need http://?"}};
    }
    return {Error{what + errors}};
}

ConnectionError alpnError(const Endpoint& endpoint, std::string_view selected) {
    return {Error{"server " + endpoint.toString() + " does not speak HTTP/2 over TLS (ALPN offered h2, got " +
                  (selected.empty() ? std::string("nothing") : std::string(selected)) +
                  "); nicer downloads over HTTP/2 only"},
            true};
}

} // namespace nicer::net
