/* SPDX-License-Identifier: MIT */
/* lib/net/tls.c - the per-sandbox CA, leaf certificates, TLS contexts (tls.h). */
#include "tls.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/random.h>

#define CA_DAYS	   30
#define LEAF_DAYS  7
#define LEAF_CACHE 64

struct leaf {
	char *host;
	X509 *cert;
};

struct sbx_tls_ca {
	EVP_PKEY *key; /* the CA's private key: memory only */
	X509 *cert;
	char *pem;
	size_t pem_len;
	SSL_CTX *server, *client;
	pthread_mutex_t lock; /* leaf_key, leaves */
	EVP_PKEY *leaf_key;
	struct leaf leaves[LEAF_CACHE];
	size_t next_leaf; /* round-robin replacement */
	/* The client context's CAs are loaded on the first upstream TLS (a
	 * few ms of parsing the host's bundle, off the start-up path). */
	char *upstream_ca;
	bool cas_loaded;
	char cas_error[320];
	/* The key and certificate as they came (sbx_tls_ca_from_pem); the
	 * objects above are made from them on first use. */
	char *key_pem;
	size_t key_pem_len;
	bool key_locked;
	bool load_tried;
	char load_error[320];
};

static void ossl_why(char *buf, size_t len, const char *what)
{
	unsigned long e = ERR_get_error();
	char s[256] = "unknown error";

	if (e)
		ERR_error_string_n(e, s, sizeof(s));
	ERR_clear_error();
	snprintf(buf, len, "%s: %s", what, s);
}

static EVP_PKEY *ec_key(void)
{
	EVP_PKEY_CTX *k = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
	EVP_PKEY *pk = NULL;

	if (k && EVP_PKEY_keygen_init(k) > 0 &&
	    EVP_PKEY_CTX_set_ec_paramgen_curve_nid(k, NID_X9_62_prime256v1) > 0)
		EVP_PKEY_keygen(k, &pk);
	EVP_PKEY_CTX_free(k);
	return pk;
}

static bool add_ext(X509 *x, X509V3_CTX *v, int nid, const char *value)
{
	X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, v, nid, value);
	bool ok = e && X509_add_ext(x, e, -1);

	X509_EXTENSION_free(e);
	return ok;
}

/* A certificate for pub named cn, signed by signkey (issuer NULL: self). */
static X509 *make_cert(EVP_PKEY *pub, const char *cn, X509 *issuer, EVP_PKEY *signkey,
		       const char *san, long days)
{
	X509 *x = X509_new();
	X509_NAME *n;
	X509V3_CTX v;
	uint64_t serial = 0;
	bool ok;

	if (!x)
		return NULL;
	if (getrandom(&serial, sizeof(serial), 0) != sizeof(serial))
		serial = (uint64_t)sbx_now_ns();
	serial = (serial >> 1) | 1;
	n = X509_get_subject_name(x);
	ok = X509_set_version(x, 2) && ASN1_INTEGER_set_uint64(X509_get_serialNumber(x), serial) &&
	     X509_gmtime_adj(X509_getm_notBefore(x), -3600) &&
	     X509_gmtime_adj(X509_getm_notAfter(x), days * 86400) && X509_set_pubkey(x, pub) &&
	     X509_NAME_add_entry_by_txt(n, "O", MBSTRING_ASC, (const unsigned char *)"sbx", -1, -1,
					0) &&
	     X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1,
					0) &&
	     X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : n);
	memset(&v, 0, sizeof(v));
	X509V3_set_ctx(&v, issuer ? issuer : x, x, NULL, NULL, 0);
	if (ok && !issuer)
		ok = add_ext(x, &v, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") &&
		     add_ext(x, &v, NID_key_usage, "critical,keyCertSign,cRLSign") &&
		     add_ext(x, &v, NID_subject_key_identifier, "hash");
	else if (ok)
		ok = add_ext(x, &v, NID_basic_constraints, "critical,CA:FALSE") &&
		     add_ext(x, &v, NID_key_usage, "critical,digitalSignature") &&
		     add_ext(x, &v, NID_ext_key_usage, "serverAuth") &&
		     add_ext(x, &v, NID_subject_alt_name, san) &&
		     add_ext(x, &v, NID_authority_key_identifier, "keyid:always");
	if (ok)
		ok = X509_sign(x, signkey, EVP_sha256()) > 0;
	if (!ok) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/* A memory BIO's bytes as a C string (they are not NUL-terminated: no
 * strndup), wiped in the BIO when secret; NULL if it holds none. */
static char *bio_text(BIO *b, size_t *len, bool secret)
{
	char *data = NULL, *out = NULL;
	long n = BIO_ctrl(b, BIO_CTRL_INFO, 0, (char *)&data);

	if (n > 0 && data) {
		out = sbx_xmalloc((size_t)n + 1);
		memcpy(out, data, (size_t)n);
		out[n] = '\0';
		if (len)
			*len = (size_t)n;
		if (secret)
			explicit_bzero(data, (size_t)n);
	}
	return out;
}

static char *cert_pem(X509 *x, size_t *len)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *out = NULL;

	if (b && PEM_write_bio_X509(b, x))
		out = bio_text(b, len, false);
	BIO_free(b);
	return out;
}

