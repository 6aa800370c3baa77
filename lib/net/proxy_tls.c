/* SPDX-License-Identifier: MIT */
/*
 * lib/net/proxy_tls.c - credential injection: TLS terminated for an
 * injection host (tls.h), one HTTP/1.1 request per connection.
 *
 * The jail's side gets a leaf certificate for the host from the sandbox's
 * CA; the upstream side is verified against the host's CAs and
 * upstream-ca.  Then, for the one request:
 *   - the TLS server name (when the client sent one) must be the host the
 *     connection is for (the CONNECT target, or the captured SNI), and the
 *     HTTP Host must be that host too, else 421 and nothing is injected;
 *   - in the request headers (not the request line, not the body), each
 *     placeholder of a secret injected for this host becomes its value;
 *     hop-by-hop headers and Expect are dropped, "Connection: close" is
 *     sent, so every later request opens a new connection and is checked
 *     again;
 *   - in the response head, each such value becomes its placeholder again
 *     (an echoing or redirecting server cannot hand it back to the jail);
 *     the body passes as it is.
 * A redirect to another host is a new request from the client, carrying
 * the placeholder it holds: nothing is injected there.
 */
#include <ctype.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <string.h>
#include <strings.h>

#include "proxy_int.h"
#include "tls.h"

#define TLS_BUF	   (64 * 1024)
#define INJECT_MAX 16

/* After an SSL call returned r: wait for what it wants; 1 retry, 0 EOF,
 * -1 error or timeout. */
static int tls_wait(struct proxy_conn *c, SSL *s, int fd, int r, int ms)
{
	switch (SSL_get_error(s, r)) {
	case SSL_ERROR_WANT_READ:
		return sbx_proxy_wait(c, fd, POLLIN, ms) > 0 ? 1 : -1;
	case SSL_ERROR_WANT_WRITE:
		return sbx_proxy_wait(c, fd, POLLOUT, ms) > 0 ? 1 : -1;
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	default:
		return -1;
	}
}

static int handshake(struct proxy_conn *c, SSL *s, int fd, bool server)
{
	for (;;) {
		int r = server ? SSL_accept(s) : SSL_connect(s);

		if (r == 1)
			return 0;
		if (tls_wait(c, s, fd, r, PROXY_HEAD_TIMEOUT_MS) <= 0)
			return -1;
	}
}

static int tls_write_all(struct proxy_conn *c, SSL *s, int fd, const char *buf, size_t len)
{
	while (len > 0) {
		int n = SSL_write(s, buf, len > TLS_BUF ? TLS_BUF : (int)len);

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			sbx_proxy_touch(c);
		} else if (tls_wait(c, s, fd, n, PROXY_IDLE_MS) <= 0) {
			return -1;
		}
	}
	return 0;
}

int sbx_proxy_tls_send(struct proxy_conn *c, const char *buf, size_t len)
{
	return tls_write_all(c, c->client_tls, c->client, buf, len);
}

/* The request head over TLS: 0, -1 (nothing to answer), -2 too big. */
static int tls_read_head(struct proxy_conn *c, SSL *s, struct proxy_request *rq)
{
	rq->buf = sbx_xmalloc(PROXY_HEAD_MAX + 1);
	while (rq->total < PROXY_HEAD_MAX) {
		int n = SSL_read(s, rq->buf + rq->total, (int)(PROXY_HEAD_MAX - rq->total));

		if (n > 0) {
			sbx_proxy_touch(c);
			rq->total += (size_t)n;
			rq->head_len = sbx_proxy_head_end(rq->buf, rq->total);
			if (rq->head_len)
				return 0;
		} else if (tls_wait(c, s, c->client, n, PROXY_HEAD_TIMEOUT_MS) <= 0) {
			snprintf(c->reason, sizeof(c->reason), "no full request over TLS");
			return -1;
		}
	}
	return -2;
}

