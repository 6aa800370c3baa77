/* SPDX-License-Identifier: MIT */
/*
 * lib/net/proxy_int.h - internals shared by lib/net/proxy.c (threads, events) and
 * lib/net/proxy_conn.c (one client connection).  Not a public interface.
 */
#ifndef SBX_PROXY_INT_H
#define SBX_PROXY_INT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "netpolicy.h"
#include "proxy.h"

struct proxy_conn {
	struct sbx_proxy *proxy;
	int client;   /* nonblocking */
	int upstream; /* nonblocking, -1 until connected */
	uint64_t start_ns;
	char ts[40];
	/* what the event reports */
	char method[16];
	char *host; /* normalised, NULL before parsing */
	uint16_t port;
	char address[INET6_ADDRSTRLEN];
	bool allowed;
	bool failed; /* allowed, but it could not be resolved or connected */
	bool is_connect;
	int status; /* sent to the client (upstream's for plain HTTP) */
	char reason[256];
	uint64_t bytes_up;
	uint64_t bytes_down;
	/* the proxy's list of connections being served (under its lock) */
	struct proxy_conn *prev, *next;
	uint64_t last_ns; /* last byte either way (atomic) */
	bool requested;	  /* a whole request head arrived (atomic) */
	bool evicted;	  /* shut down to make room (under the lock) */
};

/* Idle limits: a connection that has sent no whole request head within
 * PROXY_HEAD_TIMEOUT_MS is closed, and so is one that moved no byte either
 * way for PROXY_IDLE_MS.  With PROXY_MAX_CONN being served, a new one makes
 * room by closing the one that has waited longest for its request head,
 * else the relay idle the longest if that one has been idle
 * PROXY_EVICT_IDLE_MS or more; otherwise the new one gets a 503. */
#define PROXY_MAX_CONN	      256
#define PROXY_HEAD_TIMEOUT_MS 10000
#define PROXY_IDLE_MS	      (600 * 1000)
#define PROXY_EVICT_IDLE_MS   1000

/* proxy.c */
void sbx_proxy_count(struct proxy_conn *c, bool up, uint64_t n);
/* A byte arrived or left: the connection is not idle. */
void sbx_proxy_touch(struct proxy_conn *c);
int sbx_proxy_conn_stop_fd(const struct proxy_conn *c);
const struct sbx_allowlist *sbx_proxy_conn_allowlist(const struct proxy_conn *c);

/* proxy_conn.c */
void sbx_proxy_serve_conn(struct proxy_conn *c);
/* The length of the request head in buf[0..total) up to and including its
 * blank line; 0 while it has not all arrived. */
size_t sbx_proxy_head_end(const char *buf, size_t total);
/*
 * Parse the request head buf[0..head_len) (buf[head_len] must be writable;
 * buf is modified in place): c->method, is_connect, host (malloc'ed) and
 * port; for plain HTTP *head_out is the origin-form head to send upstream
 * (malloc'ed).  0, or the status to refuse with (400) and c->reason.
 */
int sbx_proxy_parse_request(struct proxy_conn *c, char *buf, size_t head_len, char **head_out);
/* Send the proxy's own reply: status line, Server and X-Sbx-Deny headers. */
void sbx_proxy_reply(struct proxy_conn *c, int status, const char *text, const char *reason);
/* IP literal host + port into a sockaddr; false if host is not a literal. */
bool sbx_proxy_sockaddr(const char *host, uint16_t port, struct sockaddr_storage *ss,
			socklen_t *len);

#endif
