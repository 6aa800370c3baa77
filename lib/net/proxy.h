/* SPDX-License-Identifier: MIT */
/*
 * lib/net/proxy.h - the allowlist proxy of `--net proxy` (and `sbx proxy`):
 * an HTTP and CONNECT proxy on a listener inside the jail's network
 * namespace, run by threads of the supervisor, enforcing netpolicy.h's
 * allowlist on the addresses it resolved itself.
 */
#ifndef SBX_PROXY_H
#define SBX_PROXY_H

#include <jansson.h>
#include <stdint.h>

#include "netpolicy.h"
#include "util.h"

/*
 * One event per client connection, when it ends:
 *   {"ts": RFC3339 start, "method": "CONNECT"|"GET"|..., "host": "x"|null,
 *    "port": N|null, "address": "1.2.3.4"|null, "allowed": bool,
 *    "reason": "...", "status": 200|403|400|502|..., "bytes_up": N,
 *    "bytes_down": N, "ms": duration, "via": "proxy"|"capture"|"dns",
 *    "tls": "terminated" (only then), "injected": ["NAME", ...] (only then)}
 * bytes_up counts bytes from the client forwarded upstream (including the
 * rewritten request head for plain HTTP), bytes_down bytes from upstream
 * forwarded to the client (excluding the proxy's own replies).
 * The callback gets a borrowed reference (json_incref to keep it), is
 * called from a proxy thread, never concurrently with itself.
 */
typedef void (*sbx_proxy_event_fn)(json_t *event, void *data);

struct sbx_proxy;
struct sbx_tls_ca;

/*
 * A secret the proxy puts into requests (credential injection): in the
 * request headers of HTTPS requests to one of `hosts` (names, "*.domain"),
 * every occurrence of `placeholder` becomes `value`; in the response
 * headers sent back, every occurrence of `value` becomes `placeholder`.
 * Everything is borrowed and must outlive the proxy.
 */
struct sbx_proxy_inject {
	const char *name;
	const char *value;
	size_t len;
	const char *placeholder;
	const struct sbx_strv *hosts;
};

struct sbx_proxy_opts {
	const int *listen_fds; /* TCP listeners (ownership passes, even on failure) */
	size_t n_listen;
	const int *dns_fds; /* UDP sockets answered as DNS (ownership passes) */
	size_t n_dns;
	const struct sbx_strv *allow; /* copied */
	const struct sbx_proxy_inject *inject;
	size_t n_inject;
	struct sbx_tls_ca *ca; /* for TLS to injection hosts; borrowed */
	sbx_proxy_event_fn cb;
	void *data;
};

struct sbx_proxy_stats {
	uint64_t connections; /* accepted */
	uint64_t allowed;     /* events with allowed = true that got through (result ok) */
	uint64_t failed;      /* allowed, but not resolved or not connected (result failed) */
	uint64_t denied;      /* events with allowed = false */
	uint64_t bytes_up;
	uint64_t bytes_down;
	uint64_t active;   /* connections being served now */
	uint64_t idle;	   /* ended without a whole request (no event) */
	uint64_t evicted;  /* of those with or without one: closed, idle, to
			    * make room for a new one */
	uint64_t refused;  /* answered 503: every connection busy (no event) */
	uint64_t captured; /* events of connections taken by the capture rules */
	uint64_t dns;	   /* DNS queries answered (each an event) */
};

/*
 * Serve listen_fd (a listening TCP socket; ownership passes to the proxy,
 * even on failure) in background threads until sbx_proxy_stop().  `allow`
 * is copied.  cb may be NULL: events are then queued, and
 * sbx_proxy_take_events() returns them (poll sbx_proxy_event_fd() for
 * readability to know when some are pending).
 */
int sbx_proxy_start(struct sbx_proxy **p, int listen_fd, const struct sbx_strv *allow,
		    sbx_proxy_event_fn cb, void *data, struct sbx_err *err);
/*
 * The same with every option.  A connection accepted on a listener whose
 * original destination (SO_ORIGINAL_DST) is not the listener itself was
 * redirected by the jail's capture rules: its destination is taken from
 * the TLS ClientHello's server name, the HTTP Host, or the address itself
 * (proxy_capture.c).  Each UDP socket answers DNS queries: names the
 * allowlist names resolve (on the host), others get NXDOMAIN; every query
 * is an event with method "DNS".
 */
int sbx_proxy_start_opts(struct sbx_proxy **p, const struct sbx_proxy_opts *o, struct sbx_err *err);
/*
 * Stop accepting, close every connection (each still gets its event) and
 * wait for every thread; idempotent.  Stats and queued events stay
 * readable until sbx_proxy_free() (which stops first if needed).
 */
void sbx_proxy_stop(struct sbx_proxy *p);
void sbx_proxy_free(struct sbx_proxy *p);
void sbx_proxy_get_stats(struct sbx_proxy *p, struct sbx_proxy_stats *st);
/* How many connections a proxy serves at once (more make room or get 503). */
int sbx_proxy_max_connections(void);
/* An fd readable while queued events are pending (cb == NULL mode). */
int sbx_proxy_event_fd(struct sbx_proxy *p);
/* Take the queued events (a new JSON array, possibly empty). */
json_t *sbx_proxy_take_events(struct sbx_proxy *p);

/*
 * For a run (lib/run/run_extras.c) with cb == NULL: emit every queued event as a "net" event
 * of the run log (lib/util/log.h; sbx_log_event replaces "ts" by the time of
 * logging, the end of the connection).  Returns how many.  Call it when
 * sbx_proxy_event_fd() is readable, and once after sbx_proxy_stop() for
 * the connections that the stop cut.
 */
struct sbx_log;
size_t sbx_proxy_drain(struct sbx_proxy *p, struct sbx_log *log);

/*
 * Make a listening TCP socket on host:port ("127.0.0.1:3128", port 0 picks
 * one); used by `sbx proxy` and, inside the jail's netns, by `sbx run`.
 * Returns the fd (O_CLOEXEC) or -errno; *port_out gets the bound port.
 */
int sbx_proxy_listen(const char *hostport, uint16_t *port_out, struct sbx_err *err);

/*
 * Environment for the jail, "NAME=VALUE" strings for a proxy at
 * 127.0.0.1:port: http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy
 * ALL_PROXY no_proxy NO_PROXY npm_config_proxy npm_config_https_proxy
 * YARN_HTTP_PROXY YARN_HTTPS_PROXY PIP_PROXY.
 */
void sbx_proxy_env(uint16_t port, struct sbx_strv *env);

#endif