/* s with every occurrence of from replaced by to (a new string); *hits counts. */
static char *replace_all(const char *s, size_t sl, const char *from, size_t fl, const char *to,
			 size_t tl, size_t *out_len, bool *hit)
{
	char *out = sbx_xmalloc(sl + 1), *o = out;
	size_t cap = sl + 1, i = 0;

	while (i < sl) {
		if (fl && i + fl <= sl && memcmp(s + i, from, fl) == 0) {
			size_t at = (size_t)(o - out);

			cap += tl;
			out = sbx_xrealloc(out, cap);
			o = out + at;
			memcpy(o, to, tl);
			o += tl;
			i += fl;
			*hit = true;
		} else {
			*o++ = s[i++];
		}
	}
	*o = '\0';
	*out_len = (size_t)(o - out);
	return out;
}

static void add_name(struct proxy_conn *c, const char *name)
{
	size_t l = strlen(c->injected);

	if (!strstr(c->injected, name))
		snprintf(c->injected + l, sizeof(c->injected) - l, "%s%s", l ? ", " : "", name);
}

/* The head for upstream: placeholders become values in the header lines
 * (the request line is kept as it is), Expect dropped. */
static char *inject_head(struct proxy_conn *c, const char *head,
			 const struct sbx_proxy_inject *const *inj, size_t ni)
{
	const char *eol = strchr(head, '\n');
	size_t len = eol ? (size_t)(eol - head) + 1 : strlen(head);
	char *out = sbx_xstrndup(head, len);

	for (const char *line = head + len; *line;) {
		const char *end = strchr(line, '\n');
		size_t ll = end ? (size_t)(end - line) + 1 : strlen(line);
		char *cur = sbx_xstrndup(line, ll);
		size_t cl = ll;

		if (strncasecmp(cur, "expect:", 7) != 0) {
			for (size_t i = 0; i < ni; i++) {
				bool hit = false;
				char *n = replace_all(cur, cl, inj[i]->placeholder,
						      strlen(inj[i]->placeholder), inj[i]->value,
						      inj[i]->len, &cl, &hit);

				free(cur);
				cur = n;
				if (hit)
					add_name(c, inj[i]->name);
			}
			out = sbx_xrealloc(out, len + cl + 1);
			memcpy(out + len, cur, cl + 1);
			len += cl;
		}
		explicit_bzero(cur, cl);
		free(cur);
		line += ll;
	}
	return out;
}

/* The response head with every injected value back to its placeholder. */
static char *redact_head(const char *head, size_t hl, const struct sbx_proxy_inject *const *inj,
			 size_t ni, size_t *out_len)
{
	char *out = sbx_xstrndup(head, hl);

	*out_len = hl;
	for (size_t i = 0; i < ni; i++) {
		bool hit = false;
		char *n =
		    replace_all(out, *out_len, inj[i]->value, inj[i]->len, inj[i]->placeholder,
				strlen(inj[i]->placeholder), out_len, &hit);

		free(out);
		out = n;
	}
	return out;
}

/* Host header = c->host (and c->port if it names one)? */
static bool host_ok(struct proxy_conn *c, struct proxy_request *rq, char *got, size_t gl)
{
	_cleanup_free_ char *copy = sbx_xstrdup(rq->lines);
	char *cur = copy, *name, *value;

	snprintf(got, gl, "(none)");
	while (sbx_proxy_next_header(&cur, &name, &value) > 0) {
		_cleanup_free_ char *h = NULL;
		uint16_t port = 0;

		if (strcasecmp(name, "host") != 0)
			continue;
		snprintf(got, gl, "%s", value);
		if (sbx_netpolicy_parse_authority(value, strlen(value), c->port, &h, &port) < 0)
			return false;
		return strcasecmp(h, c->host) == 0 && port == c->port;
	}
	return false;
}

struct down {
	char *head; /* the response head being gathered */
	size_t fill;
	bool done;
};

