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
	bool captured;		   /* taken by the jail's capture rules, not sent to the proxy */
	bool raw;		   /* the client does not speak HTTP to us: no proxy replies */
	bool tls;		   /* TLS terminated here (an injection host) */
	char injected[128];	   /* names of the secrets put into the request, ", " */
	struct ssl_st *client_tls; /* the jail's side once TLS is terminated */
	int status;		   /* sent to the client (upstream's for plain HTTP) */
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

struct proxy_request {
	char *buf;	 /* the bytes read so far */
	size_t head_len; /* up to and including the blank line */
	size_t total;
	const char *target; /* NUL-terminated inside buf */
	const char *version;
	char *lines; /* header lines (NUL-terminated, each ends "\n") */
};

#define PROXY_HEAD_MAX (64 * 1024)

/* proxy.c */
/* The secrets injected into requests to host (NULL-terminated array of
 * borrowed pointers in out, at most max - 1); how many. */
size_t sbx_proxy_injections(const struct proxy_conn *c, const char *host,
			    const struct sbx_proxy_inject **out, size_t max);
struct sbx_tls_ca *sbx_proxy_conn_ca(const struct proxy_conn *c);
/* Remember / look up which name a DNS answer gave an address for. */
void sbx_proxy_dns_remember(struct sbx_proxy *p, const char *name, const struct sockaddr *sa);
char *sbx_proxy_dns_name_of(struct proxy_conn *c, const struct sockaddr *sa);
void sbx_proxy_count(struct proxy_conn *c, bool up, uint64_t n);
/* A byte arrived or left: the connection is not idle. */
void sbx_proxy_touch(struct proxy_conn *c);
int sbx_proxy_conn_stop_fd(const struct proxy_conn *c);
const struct sbx_allowlist *sbx_proxy_conn_allowlist(const struct proxy_conn *c);

/* proxy_conn.c */
/* poll fd for ev with the stop fd: 1 ready, 0 timeout, -ECANCELED, -errno */
int sbx_proxy_wait(struct proxy_conn *c, int fd, short ev, int timeout_ms);
int sbx_proxy_send_all(struct proxy_conn *c, int fd, const char *buf, size_t len);
/* A proxy reply with the reason formatted into c->reason. */
void sbx_proxy_deny(struct proxy_conn *c, int status, const char *text, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Read a request head from the client: 0; -1 nothing to answer; -2 too big. */
int sbx_proxy_read_head(struct proxy_conn *c, struct proxy_request *rq);
/* Split the head in place (method, target, version, lines): 0 or -1. */
int sbx_proxy_parse_head(struct proxy_conn *c, struct proxy_request *rq);
/* Next header line in *cur: 1 with name/value, 0 at the end, -1 bad. */
int sbx_proxy_next_header(char **cur, char **name, char **value);
bool sbx_proxy_hop_by_hop(const char *name);
/* The origin-form head for upstream: Host from c->host:port (defport
 * omitted), hop-by-hop headers dropped, Connection: close; NULL if bad. */
char *sbx_proxy_rewrite_head(struct proxy_conn *c, struct proxy_request *rq, const char *path,
			     uint16_t defport);
bool sbx_proxy_is_localhost(const char *h);
int sbx_proxy_connect_to(struct proxy_conn *c, const struct sockaddr_storage *ss);
/* Match c->host:port (defport: the protocol's) and connect; false if refused. */
bool sbx_proxy_open_named(struct proxy_conn *c, uint16_t defport);
/* Resolve c->host, check each address against entry e, connect (c->upstream). */
void sbx_proxy_open_upstream(struct proxy_conn *c, const struct sbx_allow_entry *e);
void sbx_proxy_relay(struct proxy_conn *c);
/* A loopback client's send buffer fixed for bulk transfers (proxy_conn.c). */
void sbx_proxy_client_sndbuf(int fd);
/* A whole request head is in rq (rq->buf is the caller's): decide, relay. */
void sbx_proxy_serve_request(struct proxy_conn *c, struct proxy_request *rq);

/* proxy_capture.c: a connection the capture rules redirected to us. */
bool sbx_proxy_captured(struct proxy_conn *c, struct sockaddr_storage *dst);
void sbx_proxy_serve_captured(struct proxy_conn *c, const struct sockaddr_storage *dst);

/* proxy_tls.c: TLS terminated for an injection host; c->upstream is
 * connected, the client's ClientHello is unread. */
void sbx_proxy_serve_tls(struct proxy_conn *c);
/* Send to the client over c->client_tls: 0 or -1. */
int sbx_proxy_tls_send(struct proxy_conn *c, const char *buf, size_t len);

/* Count and queue a DNS event (its reference is taken). */
void sbx_proxy_dns_event(struct sbx_proxy *p, json_t *ev, bool allowed, bool failed);
const struct sbx_allowlist *sbx_proxy_allowlist(const struct sbx_proxy *p);

/* proxy_dns.c: answer one DNS query on fd (a UDP socket). */
void sbx_proxy_dns_serve(struct sbx_proxy *p, int fd);

/* A query as it came from the jail (untrusted: tests/fuzz/fuzz_capture.c). */
#define SBX_DNS_MAX	   1232
#define SBX_DNS_MAX_ANSWER 8
struct sbx_dns_query {
	unsigned char buf[SBX_DNS_MAX];
	size_t len, qend; /* what arrived; the end of the question */
	char name[256];
	uint16_t qtype;
};
struct sbx_dns_answer {
	unsigned char rr[SBX_DNS_MAX_ANSWER][16]; /* 4 bytes each for A, 16 for AAAA */
	size_t n;
	char first[INET6_ADDRSTRLEN];
};
/* Its one question: name (lowercase, dotted, no empty label) and type;
 * false if malformed. */
bool sbx_proxy_dns_question(struct sbx_dns_query *q);
/* The response in q->buf: the question kept, a's records appended (none
 * when a is NULL), rcode set; its length, at most SBX_DNS_MAX. */
size_t sbx_proxy_dns_reply(struct sbx_dns_query *q, int rcode, const struct sbx_dns_answer *a);

/* proxy_capture.c: the server name of a TLS ClientHello in the first
 * record of b[0..n) (untrusted: the jail's first bytes), normalised and
 * malloc'd, or NULL. */
char *sbx_proxy_client_hello_sni(const unsigned char *b, size_t n);
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
