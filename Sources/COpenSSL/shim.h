#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

/* OpenSSL's macros, as functions Swift can call. */

/* Server Name Indication (RFC 6066 §3): SSL_set_tlsext_host_name is a macro over SSL_ctrl. */
static inline int spy_ssl_set_sni(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/* A write that returned WANT_READ/WANT_WRITE may be retried from a buffer that moved (a Swift
   array's storage), and writes return as soon as part is written. */
static inline void spy_ssl_set_modes(SSL *ssl) {
    SSL_set_mode(ssl, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_ENABLE_PARTIAL_WRITE);
}

/* TLS 1.2 at least (RFC 8996 retires 1.0 and 1.1). */
static inline int spy_ssl_ctx_min_tls12(SSL_CTX *ctx) {
    return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}