static int make_ctxs(struct sbx_tls_ca *ca, struct sbx_err *err)
{
	char why[320];

	ca->server = SSL_CTX_new(TLS_server_method());
	ca->client = SSL_CTX_new(TLS_client_method());
	if (!ca->server || !ca->client) {
		ossl_why(why, sizeof(why), "cannot make a TLS context");
		return sbx_err_set(err, EIO, "%s", why);
	}
	SSL_CTX_ctrl(ca->server, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, NULL);
	SSL_CTX_ctrl(ca->client, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, NULL);
	/* Whole records per recv: half the syscalls of a bulk transfer. */
	SSL_CTX_ctrl(ca->server, SSL_CTRL_SET_READ_AHEAD, 1, NULL);
	SSL_CTX_ctrl(ca->client, SSL_CTRL_SET_READ_AHEAD, 1, NULL);
	SSL_CTX_set_options(ca->server, SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_options(ca->client, SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_verify(ca->client, SSL_VERIFY_PEER, NULL);
	static const unsigned char h1[] = "\x08http/1.1";

	SSL_CTX_set_alpn_protos(ca->client, h1, sizeof(h1) - 1);
	return 0;
}

static char *key_pem(EVP_PKEY *k)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *out = NULL;

	if (b && PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL))
		out = bio_text(b, NULL, true);
	BIO_free(b);
	return out;
}

int sbx_tls_ca_make_pem(const char *label, void (*cert_ready)(const char *cert, void *data),
			void *data, char **cert_out, char **key_out, struct sbx_err *err)
{
	_cleanup_free_ char *cn = sbx_xasprintf("sbx sandbox CA %s", label);
	EVP_PKEY *key;
	X509 *cert = NULL;
	size_t len;
	int r = sbx_tls_crypto_available(err);

	*cert_out = *key_out = NULL;
	if (r < 0)
		return r;
	/*
	 * What a key pair and a self-signed certificate need, and no more:
	 * not the host's openssl.cnf, nor the table of every legacy cipher
	 * and digest name (0.3 and 0.3 ms of the jail's wait for its bundle);
	 * the random generator a hash DRBG (SHA-256, NIST SP 800-90A like the
	 * default CTR DRBG with AES-256, seeded the same way from the kernel),
	 * which needs no fetch of every cipher: 1.1 ms less (41 alternating
	 * runs).  The proxy's TLS contexts, made in another process, get the
	 * defaults.
	 */
	OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ADD_ALL_CIPHERS |
				OPENSSL_INIT_NO_ADD_ALL_DIGESTS,
			    NULL);
	RAND_set_DRBG_type(NULL, "HASH-DRBG", NULL, NULL, "SHA256");
	key = ec_key();
	cert = key ? make_cert(key, cn, NULL, key, NULL, CA_DAYS) : NULL;
	*cert_out = cert ? cert_pem(cert, &len) : NULL;
	/* The jail waits for the certificate, not for the key's PEM. */
	if (*cert_out && cert_ready)
		cert_ready(*cert_out, data);
	*key_out = *cert_out ? key_pem(key) : NULL;
	X509_free(cert);
	EVP_PKEY_free(key);
	if (!*key_out) {
		char why[320];

		free(*cert_out);
		*cert_out = NULL;
		ossl_why(why, sizeof(why), "cannot make the sandbox's CA");
		return sbx_err_set(err, EIO, "%s", why);
	}
	return 0;
}

