/* SPDX-License-Identifier: MIT */
/*
 * lib/net/proxy_capture.c - connections the jail's capture rules redirected
 * to the proxy (lib/jail/capture.c): the program connected to some address
 * and port of its own choosing, without asking the proxy.
 *
 * The destination is decided as for a proxy request, from what the client
 * sends first (peeked, so it still reaches the upstream unchanged):
 *   - a TLS ClientHello: its server name (SNI), on the original port;
 *   - an HTTP/1 request: an absolute-form or CONNECT request is served as
 *     a proxy request; an origin-form one by its Host header, on the
 *     original port, with the head rewritten as for plain HTTP;
 *   - anything else (ssh, a database, nothing within CAPTURE_FIRST_MS):
 *     the original address itself, allowed only when an allowlist entry
 *     with that exact port names it: an IP literal equal to it, or a name
 *     that DNS answered with it (proxy_dns.c) or that resolves to it now.
 * The restricted address classes (netpolicy.h) apply as always.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <poll.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "proxy_int.h"

#define SO_ORIGINAL_DST_OPT 80 /* SO_ORIGINAL_DST, IP6T_SO_ORIGINAL_DST */
#define CAPTURE_FIRST_MS    300
#define HELLO_MAX	    (16384 + 5)

static uint16_t port_of(const struct sockaddr_storage *ss)
{
	return ntohs(ss->ss_family == AF_INET ? ((const struct sockaddr_in *)ss)->sin_port
					      : ((const struct sockaddr_in6 *)ss)->sin6_port);
}

bool sbx_proxy_captured(struct proxy_conn *c, struct sockaddr_storage *dst)
{
	struct sockaddr_storage local;
	socklen_t ll = sizeof(local), dl = sizeof(*dst);

	if (getsockname(c->client, (struct sockaddr *)&local, &ll) < 0)
		return false;
	memset(dst, 0, sizeof(*dst));
	if (getsockopt(c->client, local.ss_family == AF_INET6 ? SOL_IPV6 : SOL_IP,
		       SO_ORIGINAL_DST_OPT, dst, &dl) < 0)
		return false; /* no conntrack entry: not redirected */
	return !(sbx_netpolicy_addr_equal((struct sockaddr *)dst, (struct sockaddr *)&local) &&
		 port_of(dst) == port_of(&local));
}

/* Wait until `need` bytes can be peeked (SO_RCVLOWAT makes poll wait for
 * them); the number peeked, 0 at EOF or timeout. */
static size_t peek_at_least(struct proxy_conn *c, char *buf, size_t need, size_t cap, int ms)
{
	int low = (int)need, one = 1;
	ssize_t n = 0;

	setsockopt(c->client, SOL_SOCKET, SO_RCVLOWAT, &low, sizeof(low));
	if (sbx_proxy_wait(c, c->client, POLLIN, ms) > 0)
		n = recv(c->client, buf, cap, MSG_PEEK);
	setsockopt(c->client, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof(one));
	return n > 0 ? (size_t)n : 0;
}

char *sbx_proxy_client_hello_sni(const unsigned char *b, size_t n)
{
	size_t rec, off = 5 + 4 + 2 + 32, l;

	if (n < 5)
		return NULL;
	rec = 5 + ((size_t)b[3] << 8 | b[4]);
	if (n < rec)
		return NULL;
	n = rec;
	if (n < off + 1 || b[5] != 1) /* handshake type client_hello */
		return NULL;
	off += 1 + b[off]; /* session id */
	if (off + 2 > n)
		return NULL;
	off += 2 + ((size_t)b[off] << 8 | b[off + 1]); /* cipher suites */
	if (off + 1 > n)
		return NULL;
	off += 1 + b[off]; /* compression methods */
	if (off + 2 > n)
		return NULL;
	off += 2;
	while (off + 4 <= n) {
		unsigned type = (unsigned)b[off] << 8 | b[off + 1];

		l = (size_t)b[off + 2] << 8 | b[off + 3];
		off += 4;
		if (off + l > n)
			return NULL;
		if (type == 0 && l >= 5 && b[off + 2] == 0) { /* server_name, host_name */
			size_t nl = (size_t)b[off + 3] << 8 | b[off + 4];

			if (5 + nl > l)
				return NULL;
			return sbx_netpolicy_norm_host((const char *)b + off + 5, nl);
		}
		off += l;
	}
	return NULL;
}

