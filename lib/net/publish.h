/* SPDX-License-Identifier: MIT */
/*
 * lib/net/publish.h - published ports: a listener on the host that forwards
 * each connection into the jail's network namespace, to its loopback.
 *
 * The host side listens (loopback by default: 127.0.0.1 and ::1 on the
 * same port); a connection is forwarded only through a socket made in the
 * jail's network namespace (sbx_publish_socket_fn, lib/jail/netsock.c) and
 * connected there to 127.0.0.1:PORT (or [::1]:PORT).  Nothing here gives
 * the jail a way out: the jail never holds a host socket.
 *
 * By default a port is a preview that needs the sandbox's token: the first
 * request of a browser carries ?sbx_token=TOKEN and gets a cookie for this
 * port (sbx_preview_HOSTPORT, a secret of its own) and a redirect to the
 * clean URL; every forwarded request must carry that cookie, which is taken
 * out before the request reaches the jail.  A connection carries one
 * request (Connection: close is added), so every request is checked; a
 * WebSocket upgrade is relayed as is once its request passed.  A request
 * without either gets 401.  ":open" forwards raw TCP without any check.
 */
#ifndef SBX_PUBLISH_H
#define SBX_PUBLISH_H

#include <jansson.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "util.h"

struct sbx_publish_port {
	char addr[INET6_ADDRSTRLEN]; /* "": loopback (127.0.0.1 and ::1) */
	uint16_t host_port;	     /* 0: a free one is chosen */
	uint16_t port;		     /* in the jail, on its loopback */
	bool open;		     /* no token: raw TCP */
};

/* "[ADDR:]HOSTPORT:PORT[:open]" or "PORT[:open]" (ADDR may be [v6]); the
 * error says what is wrong, not the spec (the caller names it). */
int sbx_publish_parse(const char *spec, struct sbx_publish_port *out, struct sbx_err *err);
/* The canonical text of a port ("8080:80", "0:3000", "[::1]:80:80:open"). */
void sbx_publish_format(const struct sbx_publish_port *p, char *buf, size_t len);

/* A new TCP socket (SOCK_CLOEXEC) of family AF_INET or AF_INET6 in the
 * jail's network namespace, or -errno.  Called from several threads. */
typedef int (*sbx_publish_socket_fn)(int family, void *data);

struct sbx_publish;

/*
 * Bind and listen for every port (before the jail starts: a port in use is
 * said before anything runs); chosen host ports are filled in.  The token
 * is made here (128 random bits, hex).
 */
int sbx_publish_listen(struct sbx_publish **pp, const struct sbx_publish_port *ports, size_t n,
		       struct sbx_err *err);
const char *sbx_publish_token(const struct sbx_publish *p);
/*
 * What the record and the run log say: an array of {"spec", "addresses",
 * "host_port", "port", "auth": "token"|"open", "url", "urls"} with, once
 * started, the counts "forwarded", "refused", "failed".
 */
json_t *sbx_publish_json(struct sbx_publish *p);
/* Serve the listeners in threads until sbx_publish_stop(). */
int sbx_publish_start(struct sbx_publish *p, sbx_publish_socket_fn fn, void *data,
		      struct sbx_err *err);
/* Readable while events are queued; the queued "publish" events (a new
 * array: {"host_port", "port", "peer", "result", "reason", ...}). */
int sbx_publish_event_fd(struct sbx_publish *p);
json_t *sbx_publish_take_events(struct sbx_publish *p);
/* Close the listeners and every connection, wait for the threads. */
void sbx_publish_stop(struct sbx_publish *p);
void sbx_publish_free(struct sbx_publish *p);

#endif
