/* SPDX-License-Identifier: MIT */
/*
 * lib/net/tls_dl.c - OpenSSL's libssl and libcrypto, loaded on first use.
 *
 * As with libarchive (lib/image/archive_dl.c): only a run that injects a
 * secret over HTTPS uses TLS, so sbx is not linked against libssl (mapping
 * and relocating it at every start costs as much as a short run).  Each
 * function is defined here with its prototype from the OpenSSL headers (the
 * compiler checks them) and forwards to the symbol resolved on the first
 * call from the library dlopen()ed by its soname.  If it cannot be loaded,
 * every function returns its failure value (NULL, 0, -1) and
 * sbx_tls_available() says why.
 */
#include <dlfcn.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdbool.h>
#include <stdio.h>

#include "tls.h"

enum { L_SSL, L_CRYPTO };

static const char *const sonames[] = {[L_SSL] = "libssl.so.3", [L_CRYPTO] = "libcrypto.so.3"};
static void *handles[2];

static void *lib(int which)
{
	void *h = __atomic_load_n(&handles[which], __ATOMIC_ACQUIRE);

	if (!h) {
		void *none = NULL;

		h = dlopen(sonames[which], RTLD_NOW | RTLD_LOCAL);
		if (!h)
			return NULL;
		if (!__atomic_compare_exchange_n(&handles[which], &none, h, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			dlclose(h);
			h = none;
		}
	}
	return h;
}

static void *sym(int which, const char *name)
{
	void *h = lib(which);

	return h ? dlsym(h, name) : NULL;
}

int sbx_tls_crypto_available(struct sbx_err *err)
{
	if (!lib(L_CRYPTO))
		return sbx_err_set(err, ENOENT, "cannot load %s (%s): install OpenSSL 3",
				   sonames[L_CRYPTO], dlerror());
	return 0;
}

int sbx_tls_available(struct sbx_err *err)
{
	for (int i = 0; i < 2; i++)
		if (!lib(i))
			return sbx_err_set(err, ENOENT, "cannot load %s (%s): install OpenSSL 3",
					   sonames[i], dlerror());
	return 0;
}

#define RESOLVE(l, name, ret, params)                                                              \
	typedef ret(*fn_t) params;                                                                 \
	static fn_t fp_;                                                                           \
	fn_t f = __atomic_load_n(&fp_, __ATOMIC_ACQUIRE);                                          \
	if (!f) {                                                                                  \
		f = (fn_t)sym(l, #name);                                                           \
		if (f)                                                                             \
			__atomic_store_n(&fp_, f, __ATOMIC_RELEASE);                               \
	}

#define FN(l, ret, name, fail, params, args)                                                       \
	ret name params                                                                            \
	{                                                                                          \
		RESOLVE(l, name, ret, params)                                                      \
		return f ? f args : (fail);                                                        \
	}

#define VFN(l, name, params, args)                                                                 \
	void name params                                                                           \
	{                                                                                          \
		RESOLVE(l, name, void, params)                                                     \
		if (f)                                                                             \
			f args;                                                                    \
	}

#define C L_CRYPTO
#define S L_SSL

/* libcrypto: keys and certificates */
FN(C, EVP_PKEY_CTX *, EVP_PKEY_CTX_new_id, NULL, (int id, ENGINE *e), (id, e))
FN(C, int, EVP_PKEY_keygen_init, 0, (EVP_PKEY_CTX * c), (c))
FN(C, int, EVP_PKEY_CTX_set_ec_paramgen_curve_nid, 0, (EVP_PKEY_CTX * c, int nid), (c, nid))
FN(C, int, EVP_PKEY_keygen, 0, (EVP_PKEY_CTX * c, EVP_PKEY **k), (c, k))
VFN(C, EVP_PKEY_CTX_free, (EVP_PKEY_CTX * c), (c))
VFN(C, EVP_PKEY_free, (EVP_PKEY * k), (k))
/* EVP_sha256: lib/image/archive_dl.c (the same libcrypto) */
FN(C, X509 *, X509_new, NULL, (void), ())
VFN(C, X509_free, (X509 * x), (x))
FN(C, int, X509_up_ref, 0, (X509 * x), (x))
FN(C, int, X509_set_version, 0, (X509 * x, long v), (x, v))
FN(C, ASN1_INTEGER *, X509_get_serialNumber, NULL, (X509 * x), (x))
FN(C, int, ASN1_INTEGER_set_uint64, 0, (ASN1_INTEGER * a, uint64_t v), (a, v))
FN(C, ASN1_TIME *, X509_gmtime_adj, NULL, (ASN1_TIME * t, long adj), (t, adj))
FN(C, ASN1_TIME *, X509_getm_notBefore, NULL, (const X509 *x), (x))
FN(C, ASN1_TIME *, X509_getm_notAfter, NULL, (const X509 *x), (x))
FN(C, int, X509_set_pubkey, 0, (X509 * x, EVP_PKEY *k), (x, k))
FN(C, int, RAND_set_DRBG_type, 0,
   (OSSL_LIB_CTX * c, const char *drbg, const char *propq, const char *cipher, const char *digest),
   (c, drbg, propq, cipher, digest))
FN(C, X509_NAME *, X509_get_subject_name, NULL, (const X509 *x), (x))
FN(C, int, X509_set_issuer_name, 0, (X509 * x, const X509_NAME *n), (x, n))
FN(C, int, X509_NAME_add_entry_by_txt, 0,
   (X509_NAME * n, const char *field, int type, const unsigned char *b, int len, int loc, int set),
   (n, field, type, b, len, loc, set))
VFN(C, X509V3_set_ctx, (X509V3_CTX * c, X509 *i, X509 *s, X509_REQ *r, X509_CRL *crl, int fl),
    (c, i, s, r, crl, fl))
FN(C, X509_EXTENSION *, X509V3_EXT_conf_nid, NULL,
   (LHASH_OF(CONF_VALUE) * conf, X509V3_CTX *c, int nid, const char *v), (conf, c, nid, v))
FN(C, int, X509_add_ext, 0, (X509 * x, X509_EXTENSION *e, int loc), (x, e, loc))
VFN(C, X509_EXTENSION_free, (X509_EXTENSION * e), (e))
FN(C, int, X509_sign, 0, (X509 * x, EVP_PKEY *k, const EVP_MD *md), (x, k, md))
FN(C, int, X509_VERIFY_PARAM_set1_ip_asc, 0, (X509_VERIFY_PARAM * p, const char *ip), (p, ip))
FN(C, const char *, X509_verify_cert_error_string, "?", (long n), (n))
FN(C, const BIO_METHOD *, BIO_s_mem, NULL, (void), ())
FN(C, BIO *, BIO_new, NULL, (const BIO_METHOD *m), (m))
FN(C, int, BIO_free, 0, (BIO * b), (b))
FN(C, long, BIO_ctrl, 0, (BIO * b, int cmd, long larg, void *parg), (b, cmd, larg, parg))
FN(C, int, PEM_write_bio_X509, 0, (BIO * b, const X509 *x), (b, x))
FN(C, int, PEM_write_bio_PrivateKey, 0,
   (BIO * b, const EVP_PKEY *k, const EVP_CIPHER *enc, const unsigned char *kstr, int klen,
    pem_password_cb *cb, void *u),
   (b, k, enc, kstr, klen, cb, u))
FN(C, X509 *, PEM_read_bio_X509, NULL, (BIO * b, X509 **x, pem_password_cb *cb, void *u),
   (b, x, cb, u))
FN(C, EVP_PKEY *, PEM_read_bio_PrivateKey, NULL,
   (BIO * b, EVP_PKEY **x, pem_password_cb *cb, void *u), (b, x, cb, u))
FN(C, BIO *, BIO_new_mem_buf, NULL, (const void *buf, int len), (buf, len))
FN(C, unsigned long, ERR_get_error, 0, (void), ())
VFN(C, ERR_clear_error, (void), ())
FN(C, int, OPENSSL_init_crypto, 0, (uint64_t opts, const OPENSSL_INIT_SETTINGS *settings),
   (opts, settings))
VFN(C, ERR_error_string_n, (unsigned long e, char *buf, size_t len), (e, buf, len))

/* libssl */
FN(S, const SSL_METHOD *, TLS_server_method, NULL, (void), ())
FN(S, const SSL_METHOD *, TLS_client_method, NULL, (void), ())
FN(S, SSL_CTX *, SSL_CTX_new, NULL, (const SSL_METHOD *m), (m))
VFN(S, SSL_CTX_free, (SSL_CTX * c), (c))
FN(S, long, SSL_CTX_ctrl, 0, (SSL_CTX * c, int cmd, long larg, void *parg), (c, cmd, larg, parg))
VFN(S, SSL_CTX_set_verify, (SSL_CTX * c, int mode, SSL_verify_cb cb), (c, mode, cb))
FN(S, int, SSL_CTX_set_default_verify_paths, 0, (SSL_CTX * c), (c))
FN(S, int, SSL_CTX_load_verify_locations, 0, (SSL_CTX * c, const char *file, const char *dir),
   (c, file, dir))
FN(S, int, SSL_CTX_set_alpn_protos, 1, (SSL_CTX * c, const unsigned char *p, unsigned int len),
   (c, p, len))
FN(S, uint64_t, SSL_CTX_set_options, 0, (SSL_CTX * c, uint64_t op), (c, op))
FN(S, SSL *, SSL_new, NULL, (SSL_CTX * c), (c))
VFN(S, SSL_free, (SSL * s), (s))
FN(S, int, SSL_set_fd, 0, (SSL * s, int fd), (s, fd))
FN(S, int, SSL_accept, -1, (SSL * s), (s))
FN(S, int, SSL_connect, -1, (SSL * s), (s))
FN(S, int, SSL_read, -1, (SSL * s, void *buf, int n), (s, buf, n))
FN(S, int, SSL_write, -1, (SSL * s, const void *buf, int n), (s, buf, n))
FN(S, int, SSL_get_error, SSL_ERROR_SSL, (const SSL *s, int r), (s, r))
FN(S, int, SSL_shutdown, -1, (SSL * s), (s))
FN(S, long, SSL_ctrl, 0, (SSL * s, int cmd, long larg, void *parg), (s, cmd, larg, parg))
FN(S, const char *, SSL_get_servername, NULL, (const SSL *s, const int type), (s, type))
FN(S, int, SSL_set1_host, 0, (SSL * s, const char *host), (s, host))
FN(S, X509_VERIFY_PARAM *, SSL_get0_param, NULL, (SSL * s), (s))
FN(S, int, SSL_use_certificate, 0, (SSL * s, X509 *x), (s, x))
FN(S, int, SSL_use_PrivateKey, 0, (SSL * s, EVP_PKEY *k), (s, k))
FN(S, long, SSL_get_verify_result, X509_V_ERR_UNSPECIFIED, (const SSL *s), (s))
FN(S, int, SSL_pending, 0, (const SSL *s), (s))