static bool looks_http(const char *b, size_t n)
{
	size_t i = 0;

	while (i < n && i < 16 && isupper((unsigned char)b[i]))
		i++;
	return i > 0 && i < n && b[i] == ' ';
}

static bool name_matches(const struct sbx_allow_entry *e, const char *name)
{
	size_t nl = strlen(name), hl = strlen(e->host);

	if (e->wildcard)
		return nl > hl + 1 && name[nl - hl - 1] == '.' &&
		       strcmp(name + nl - hl, e->host) == 0;
	return strcmp(name, e->host) == 0;
}

static bool resolves_to(const char *host, const struct sockaddr *sa)
{
	struct addrinfo hints = {.ai_family = sa->sa_family, .ai_socktype = SOCK_STREAM}, *res;
	bool hit = false;

	if (getaddrinfo(host, NULL, &hints, &res) != 0)
		return false;
	for (struct addrinfo *a = res; a && !hit; a = a->ai_next)
		hit = sbx_netpolicy_addr_equal(a->ai_addr, sa);
	freeaddrinfo(res);
	return hit;
}

/* The entry naming dst on exactly c->port, or NULL; *name gets the name. */
static const struct sbx_allow_entry *entry_for_address(struct proxy_conn *c,
						       const struct sockaddr *dst, char **name)
{
	const struct sbx_allowlist *al = sbx_proxy_conn_allowlist(c);
	_cleanup_free_ char *asked = sbx_proxy_dns_name_of(c, dst);

	for (size_t i = 0; i < al->n; i++) {
		const struct sbx_allow_entry *e = &al->e[i];

		if (e->port != c->port)
			continue;
		if (e->is_ip ? sbx_netpolicy_addr_equal((struct sockaddr *)&e->addr, dst)
			     : (asked && name_matches(e, asked)) ||
				   (!e->wildcard && resolves_to(e->host, dst))) {
			*name =
			    sbx_xstrdup(e->is_ip || e->wildcard
					    ? (asked ? asked : c->address)
					    : (asked && name_matches(e, asked) ? asked : e->host));
			return e;
		}
	}
	return NULL;
}

static void serve_address(struct proxy_conn *c, const struct sockaddr_storage *dst)
{
	const struct sbx_allow_entry *e =
	    entry_for_address(c, (const struct sockaddr *)dst, &c->host);
	char why[256];
	int r;

	if (!e) {
		c->host = sbx_xstrdup(c->address);
		sbx_proxy_deny(c, 403, "Forbidden",
			       "%s port %u: no allowlist entry names a host:%u that resolves to it",
			       c->address, c->port, c->port);
		return;
	}
	if (!sbx_netpolicy_addr_allowed(sbx_proxy_conn_allowlist(c), e,
					(const struct sockaddr *)dst, c->port, c->port, why,
					sizeof(why))) {
		sbx_proxy_deny(c, 403, "Forbidden", "%s", why);
		return;
	}
	c->allowed = true;
	r = sbx_proxy_connect_to(c, dst);
	if (r < 0) {
		c->failed = true;
		sbx_proxy_deny(c, 502, "Bad Gateway", "cannot connect to %s port %u: %s",
			       c->address, c->port, strerror(-r));
		return;
	}
	snprintf(c->reason, sizeof(c->reason), "allowed by '%s'", e->text);
	sbx_proxy_relay(c);
}