int sbx_tls_ca_from_pem(struct sbx_tls_ca **out, const char *cert, const char *key,
			const char *upstream_ca, struct sbx_err *err)
{
	struct sbx_tls_ca *ca = sbx_xcalloc(1, sizeof(*ca));

	pthread_mutex_init(&ca->lock, NULL);
	ca->pem = sbx_xstrdup(cert);
	ca->pem_len = strlen(cert);
	ca->key_pem_len = strlen(key);
	ca->key_pem = sbx_xstrdup(key);
	ca->key_locked = mlock(ca->key_pem, ca->key_pem_len + 1) == 0;
	ca->upstream_ca = upstream_ca ? sbx_xstrdup(upstream_ca) : NULL;
	*out = ca;
	return 0;
}

/* OpenSSL's objects, on first use (under the lock); false and why. */
static bool loaded(struct sbx_tls_ca *ca, char *why, size_t len)
{
	struct sbx_err e = {0};

	pthread_mutex_lock(&ca->lock);
	if (!ca->load_tried) {
		BIO *kb, *cb;

		ca->load_tried = true;
		if (sbx_tls_available(&e) < 0) {
			snprintf(ca->load_error, sizeof(ca->load_error), "%.300s", e.msg);
		} else {
			kb = BIO_new_mem_buf(ca->key_pem, (int)ca->key_pem_len);
			cb = BIO_new_mem_buf(ca->pem, (int)ca->pem_len);
			ca->key = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL) : NULL;
			ca->cert = cb ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
			BIO_free(kb);
			BIO_free(cb);
			if (!ca->key || !ca->cert)
				ossl_why(ca->load_error, sizeof(ca->load_error),
					 "cannot read the sandbox's CA");
			else if (make_ctxs(ca, &e) < 0)
				snprintf(ca->load_error, sizeof(ca->load_error), "%.300s", e.msg);
		}
	}
	pthread_mutex_unlock(&ca->lock);
	if (ca->load_error[0])
		snprintf(why, len, "%s", ca->load_error);
	return !ca->load_error[0];
}

void sbx_tls_ca_free(struct sbx_tls_ca *ca)
{
	if (!ca)
		return;
	for (size_t i = 0; i < LEAF_CACHE; i++)
		free(ca->leaves[i].host);
	/* OpenSSL's objects exist only once loaded (each call would load the
	 * libraries first: a run that made no TLS connection must not) */
	if (ca->load_tried) {
		for (size_t i = 0; i < LEAF_CACHE; i++)
			X509_free(ca->leaves[i].cert);
		EVP_PKEY_free(ca->leaf_key);
		EVP_PKEY_free(ca->key);
		X509_free(ca->cert);
		SSL_CTX_free(ca->server);
		SSL_CTX_free(ca->client);
	}
	free(ca->pem);
	free(ca->upstream_ca);
	if (ca->key_pem) {
		explicit_bzero(ca->key_pem, ca->key_pem_len);
		if (ca->key_locked)
			munlock(ca->key_pem, ca->key_pem_len + 1);
		free(ca->key_pem);
	}
	pthread_mutex_destroy(&ca->lock);
	free(ca);
}

const char *sbx_tls_ca_pem(const struct sbx_tls_ca *ca, size_t *len)
{
	*len = ca->pem_len;
	return ca->pem;
}

