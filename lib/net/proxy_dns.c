/* SPDX-License-Identifier: MIT */
/*
 * lib/net/proxy_dns.c - the jail's DNS server (capture mode).
 *
 * The capture rules send every UDP query to port 53 to this socket.  A
 * name that an allowlist entry names (exactly, or below a "*.domain"
 * entry; any port) is resolved on the host with getaddrinfo and answered
 * with its A or AAAA records (TTL 10 s; other query types: no records); any
 * other name gets NXDOMAIN at once.  The addresses given out are
 * remembered with their name, so that a later connection to one of them
 * that carries no name of its own (no TLS server name, no HTTP Host) is
 * known by the name the jail asked for.  Every query is an event.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "proxy_int.h"

#define DNS_TTL 10

enum { RC_OK = 0, RC_FORMERR = 1, RC_SERVFAIL = 2, RC_NXDOMAIN = 3, RC_NOTIMP = 4 };

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

bool sbx_proxy_dns_question(struct sbx_dns_query *q)
{
	size_t off = 12, nl = 0;

	if (q->len < 12 || (q->buf[2] & 0x80) || get16(q->buf + 4) != 1)
		return false;
	while (off < q->len && q->buf[off]) {
		size_t l = q->buf[off];

		if (l > 63 || off + 1 + l > q->len || nl + l + 1 >= sizeof(q->name))
			return false;
		for (size_t i = 0; i < l; i++) {
			unsigned char ch = q->buf[off + 1 + i];

			if (ch <= 0x20 || ch >= 0x7f || ch == '.')
				return false;
			q->name[nl++] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
		}
		q->name[nl++] = '.';
		off += 1 + l;
	}
	if (off + 5 > q->len)
		return false;
	if (nl)
		nl--; /* the last dot */
	q->name[nl] = '\0';
	q->qtype = get16(q->buf + off + 1);
	q->qend = off + 5;
	return nl > 0;
}

/* Is name one the allowlist names (exactly or below a *.domain)? */
static const char *allowed_by(const struct sbx_allowlist *al, const char *name)
{
	size_t nl = strlen(name);

	for (size_t i = 0; i < al->n; i++) {
		const struct sbx_allow_entry *e = &al->e[i];
		size_t hl = strlen(e->host);

		if (e->is_ip)
			continue;
		if (e->wildcard ? nl > hl + 1 && name[nl - hl - 1] == '.' &&
				      strcmp(name + nl - hl, e->host) == 0
				: strcmp(name, e->host) == 0)
			return e->text;
	}
	return NULL;
}