static void serve_tls(struct proxy_conn *c, const struct sockaddr_storage *dst, char *sni)
{
	const struct sbx_proxy_inject *inj[2];

	snprintf(c->method, sizeof(c->method), "TLS");
	c->raw = true;
	if (!sni) {
		serve_address(c, dst);
		return;
	}
	c->host = sni;
	if (!sbx_proxy_open_named(c, 443))
		return;
	if (sbx_proxy_injections(c, c->host, inj, 2) > 0)
		sbx_proxy_serve_tls(c);
	else
		sbx_proxy_relay(c);
}

/* The Host header's name (normalised, malloc'd), or NULL. */
static char *host_header(struct proxy_request *rq)
{
	_cleanup_free_ char *copy = sbx_xstrdup(rq->lines);
	char *cur = copy, *name, *value, *host = NULL;
	uint16_t port;

	while (!host && sbx_proxy_next_header(&cur, &name, &value) > 0)
		if (strcasecmp(name, "host") == 0 &&
		    sbx_netpolicy_parse_authority(value, strlen(value), 80, &host, &port) < 0)
			return NULL;
	return host;
}

static void serve_http(struct proxy_conn *c, const struct sockaddr_storage *dst)
{
	struct proxy_request rq = {0};
	_cleanup_free_ char *head = NULL;
	int r = sbx_proxy_read_head(c, &rq);

	if (r == -2) {
		sbx_proxy_deny(c, 431, "Request Header Fields Too Large",
			       "request head over %d bytes", PROXY_HEAD_MAX);
	} else if (r == 0) {
		_cleanup_free_ char *raw = sbx_xstrndup(rq.buf, rq.total);
		size_t total = rq.total;

		if (sbx_proxy_parse_head(c, &rq) < 0 || rq.target[0] != '/') {
			/* absolute-form or CONNECT: the program thinks it talks to a proxy */
			memcpy(rq.buf, raw, total);
			rq.total = total;
			sbx_proxy_serve_request(c, &rq);
		} else if (!(c->host = host_header(&rq))) {
			sbx_proxy_deny(c, 400, "Bad Request", "no Host header");
		} else if (!(head = sbx_proxy_rewrite_head(c, &rq, rq.target, 80))) {
			sbx_proxy_deny(c, 400, "Bad Request", "malformed header");
		} else if (sbx_proxy_open_named(c, 80)) {
			size_t extra = rq.total - rq.head_len;

			r = sbx_proxy_send_all(c, c->upstream, head, strlen(head));
			if (r == 0)
				sbx_proxy_count(c, true, strlen(head));
			if (r == 0 && extra)
				r = sbx_proxy_send_all(c, c->upstream, rq.buf + rq.head_len, extra);
			if (r == 0) {
				sbx_proxy_count(c, true, extra);
				sbx_proxy_relay(c);
			}
		}
	}
	(void)dst;
	free(rq.buf);
}

void sbx_proxy_serve_captured(struct proxy_conn *c, const struct sockaddr_storage *dst)
{
	_cleanup_free_ char *hello = sbx_xmalloc(HELLO_MAX);
	size_t n;

	c->captured = true;
	c->port = port_of(dst);
	sbx_netpolicy_addr_str((const struct sockaddr *)dst, c->address, sizeof(c->address));
	n = peek_at_least(c, hello, 1, HELLO_MAX, CAPTURE_FIRST_MS);
	if (n >= 5 && (unsigned char)hello[0] == 0x16 && hello[1] == 3) {
		size_t rec = 5 + ((size_t)(unsigned char)hello[3] << 8 | (unsigned char)hello[4]);

		if (n < rec && rec <= HELLO_MAX)
			n = peek_at_least(c, hello, rec, HELLO_MAX, PROXY_HEAD_TIMEOUT_MS);
		__atomic_store_n(&c->requested, true, __ATOMIC_RELAXED);
		serve_tls(c, dst, n ? sbx_proxy_client_hello_sni((unsigned char *)hello, n) : NULL);
	} else if (n > 0 && looks_http(hello, n)) {
		serve_http(c, dst);
	} else {
		__atomic_store_n(&c->requested, true, __ATOMIC_RELAXED);
		snprintf(c->method, sizeof(c->method), "TCP");
		c->raw = true;
		serve_address(c, dst);
	}
}