static bool is_ip(const char *host)
{
	unsigned char b[16];

	return inet_pton(AF_INET, host, b) == 1 || inet_pton(AF_INET6, host, b) == 1;
}

/* The cached leaf for host (a new reference), made on first use. */
static X509 *leaf_for(struct sbx_tls_ca *ca, const char *host)
{
	X509 *x = NULL;

	pthread_mutex_lock(&ca->lock);
	for (size_t i = 0; i < LEAF_CACHE && !x; i++)
		if (ca->leaves[i].host && strcasecmp(ca->leaves[i].host, host) == 0)
			x = ca->leaves[i].cert;
	if (!x) {
		_cleanup_free_ char *san = sbx_xasprintf("%s:%s", is_ip(host) ? "IP" : "DNS", host);
		struct leaf *l = &ca->leaves[ca->next_leaf++ % LEAF_CACHE];

		if (!ca->leaf_key)
			ca->leaf_key = ec_key();
		if (ca->leaf_key)
			x = make_cert(ca->leaf_key, host, ca->cert, ca->key, san, LEAF_DAYS);
		if (x) {
			free(l->host);
			X509_free(l->cert);
			l->host = sbx_xstrdup(host);
			l->cert = x;
		}
	}
	if (x)
		X509_up_ref(x);
	pthread_mutex_unlock(&ca->lock);
	return x;
}

SSL *sbx_tls_server(struct sbx_tls_ca *ca, const char *host, int fd, char *why, size_t len)
{
	if (!loaded(ca, why, len))
		return NULL;
	X509 *leaf = leaf_for(ca, host);
	SSL *s = leaf ? SSL_new(ca->server) : NULL;
	bool ok = s && SSL_use_certificate(s, leaf) && SSL_use_PrivateKey(s, ca->leaf_key) &&
		  SSL_set_fd(s, fd);

	X509_free(leaf);
	if (!ok) {
		ossl_why(why, len, "cannot make the certificate for the jail");
		SSL_free(s);
		return NULL;
	}
	return s;
}

/* The host's CAs and upstream-ca into the client context, once. */
static bool load_cas(struct sbx_tls_ca *ca, char *why, size_t len)
{
	pthread_mutex_lock(&ca->lock);
	if (!ca->cas_loaded) {
		ca->cas_loaded = true;
		if (!SSL_CTX_set_default_verify_paths(ca->client))
			ossl_why(ca->cas_error, sizeof(ca->cas_error),
				 "cannot load the host's CA certificates");
		else if (ca->upstream_ca &&
			 !SSL_CTX_load_verify_locations(ca->client, ca->upstream_ca, NULL))
			ossl_why(ca->cas_error, sizeof(ca->cas_error),
				 "[network] upstream-ca: no certificate could be read");
	}
	pthread_mutex_unlock(&ca->lock);
	if (ca->cas_error[0])
		snprintf(why, len, "%s", ca->cas_error);
	return !ca->cas_error[0];
}

SSL *sbx_tls_client(struct sbx_tls_ca *ca, const char *host, int fd, char *why, size_t len)
{
	SSL *s = loaded(ca, why, len) && load_cas(ca, why, len) ? SSL_new(ca->client) : NULL;
	bool ok = s && SSL_set_fd(s, fd);

	if (ok && is_ip(host))
		ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s), host);
	else if (ok)
		ok = SSL_ctrl(s, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
			      (void *)host) &&
		     SSL_set1_host(s, host);
	if (!ok && !ca->cas_error[0])
		ossl_why(why, len, "cannot start TLS upstream");
	if (!ok) {
		SSL_free(s);
		return NULL;
	}
	return s;
}

void sbx_tls_why(SSL *s, char *buf, size_t len)
{
	long v = s ? SSL_get_verify_result(s) : X509_V_OK;

	if (v != X509_V_OK) {
		ERR_clear_error();
		snprintf(buf, len, "certificate not trusted: %s", X509_verify_cert_error_string(v));
		return;
	}
	ossl_why(buf, len, "TLS error");
}