/* A or AAAA records of name, resolved on the host; an RC_ code. */
static int resolve(struct sbx_proxy *p, const char *name, uint16_t qtype, struct sbx_dns_answer *a,
		   char *why, size_t wl)
{
	int family = qtype == 1 ? AF_INET : AF_INET6;
	struct addrinfo hints = {.ai_family = family, .ai_socktype = SOCK_STREAM}, *res = NULL;
	int r;

	if (sbx_proxy_is_localhost(name)) {
		inet_pton(family, family == AF_INET ? "127.0.0.1" : "::1", a->rr[0]);
		a->n = 1;
		snprintf(a->first, sizeof(a->first), family == AF_INET ? "127.0.0.1" : "::1");
		return RC_OK;
	}
	r = getaddrinfo(name, NULL, &hints, &res);
	if (r == EAI_NONAME || r == EAI_NODATA || r == EAI_ADDRFAMILY) {
		struct addrinfo any = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *other;
		/* No address of this family: NXDOMAIN only if it has none at all
		 * (an IPv4-only name answers AAAA with no records, NOERROR). */
		bool exists = getaddrinfo(name, NULL, &any, &other) == 0;

		if (exists)
			freeaddrinfo(other);
		snprintf(why, wl, "'%s' has no %s address on the host", name,
			 qtype == 1 ? "IPv4" : "IPv6");
		return exists ? RC_OK : RC_NXDOMAIN;
	}
	if (r != 0) {
		snprintf(why, wl, "cannot resolve '%s': %s", name,
			 r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
		return RC_SERVFAIL;
	}
	for (struct addrinfo *ai = res; ai && a->n < SBX_DNS_MAX_ANSWER; ai = ai->ai_next) {
		const void *src =
		    family == AF_INET
			? (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr
			: (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
		bool dup = false;

		if (ai->ai_family != family)
			continue;
		for (size_t i = 0; i < a->n && !dup; i++)
			dup = memcmp(a->rr[i], src, family == AF_INET ? 4 : 16) == 0;
		if (dup)
			continue;
		memcpy(a->rr[a->n], src, family == AF_INET ? 4 : 16);
		if (a->n == 0)
			inet_ntop(family, src, a->first, sizeof(a->first));
		sbx_proxy_dns_remember(p, name, ai->ai_addr);
		a->n++;
	}
	freeaddrinfo(res);
	return RC_OK;
}

size_t sbx_proxy_dns_reply(struct sbx_dns_query *q, int rcode, const struct sbx_dns_answer *a)
{
	size_t off = q->qend, rl = q->qtype == 1 ? 4 : 16;

	q->buf[2] = (unsigned char)(0x80 | (q->buf[2] & 0x79)); /* QR, opcode, RD */
	q->buf[3] = (unsigned char)(0x80 | rcode);		/* RA */
	put16(q->buf + 6, 0);
	put16(q->buf + 8, 0);
	put16(q->buf + 10, 0);
	for (size_t i = 0; a && i < a->n && off + 12 + rl <= sizeof(q->buf); i++) {
		put16(q->buf + off, 0xc00c); /* the question's name */
		put16(q->buf + off + 2, q->qtype);
		put16(q->buf + off + 4, 1);
		put16(q->buf + off + 6, 0);
		put16(q->buf + off + 8, DNS_TTL);
		put16(q->buf + off + 10, (uint16_t)rl);
		memcpy(q->buf + off + 12, a->rr[i], rl);
		off += 12 + rl;
		put16(q->buf + 6, (uint16_t)(i + 1));
	}
	return off;
}

static const char *qtype_name(uint16_t t, char *buf, size_t len)
{
	static const struct {
		uint16_t t;
		const char *n;
	} names[] = {{1, "A"},	  {28, "AAAA"}, {5, "CNAME"},  {15, "MX"},   {16, "TXT"},
		     {12, "PTR"}, {33, "SRV"},	{65, "HTTPS"}, {255, "ANY"}, {2, "NS"}};

	for (size_t i = 0; i < SBX_ARRAY_SIZE(names); i++)
		if (names[i].t == t)
			return names[i].n;
	snprintf(buf, len, "TYPE%u", t);
	return buf;
}

static void dns_event(struct sbx_proxy *p, const struct sbx_dns_query *q, uint64_t start, char *ts,
		      const char *allow, int rcode, const struct sbx_dns_answer *a, const char *why,
		      size_t out_len)
{
	json_t *ev = json_object();
	char tb[16];
	static const char *const rc[] = {"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP"};
	bool failed = allow && rcode != RC_OK;
	_cleanup_free_ char *reason =
	    allow ? (why[0] ? sbx_xasprintf("allowed by '%s'; %s", allow, why)
			    : sbx_xasprintf("allowed by '%s'", allow))
		  : sbx_xasprintf("'%s' is not in the allowlist", q->name);

	json_object_set_new(ev, "ts", json_string(ts));
	json_object_set_new(ev, "method", json_string("DNS"));
	json_object_set_new(ev, "host", json_string(q->name));
	json_object_set_new(ev, "port", json_null());
	json_object_set_new(ev, "address", a->first[0] ? json_string(a->first) : json_null());
	json_object_set_new(ev, "allowed", json_boolean(allow != NULL));
	json_object_set_new(ev, "result",
			    json_string(!allow	 ? "denied"
					: failed ? "failed"
						 : "ok"));
	json_object_set_new(ev, "reason", json_string(reason));
	json_object_set_new(ev, "status", json_integer(rcode));
	json_object_set_new(ev, "bytes_up", json_integer((json_int_t)q->len));
	json_object_set_new(ev, "bytes_down", json_integer((json_int_t)out_len));
	json_object_set_new(ev, "ms",
			    json_real((double)(int64_t)(sbx_ms_since(start) * 1000) / 1000.0));
	json_object_set_new(ev, "via", json_string("dns"));
	json_object_set_new(ev, "query", json_string(qtype_name(q->qtype, tb, sizeof(tb))));
	json_object_set_new(ev, "rcode", json_string(rcode < 5 ? rc[rcode] : "?"));
	sbx_proxy_dns_event(p, ev, allow != NULL, failed);
}

void sbx_proxy_dns_serve(struct sbx_proxy *p, int fd)
{
	struct sbx_dns_query q = {0};
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	struct sbx_dns_answer a = {0};
	char ts[40], why[256] = "";
	uint64_t start = sbx_now_ns();
	const char *allow = NULL;
	int rcode = RC_OK;
	ssize_t n = recvfrom(fd, q.buf, sizeof(q.buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);

	if (n <= 0)
		return;
	q.len = (size_t)n;
	sbx_rfc3339_now(ts, sizeof(ts));
	if (!sbx_proxy_dns_question(&q)) {
		if (q.len >= 12 && !(q.buf[2] & 0x80)) { /* a query we cannot read */
			q.qend = 12;
			q.buf[4] = q.buf[5] = 0;
			sbx_proxy_dns_reply(&q, RC_FORMERR, NULL);
			sendto(fd, q.buf, 12, MSG_DONTWAIT, (struct sockaddr *)&from, fl);
		}
		return;
	}
	allow = allowed_by(sbx_proxy_allowlist(p), q.name);
	if (!allow && sbx_proxy_is_localhost(q.name))
		allow = "localhost";
	if (!allow)
		rcode = RC_NXDOMAIN;
	else if (q.qtype == 1 || q.qtype == 28)
		rcode = resolve(p, q.name, q.qtype, &a, why, sizeof(why));
	size_t out = sbx_proxy_dns_reply(&q, rcode, &a);

	sendto(fd, q.buf, out, MSG_DONTWAIT, (struct sockaddr *)&from, fl);
	dns_event(p, &q, start, ts, allow, rcode, &a, why, out);
}