/* Bytes from upstream to the client: the head is redacted once whole. */
static int forward_down(struct proxy_conn *c, struct down *d, const char *buf, size_t n,
			const struct sbx_proxy_inject *const *inj, size_t ni)
{
	size_t hl, rl;

	if (d->done) {
		sbx_proxy_count(c, false, n);
		return sbx_proxy_tls_send(c, buf, n);
	}
	if (d->fill + n > PROXY_HEAD_MAX) {
		snprintf(c->reason + strlen(c->reason), sizeof(c->reason) - strlen(c->reason),
			 "; response head over %d bytes", PROXY_HEAD_MAX);
		return -1;
	}
	memcpy(d->head + d->fill, buf, n);
	d->fill += n;
	hl = sbx_proxy_head_end(d->head, d->fill);
	if (!hl)
		return 0;
	d->done = true;
	if (d->fill >= 12 && strncmp(d->head, "HTTP/1.", 7) == 0 &&
	    isdigit((unsigned char)d->head[9]))
		c->status = atoi(d->head + 9);
	_cleanup_free_ char *red = redact_head(d->head, hl, inj, ni, &rl);

	sbx_proxy_count(c, false, d->fill - hl + rl);
	if (sbx_proxy_tls_send(c, red, rl) < 0)
		return -1;
	return d->fill > hl ? sbx_proxy_tls_send(c, d->head + hl, d->fill - hl) : 0;
}

/* One side's read: >0 bytes, 0 would block (events set), -1 ended. */
static int side_read(SSL *s, char *buf, short *ev)
{
	int n = SSL_read(s, buf, TLS_BUF);

	if (n > 0)
		return n;
	switch (SSL_get_error(s, n)) {
	case SSL_ERROR_WANT_READ:
		*ev = POLLIN;
		return 0;
	case SSL_ERROR_WANT_WRITE:
		*ev = POLLOUT;
		return 0;
	default:
		return -1;
	}
}

/*
 * Both directions until the upstream ends (Connection: close).  A side is
 * read again only once poll says so (or OpenSSL holds bytes of it), so a
 * bulk transfer costs one recv and one send per TLS record each way.
 */
static void tls_relay(struct proxy_conn *c, SSL *us, const struct sbx_proxy_inject *const *inj,
		      size_t ni)
{
	_cleanup_free_ char *buf = sbx_xmalloc(TLS_BUF);
	struct down d = {.head = sbx_xmalloc(PROXY_HEAD_MAX)};
	bool c_eof = false, c_ready = true, u_ready = true;
	short cev = POLLIN, uev = POLLIN;

	for (;;) {
		int n;

		if (!c_eof && c_ready) {
			n = side_read(c->client_tls, buf, &cev);
			if (n > 0) {
				if (tls_write_all(c, us, c->upstream, buf, (size_t)n) < 0)
					break;
				sbx_proxy_count(c, true, (uint64_t)n);
			} else if (n < 0) {
				c_eof = true;
			} else {
				c_ready = SSL_pending(c->client_tls) > 0;
			}
		}
		if (u_ready) {
			n = side_read(us, buf, &uev);
			if (n > 0) {
				if (forward_down(c, &d, buf, (size_t)n, inj, ni) < 0)
					break;
			} else if (n < 0) {
				break; /* the response is complete (Connection: close) */
			} else {
				u_ready = SSL_pending(us) > 0;
			}
		}
		if ((c_ready && !c_eof) || u_ready)
			continue;
		struct pollfd pf[3] = {{.fd = c->client, .events = c_eof ? 0 : cev},
				       {.fd = c->upstream, .events = uev},
				       {.fd = sbx_proxy_conn_stop_fd(c), .events = POLLIN}};

		if (poll(pf, 3, PROXY_IDLE_MS) <= 0 || pf[2].revents)
			break;
		c_ready = pf[0].revents != 0;
		u_ready = pf[1].revents != 0;
	}
	if (!d.done && d.fill)
		forward_down(c, &d, "\r\n\r\n", 4, inj, ni);
	free(d.head);
}

