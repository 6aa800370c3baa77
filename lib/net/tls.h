/* SPDX-License-Identifier: MIT */
/*
 * lib/net/tls.h - the per-sandbox certificate authority of credential
 * injection, and the TLS contexts of the proxy (OpenSSL, tls_dl.c).
 *
 * A run that injects a secret has a CA of its own: an EC P-256 key pair
 * and a self-signed certificate ("sbx sandbox CA ID" when made at its
 * start, 12 random hex digits instead of ID when an earlier run's purger
 * made it ahead and it waited in the user's kernel keyring:
 * lib/run/run_extras.c; valid 30 days, path length 0).  The private key
 * lives only in memory, this process's (and the kernel's while it
 * waits): it is never written to a file, the state directory or the
 * jail; the jail gets the certificate (sbx_tls_ca_pem) in its CA bundle.  For each
 * injection host the proxy terminates TLS with a leaf certificate for
 * that name (one leaf key per CA, made on first use; leaves are cached).
 * Upstream, the proxy verifies the server's certificate and name against
 * the host's CAs plus the [network] upstream-ca file.
 */
#ifndef SBX_TLS_H
#define SBX_TLS_H

#include <stddef.h>

#include "util.h"

struct sbx_tls_ca;
typedef struct ssl_st SSL;

/* 0 when libssl and libcrypto can be loaded; else -ENOENT and why. */
int sbx_tls_available(struct sbx_err *err);
/* The same for libcrypto alone (all that making a CA needs). */
int sbx_tls_crypto_available(struct sbx_err *err);

/*
 * Make a CA in this process (label names it: "sbx sandbox CA <label>"): its
 * certificate and private key as PEM (malloc'ed; wipe and free the key).
 * cert_ready (may be NULL) gets the certificate as soon as it exists,
 * before the key is written out.  A run does this in a short-lived child
 * (lib/run/run_extras.c), so that loading OpenSSL is off its start-up
 * path, or its purger's child makes CAs ahead for the next runs.  It initialises OpenSSL for this
 * alone (no openssl.cnf, a hash DRBG): a process that makes TLS contexts afterwards would not get
 * the configuration either.
 */
int sbx_tls_ca_make_pem(const char *label, void (*cert_ready)(const char *cert, void *data),
			void *data, char **cert_pem, char **key_pem, struct sbx_err *err);
/*
 * The CA from its PEMs (copied; the key is kept mlock()ed and wiped on
 * free).  Nothing of OpenSSL is loaded until the first sbx_tls_server or
 * sbx_tls_client.  upstream_ca may be NULL.
 */
int sbx_tls_ca_from_pem(struct sbx_tls_ca **out, const char *cert_pem, const char *key_pem,
			const char *upstream_ca, struct sbx_err *err);
void sbx_tls_ca_free(struct sbx_tls_ca *ca);
/* The CA certificate as PEM (owned by ca). */
const char *sbx_tls_ca_pem(const struct sbx_tls_ca *ca, size_t *len);

/*
 * A server-side SSL for the jail's side of a connection to `host`, with a
 * leaf certificate for it, set on fd (not yet handshaken); NULL and why.
 * No ALPN is offered, so clients speak HTTP/1.1.
 */
SSL *sbx_tls_server(struct sbx_tls_ca *ca, const char *host, int fd, char *why, size_t len);
/* A client-side SSL to `host` on fd: SNI (for a name), certificate and
 * name verified against the host's CAs and upstream-ca; NULL and why. */
SSL *sbx_tls_client(struct sbx_tls_ca *ca, const char *host, int fd, char *why, size_t len);
/* Why the last TLS call failed, in words (OpenSSL's error queue, or the
 * certificate verification result of s). */
void sbx_tls_why(SSL *s, char *buf, size_t len);

#endif
