/* SPDX-License-Identifier: MIT */
/*
 * lib/net/netpolicy.h - the network allowlist that the HTTP proxy of
 * `--net proxy` enforces (proxy.h).
 *
 * Allowlist entries (`[network] allow`, `--allow`):
 *
 *   host            that name, on the default port of the request: 443 for
 *                   CONNECT, 80 for plain HTTP
 *   host:port       that name on that port only (any method)
 *   *.domain[:port] every name strictly below domain (a.domain, b.a.domain),
 *                   never the apex "domain" itself
 *   1.2.3.4[:port]  an IPv4 literal
 *   [2001:db8::1][:port]  an IPv6 literal (brackets required with a port,
 *                   optional without: "2001:db8::1")
 *
 * Names compare case-insensitively, a trailing dot is ignored ("Example.COM."
 * is "example.com"), IP literals compare as addresses (so "::ffff:1.2.3.4"
 * is not "1.2.3.4": write the form the client uses).
 *
 * Destinations.  The proxy resolves the name itself (getaddrinfo in the
 * supervisor, outside the jail) and connects to exactly the address it
 * checked, so a DNS answer cannot change between check and connect.  A
 * resolved address is refused when it is "restricted":
 *
 *   loopback     127.0.0.0/8, ::1
 *   link-local   169.254.0.0/16 (incl. the 169.254.169.254 metadata
 *                service), fe80::/10
 *   private      10/8, 172.16/12, 192.168/16, 100.64/10 (CGNAT),
 *                fc00::/7 (ULA), fec0::/10 (old site-local)
 *   unspecified  0.0.0.0/8, ::
 *   multicast    224/4, ff00::/8
 *   reserved     240/4 (incl. 255.255.255.255 broadcast)
 *   host         any address configured on a host interface (getifaddrs,
 *                read for every connection)
 *
 * and the same classes seen through IPv6 wrappers: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::/96).
 *
 * A restricted address is allowed only when an entry names it explicitly:
 *   - an IP-literal entry equal to that address whose port matches
 *     (entry "127.0.0.1:8080" lets any allowed request reach 127.0.0.1
 *     port 8080; entry "10.0.0.5" lets it reach 10.0.0.5 on the default
 *     port), or
 *   - the request matched a "localhost[:port]" entry and the address is
 *     loopback.  "localhost" (and "*.localhost") is never sent to DNS: it
 *     resolves to 127.0.0.1 and ::1.
 * A name entry ("example.com", "*.corp") never unlocks a restricted
 * address, even when that name resolves there.
 */
#ifndef SBX_NETPOLICY_H
#define SBX_NETPOLICY_H

#include <jansson.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "util.h"

#define SBX_PROXY_DEFAULT_PORT 3128

/* ---- allowlist ---- */

struct sbx_allow_entry {
	char *text;		      /* the entry as given, for messages */
	char *host;		      /* lowercase, no trailing dot; for "*.d" this is "d" */
	bool wildcard;		      /* "*.domain": subdomains only */
	bool is_ip;		      /* host is an IP literal (addr valid) */
	struct sockaddr_storage addr; /* the literal, port 0 */
	uint16_t port;		      /* 0: the request's default port */
};

struct sbx_allowlist {
	struct sbx_allow_entry *e;
	size_t n;
};

/* Parse every entry (errors name the entry); the list is empty on error. */
int sbx_netpolicy_parse(struct sbx_allowlist *al, const struct sbx_strv *entries,
			struct sbx_err *err);
/* Validate a single entry (profile/CLI checking). */
int sbx_netpolicy_check_entry(const char *entry, struct sbx_err *err);
void sbx_netpolicy_free(struct sbx_allowlist *al);

/*
 * Normalise a request host: lowercase, strip one trailing dot and IPv6
 * brackets.  Returns a malloc'd string or NULL when the host is not a
 * valid DNS name or IP literal.
 */
char *sbx_netpolicy_norm_host(const char *host, size_t len);

/*
 * Parse a request authority "host[:port]" / "[v6][:port]" (no userinfo):
 * *host gets the normalised host (malloc'd), *port the port or
 * default_port.  0 or -EINVAL.
 */
int sbx_netpolicy_parse_authority(const char *s, size_t len, uint16_t default_port, char **host,
				  uint16_t *port);

/*
 * The first entry allowing host:port (host normalised), or NULL.
 * default_port is 443 for CONNECT and 80 for plain HTTP; an entry without
 * a port matches only port == default_port.
 */
const struct sbx_allow_entry *sbx_netpolicy_match(const struct sbx_allowlist *al, const char *host,
						  uint16_t port, uint16_t default_port);

/* ---- addresses ---- */

enum sbx_addr_class {
	SBX_ADDR_PUBLIC = 0,
	SBX_ADDR_LOOPBACK,
	SBX_ADDR_LINKLOCAL,
	SBX_ADDR_PRIVATE,
	SBX_ADDR_UNSPECIFIED,
	SBX_ADDR_MULTICAST,
	SBX_ADDR_RESERVED,
	SBX_ADDR_HOST, /* one of the host's own addresses */
};

/* Class of an address by range only (never SBX_ADDR_HOST). */
enum sbx_addr_class sbx_netpolicy_classify(const struct sockaddr *sa);
/* Range class, or SBX_ADDR_HOST if a host interface has that address. */
enum sbx_addr_class sbx_netpolicy_classify_host(const struct sockaddr *sa);
const char *sbx_netpolicy_class_name(enum sbx_addr_class c);
/* Same address (family + bytes, port ignored)? */
bool sbx_netpolicy_addr_equal(const struct sockaddr *a, const struct sockaddr *b);
/* Address as text without port ("1.2.3.4", "::1"). */
const char *sbx_netpolicy_addr_str(const struct sockaddr *sa, char *buf, size_t len);

/*
 * May a request that matched entry `e` (for host:port) connect to `sa`?
 * Returns true, or false with a short reason in buf.
 */
bool sbx_netpolicy_addr_allowed(const struct sbx_allowlist *al, const struct sbx_allow_entry *e,
				const struct sockaddr *sa, uint16_t port, uint16_t default_port,
				char *reason, size_t len);

#endif