static void serve_request(struct proxy_conn *c, SSL *us, const struct sbx_proxy_inject *const *inj,
			  size_t ni)
{
	struct proxy_request rq = {0};
	char got[256];
	int r = tls_read_head(c, c->client_tls, &rq);

	if (r == -2) {
		sbx_proxy_deny(c, 431, "Request Header Fields Too Large",
			       "request head over %d bytes", PROXY_HEAD_MAX);
	} else if (r == 0) {
		size_t extra = rq.total - rq.head_len;
		_cleanup_free_ char *head = NULL, *full = NULL;

		__atomic_store_n(&c->requested, true, __ATOMIC_RELAXED);
		if (sbx_proxy_parse_head(c, &rq) < 0 || rq.target[0] != '/')
			sbx_proxy_deny(c, 400, "Bad Request", "malformed request over TLS");
		else if (!host_ok(c, &rq, got, sizeof(got)))
			sbx_proxy_deny(c, 421, "Misdirected Request",
				       "HTTP Host '%s' is not the TLS host '%s': nothing injected",
				       got, c->host);
		else if (!(head = sbx_proxy_rewrite_head(c, &rq, rq.target, 443)))
			sbx_proxy_deny(c, 400, "Bad Request", "malformed header");
		else {
			full = inject_head(c, head, inj, ni);
			r = tls_write_all(c, us, c->upstream, full, strlen(full));
			if (r == 0)
				sbx_proxy_count(c, true, strlen(full));
			explicit_bzero(full, strlen(full));
			if (r == 0 && extra)
				r = tls_write_all(c, us, c->upstream, rq.buf + rq.head_len, extra);
			if (r == 0) {
				sbx_proxy_count(c, true, extra);
				tls_relay(c, us, inj, ni);
			}
		}
	}
	free(rq.buf);
}

/* The client's TLS server name names the connection's host (or is absent)? */
static bool sni_ok(struct proxy_conn *c)
{
	const char *sn = SSL_get_servername(c->client_tls, TLSEXT_NAMETYPE_host_name);
	_cleanup_free_ char *norm = sn ? sbx_netpolicy_norm_host(sn, strlen(sn)) : NULL;

	if (!sn || (norm && strcmp(norm, c->host) == 0))
		return true;
	snprintf(c->reason, sizeof(c->reason),
		 "TLS server name '%s' is not the host '%s': nothing injected", sn, c->host);
	return false;
}

void sbx_proxy_serve_tls(struct proxy_conn *c)
{
	const struct sbx_proxy_inject *inj[INJECT_MAX];
	size_t ni = sbx_proxy_injections(c, c->host, inj, INJECT_MAX);
	struct sbx_tls_ca *ca = sbx_proxy_conn_ca(c);
	char why[200];
	SSL *us = NULL;

	c->tls = true;
	__atomic_store_n(&c->requested, true, __ATOMIC_RELAXED);
	sbx_proxy_client_sndbuf(c->client);
	if (!ca) {
		snprintf(c->reason, sizeof(c->reason), "no CA to terminate TLS for '%s'", c->host);
		return;
	}
	c->client_tls = sbx_tls_server(ca, c->host, c->client, why, sizeof(why));
	if (!c->client_tls || handshake(c, c->client_tls, c->client, true) < 0) {
		if (c->client_tls)
			sbx_tls_why(NULL, why, sizeof(why));
		snprintf(c->reason, sizeof(c->reason), "TLS with the jail failed: %s", why);
		goto out;
	}
	c->raw = false;
	if (!sni_ok(c))
		goto out;
	us = sbx_tls_client(ca, c->host, c->upstream, why, sizeof(why));
	if (!us || handshake(c, us, c->upstream, false) < 0) {
		if (us)
			sbx_tls_why(us, why, sizeof(why));
		c->failed = true;
		sbx_proxy_deny(c, 502, "Bad Gateway", "TLS to %s port %u: %s", c->host, c->port,
			       why);
		goto out;
	}
	serve_request(c, us, inj, ni);
	SSL_shutdown(us);
out:
	if (c->client_tls)
		SSL_shutdown(c->client_tls);
	SSL_free(us);
	SSL_free(c->client_tls);
	c->client_tls = NULL;
}
