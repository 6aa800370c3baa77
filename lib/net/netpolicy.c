/* SPDX-License-Identifier: MIT */
/* lib/net/netpolicy.c - allowlist parsing and matching, address classes. */
#include "netpolicy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <ifaddrs.h>
#include <string.h>

/* ---- host names ---- */

static bool dns_label_char(unsigned char c)
{
	return isalnum(c) || c == '-' || c == '_';
}

/* A DNS name of labels [A-Za-z0-9_-]{1,63} separated by dots, <= 253. */
static bool valid_dns_name(const char *s)
{
	size_t label = 0, total = strlen(s);

	if (total == 0 || total > 253)
		return false;
	for (const char *p = s; *p; p++) {
		if (*p == '.') {
			if (label == 0)
				return false;
			label = 0;
		} else if (dns_label_char((unsigned char)*p)) {
			if (++label > 63)
				return false;
		} else {
			return false;
		}
	}
	return label > 0;
}

/* Parse an IP literal (no brackets, no port) into ss (port 0). */
static bool parse_ip(const char *s, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	if (inet_pton(AF_INET, s, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		return true;
	}
	if (inet_pton(AF_INET6, s, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		return true;
	}
	return false;
}

char *sbx_netpolicy_norm_host(const char *host, size_t len)
{
	struct sockaddr_storage ss;
	_cleanup_free_ char *h = NULL;

	if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
		host++;
		len -= 2;
		h = sbx_xstrndup(host, len);
		if (!parse_ip(h, &ss) || ss.ss_family != AF_INET6)
			return NULL;
		return steal_pointer(&h);
	}
	if (len == 0 || memchr(host, '\0', len))
		return NULL;
	h = sbx_xstrndup(host, len);
	for (char *p = h; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (parse_ip(h, &ss))
		return steal_pointer(&h);
	if (len > 1 && h[len - 1] == '.')
		h[len - 1] = '\0';
	if (!valid_dns_name(h))
		return NULL;
	return steal_pointer(&h);
}

/* ---- allowlist ---- */

static int parse_port(const char *s, uint16_t *port)
{
	char *end = NULL;
	unsigned long v;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v == 0 || v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

/* Split "host", "host:port", "[v6]", "[v6]:port" or a bare v6 literal. */
static int split_hostport(const char *s, char **host, uint16_t *port)
{
	const char *colon;

	*port = 0;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close)
			return -EINVAL;
		if (close[1] == ':') {
			if (parse_port(close + 2, port) < 0)
				return -EINVAL;
		} else if (close[1]) {
			return -EINVAL;
		}
		*host = sbx_xstrndup(s, (size_t)(close - s) + 1);
		return 0;
	}
	colon = strrchr(s, ':');
	if (colon && strchr(s, ':') != colon) { /* bare IPv6, no port */
		*host = sbx_xstrdup(s);
		return 0;
	}
	if (colon) {
		if (parse_port(colon + 1, port) < 0)
			return -EINVAL;
		*host = sbx_xstrndup(s, (size_t)(colon - s));
		return 0;
	}
	*host = sbx_xstrdup(s);
	return 0;
}

static int parse_entry(const char *text, struct sbx_allow_entry *e, struct sbx_err *err)
{
	_cleanup_free_ char *raw = NULL;
	const char *h;
	char *norm;

	memset(e, 0, sizeof(*e));
	if (split_hostport(text, &raw, &e->port) < 0)
		return sbx_err_set(err, 0,
				   "bad allow entry '%s': expected host[:port], "
				   "*.domain[:port] or an IP literal",
				   text);
	h = raw;
	if (strncmp(h, "*.", 2) == 0) {
		e->wildcard = true;
		h += 2;
	}
	norm = sbx_netpolicy_norm_host(h, strlen(h));
	if (!norm || (raw[0] == '[' && !strchr(norm, ':')))
		goto bad;
	e->host = norm;
	e->is_ip = parse_ip(norm, &e->addr);
	if (e->is_ip && e->wildcard)
		goto bad;
	if (e->wildcard && !strchr(e->host, '.') && strcmp(e->host, "localhost") != 0) {
		free(e->host); /* "*.com" would allow a whole top-level domain */
		e->host = NULL;
		return sbx_err_set(err, 0,
				   "bad allow entry '%s': a wildcard needs a domain of "
				   "at least two labels (*.example.com)",
				   text);
	}
	e->text = sbx_xstrdup(text);
	return 0;
bad:
	free(e->host);
	e->host = NULL;
	return sbx_err_set(err, 0,
			   "bad allow entry '%s': not a valid host name, "
			   "*.domain or IP literal",
			   text);
}

int sbx_netpolicy_check_entry(const char *entry, struct sbx_err *err)
{
	struct sbx_allow_entry e;
	int r = parse_entry(entry, &e, err);

	free(e.host);
	free(e.text);
	return r;
}

void sbx_netpolicy_free(struct sbx_allowlist *al)
{
	for (size_t i = 0; i < al->n; i++) {
		free(al->e[i].host);
		free(al->e[i].text);
	}
	free(al->e);
	al->e = NULL;
	al->n = 0;
}

int sbx_netpolicy_parse(struct sbx_allowlist *al, const struct sbx_strv *entries,
			struct sbx_err *err)
{
	al->e = NULL;
	al->n = 0;
	if (!entries || entries->n == 0)
		return 0;
	al->e = sbx_xcalloc(entries->n, sizeof(*al->e));
	for (size_t i = 0; i < entries->n; i++) {
		int r = parse_entry(entries->v[i], &al->e[al->n], err);

		if (r < 0) {
			sbx_netpolicy_free(al);
			return r;
		}
		al->n++;
	}
	return 0;
}

static bool host_matches(const struct sbx_allow_entry *e, const char *host)
{
	struct sockaddr_storage ss;

	if (e->is_ip)
		return parse_ip(host, &ss) &&
		       sbx_netpolicy_addr_equal((struct sockaddr *)&ss,
						(const struct sockaddr *)&e->addr);
	if (!e->wildcard)
		return strcmp(e->host, host) == 0;
	size_t hl = strlen(host), dl = strlen(e->host);
	/* strictly below: "x.domain", never "domain" or "xdomain" */
	return hl > dl + 1 && host[hl - dl - 1] == '.' && strcmp(host + hl - dl, e->host) == 0;
}

const struct sbx_allow_entry *sbx_netpolicy_match(const struct sbx_allowlist *al, const char *host,
						  uint16_t port, uint16_t default_port)
{
	for (size_t i = 0; i < al->n; i++) {
		const struct sbx_allow_entry *e = &al->e[i];
		uint16_t want = e->port ? e->port : default_port;

		if (want == port && host_matches(e, host))
			return e;
	}
	return NULL;
}

/* ---- addresses ---- */

static enum sbx_addr_class classify_v4(uint32_t a)
{
	uint8_t b0 = (uint8_t)(a >> 24), b1 = (uint8_t)(a >> 16);

	if (b0 == 127)
		return SBX_ADDR_LOOPBACK;
	if (b0 == 169 && b1 == 254)
		return SBX_ADDR_LINKLOCAL;
	if (b0 == 10 || (b0 == 172 && (b1 & 0xf0) == 16) || (b0 == 192 && b1 == 168) ||
	    (b0 == 100 && (b1 & 0xc0) == 64))
		return SBX_ADDR_PRIVATE;
	if (b0 == 0)
		return SBX_ADDR_UNSPECIFIED;
	if ((b0 & 0xf0) == 224)
		return SBX_ADDR_MULTICAST;
	if ((b0 & 0xf0) == 240)
		return SBX_ADDR_RESERVED;
	return SBX_ADDR_PUBLIC;
}

static uint32_t v4_at(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static enum sbx_addr_class classify_v6(const uint8_t *b)
{
	static const uint8_t zero[16], mapped[12] = {[10] = 0xff, [11] = 0xff},
				       nat64[12] = {0x00, 0x64, 0xff, 0x9b};

	if (memcmp(b, zero, 16) == 0)
		return SBX_ADDR_UNSPECIFIED;
	if (memcmp(b, zero, 15) == 0 && b[15] == 1)
		return SBX_ADDR_LOOPBACK;
	if (memcmp(b, mapped, 12) == 0 || memcmp(b, nat64, 12) == 0 || memcmp(b, zero, 12) == 0)
		return classify_v4(v4_at(b + 12)); /* mapped, NAT64, compatible */
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return SBX_ADDR_LINKLOCAL;
	if ((b[0] & 0xfe) == 0xfc || (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0))
		return SBX_ADDR_PRIVATE;
	if (b[0] == 0xff)
		return SBX_ADDR_MULTICAST;
	return SBX_ADDR_PUBLIC;
}

enum sbx_addr_class sbx_netpolicy_classify(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return classify_v4(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	if (sa->sa_family == AF_INET6)
		return classify_v6(((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr);
	return SBX_ADDR_RESERVED;
}

/* v4 bytes of sa, seen through mapped/compatible/NAT64 v6 wrappers. */
static bool v4_of(const struct sockaddr *sa, uint32_t *out)
{
	if (sa->sa_family == AF_INET) {
		*out = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
		return true;
	}
	const uint8_t *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
	static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};

	if (sa->sa_family == AF_INET6 && memcmp(b, mapped, 12) == 0) {
		*out = v4_at(b + 12);
		return true;
	}
	return false;
}

bool sbx_netpolicy_addr_equal(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->sa_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			      &((const struct sockaddr_in6 *)b)->sin6_addr, 16) == 0;
	return false;
}

/* Same host address, also across the v4 / v4-mapped-v6 forms. */
static bool addr_same_host(const struct sockaddr *a, const struct sockaddr *b)
{
	uint32_t x, y;

	if (v4_of(a, &x) && v4_of(b, &y))
		return x == y;
	return sbx_netpolicy_addr_equal(a, b);
}

enum sbx_addr_class sbx_netpolicy_classify_host(const struct sockaddr *sa)
{
	enum sbx_addr_class c = sbx_netpolicy_classify(sa);
	struct ifaddrs *ifa = NULL;

	if (c != SBX_ADDR_PUBLIC)
		return c;
	if (getifaddrs(&ifa) < 0)
		return SBX_ADDR_HOST; /* cannot tell: fail closed */
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		if (i->ifa_addr && addr_same_host(i->ifa_addr, sa)) {
			c = SBX_ADDR_HOST;
			break;
		}
	}
	freeifaddrs(ifa);
	return c;
}

const char *sbx_netpolicy_class_name(enum sbx_addr_class c)
{
	static const char *const names[] = {
	    [SBX_ADDR_PUBLIC] = "public",	    [SBX_ADDR_LOOPBACK] = "loopback",
	    [SBX_ADDR_LINKLOCAL] = "link-local",    [SBX_ADDR_PRIVATE] = "private",
	    [SBX_ADDR_UNSPECIFIED] = "unspecified", [SBX_ADDR_MULTICAST] = "multicast",
	    [SBX_ADDR_RESERVED] = "reserved",	    [SBX_ADDR_HOST] = "a host address",
	};
	return (unsigned)c < SBX_ARRAY_SIZE(names) ? names[c] : "unknown";
}

const char *sbx_netpolicy_addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	const void *src = NULL;

	if (sa->sa_family == AF_INET)
		src = &((const struct sockaddr_in *)sa)->sin_addr;
	else if (sa->sa_family == AF_INET6)
		src = &((const struct sockaddr_in6 *)sa)->sin6_addr;
	if (!src || !inet_ntop(sa->sa_family, src, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

bool sbx_netpolicy_addr_allowed(const struct sbx_allowlist *al, const struct sbx_allow_entry *e,
				const struct sockaddr *sa, uint16_t port, uint16_t default_port,
				char *reason, size_t len)
{
	enum sbx_addr_class c = sbx_netpolicy_classify_host(sa);
	char a[INET6_ADDRSTRLEN];

	if (c == SBX_ADDR_PUBLIC)
		return true;
	if (c == SBX_ADDR_LOOPBACK && e && !e->is_ip && strcmp(e->host, "localhost") == 0)
		return true; /* "localhost[:port]" or "*.localhost" */
	for (size_t i = 0; i < al->n; i++) {
		const struct sbx_allow_entry *x = &al->e[i];

		if (x->is_ip && sbx_netpolicy_addr_equal((const struct sockaddr *)&x->addr, sa) &&
		    (x->port ? x->port : default_port) == port)
			return true;
	}
	snprintf(reason, len, "address %s is %s and no allow entry names it",
		 sbx_netpolicy_addr_str(sa, a, sizeof(a)), sbx_netpolicy_class_name(c));
	return false;
}

int sbx_netpolicy_parse_authority(const char *s, size_t len, uint16_t default_port, char **host,
				  uint16_t *port)
{
	_cleanup_free_ char *a = NULL, *h = NULL;

	*host = NULL;
	if (len == 0 || len > 300 || memchr(s, '@', len))
		return -EINVAL; /* no userinfo in a proxy target */
	a = sbx_xstrndup(s, len);
	if (strlen(a) != len || split_hostport(a, &h, port) < 0)
		return -EINVAL;
	if (a[0] != '[' && strchr(h, ':'))
		return -EINVAL; /* IPv6 literals need brackets in a URI */
	*host = sbx_netpolicy_norm_host(h, strlen(h));
	if (!*host)
		return -EINVAL;
	if (*port == 0)
		*port = default_port;
	return 0;
}
