/* SPDX-License-Identifier: MIT */
/*
 * lib/net/publish.c - published ports (publish.h): the host listeners, the
 * preview token and its cookie, one thread per connection relaying it to
 * a socket made in the jail's network namespace.
 */
#include "publish.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define PUB_MAX_CONN	    128
#define PUB_HEAD_MAX	    (32 * 1024)
#define PUB_HEAD_TIMEOUT_MS 10000
#define PUB_CONNECT_MS	    3000

struct pub_port {
	struct sbx_publish_port spec;
	int fds[2];
	char addrs[2][INET6_ADDRSTRLEN];
	size_t nfds;
	char cookie_name[32];
	char cookie[33]; /* this port's own secret: what its cookie holds */
	uint64_t forwarded, refused, failed;
};

struct sbx_publish {
	struct pub_port *ports;
	size_t n;
	char token[33];
	int stop_fd;  /* eventfd: written once by stop */
	int event_fd; /* eventfd: events are queued */
	pthread_mutex_t lock;
	pthread_cond_t idle;
	json_t *events;
	size_t active;
	pthread_t *threads; /* one accept thread per listener */
	size_t n_threads;
	bool started, stopped;
	sbx_publish_socket_fn sock_fn;
	void *sock_data;
};

struct pub_listener {
	struct sbx_publish *p;
	struct pub_port *port;
	int fd;
};

struct pub_conn {
	struct sbx_publish *p;
	struct pub_port *port;
	int client, jail;
	char peer[INET6_ADDRSTRLEN + 8];
	uint64_t t0;
	uint64_t bytes_in, bytes_out;
	char method[16];
	char path[256];
};

/* ---- parsing ---- */

static int parse_port(const char *s, size_t len, bool zero_ok, uint16_t *out)
{
	char buf[8];
	uint64_t v;

	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)buf[i]))
			return -1;
	if (sbx_parse_u64(buf, &v, NULL) < 0 || v > 65535 || (v == 0 && !zero_ok))
		return -1;
	*out = (uint16_t)v;
	return 0;
}

int sbx_publish_parse(const char *spec, struct sbx_publish_port *out, struct sbx_err *err)
{
	_cleanup_free_ char *s = sbx_xstrdup(spec);
	size_t n = strlen(s);
	char *rest = s, *colon;
	const char *parts[3];
	size_t np = 0;

	memset(out, 0, sizeof(*out));
	if (n > 5 && strcmp(s + n - 5, ":open") == 0) {
		out->open = true;
		s[n - 5] = '\0';
	}
	if (rest[0] == '[') {
		char *rb = strchr(rest, ']');
		struct in6_addr a6;

		if (!rb || rb[1] != ':')
			goto bad;
		*rb = '\0';
		if (inet_pton(AF_INET6, rest + 1, &a6) != 1)
			return sbx_err_set(err, 0, "'%s' is not an IPv6 address", rest + 1);
		snprintf(out->addr, sizeof(out->addr), "%s", rest + 1);
		rest = rb + 2;
	}
	while (np < 3) {
		parts[np++] = rest;
		colon = strchr(rest, ':');
		if (!colon)
			break;
		*colon = '\0';
		rest = colon + 1;
	}
	if (strchr(rest, ':') && np == 3)
		goto bad;
	if (np == 3) {
		struct in_addr a4;

		if (out->addr[0] || inet_pton(AF_INET, parts[0], &a4) != 1)
			return sbx_err_set(err, 0,
					   "'%s' is not an IP address (an IPv6 one goes in "
					   "brackets: [::1]:8080:80)",
					   parts[0]);
		snprintf(out->addr, sizeof(out->addr), "%s", parts[0]);
		parts[0] = parts[1];
		parts[1] = parts[2];
		np = 2;
	}
	if (out->addr[0] && np != 2)
		goto bad;
	if (np == 1) {
		if (parse_port(parts[0], strlen(parts[0]), false, &out->port) < 0)
			goto badport;
		return 0;
	}
	if (parse_port(parts[0], strlen(parts[0]), true, &out->host_port) < 0 ||
	    parse_port(parts[1], strlen(parts[1]), false, &out->port) < 0)
		goto badport;
	return 0;
badport:
	return sbx_err_set(err, 0, "a port must be 1..65535 (the host port may be 0: a free one)");
bad:
	return sbx_err_set(err, 0,
			   "expected PORT, HOSTPORT:PORT or ADDR:HOSTPORT:PORT, each optionally "
			   "followed by ':open'");
}

void sbx_publish_format(const struct sbx_publish_port *p, char *buf, size_t len)
{
	const char *open = p->open ? ":open" : "";

	if (!p->addr[0])
		snprintf(buf, len, "%u:%u%s", p->host_port, p->port, open);
	else if (strchr(p->addr, ':'))
		snprintf(buf, len, "[%s]:%u:%u%s", p->addr, p->host_port, p->port, open);
	else
		snprintf(buf, len, "%s:%u:%u%s", p->addr, p->host_port, p->port, open);
}

/* ---- listening ---- */

static int random_hex(char *out, size_t bytes)
{
	unsigned char b[32];

	if (bytes > sizeof(b) || getrandom(b, bytes, 0) != (ssize_t)bytes)
		return -1;
	sbx_hex_encode(b, bytes, out);
	return 0;
}

static int bind_one(const char *addr, uint16_t port, uint16_t *bound, struct sbx_err *err)
{
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	bool v6 = strchr(addr, ':') != NULL;
	int one = 1, fd, e;

	if (v6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		inet_pton(AF_INET6, addr, &s6->sin6_addr);
		sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		inet_pton(AF_INET, addr, &s4->sin_addr);
		sl = sizeof(*s4);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (v6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 64) < 0) {
		e = errno;
		close(fd);
		if (err)
			sbx_err_set(err, e, "cannot listen on %s%s%s:%u", v6 ? "[" : "", addr,
				    v6 ? "]" : "", port);
		return -e;
	}
	sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	*bound = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						: ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

/* Loopback: 127.0.0.1 and ::1 on one port (::1 may be missing: no IPv6). */
static int listen_loopback(struct pub_port *pp, struct sbx_err *err)
{
	for (int tries = 0; tries < 20; tries++) {
		uint16_t port = 0, port6 = 0;
		int fd4 = bind_one("127.0.0.1", pp->spec.host_port, &port, err), fd6;

		if (fd4 < 0)
			return fd4;
		fd6 = bind_one("::1", port, &port6, NULL);
		if (fd6 == -EADDRINUSE && pp->spec.host_port == 0) {
			close(fd4); /* ::1 has it: another free port */
			continue;
		}
		if (fd6 < 0 && fd6 != -EADDRNOTAVAIL && fd6 != -EAFNOSUPPORT) {
			close(fd4);
			return sbx_err_set(err, -fd6, "cannot listen on [::1]:%u", port);
		}
		pp->spec.host_port = port;
		pp->fds[pp->nfds] = fd4;
		snprintf(pp->addrs[pp->nfds++], INET6_ADDRSTRLEN, "127.0.0.1");
		if (fd6 >= 0) {
			pp->fds[pp->nfds] = fd6;
			snprintf(pp->addrs[pp->nfds++], INET6_ADDRSTRLEN, "::1");
		}
		return 0;
	}
	return sbx_err_set(err, EADDRINUSE, "no free port on both 127.0.0.1 and ::1");
}

int sbx_publish_listen(struct sbx_publish **pp, const struct sbx_publish_port *ports, size_t n,
		       struct sbx_err *err)
{
	struct sbx_publish *p = sbx_xcalloc(1, sizeof(*p));
	int r = 0;

	*pp = NULL;
	p->ports = sbx_xcalloc(n ? n : 1, sizeof(*p->ports));
	p->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	p->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->idle, NULL);
	p->events = json_array();
	if (p->stop_fd < 0 || p->event_fd < 0 || random_hex(p->token, 16) < 0)
		r = sbx_err_set(err, errno, "cannot set up the published ports");
	for (size_t i = 0; r == 0 && i < n; i++) {
		struct pub_port *q = &p->ports[p->n++];
		char spec[96];

		q->spec = ports[i];
		q->fds[0] = q->fds[1] = -1;
		sbx_publish_format(&ports[i], spec, sizeof(spec));
		for (size_t k = 0; k < i; k++)
			if (ports[k].host_port && ports[k].host_port == ports[i].host_port &&
			    !strcmp(ports[k].addr, ports[i].addr))
				r = sbx_err_set(err, 0,
						"publish '%s': host port %u is published twice",
						spec, ports[i].host_port);
		if (r < 0)
			break;
		if (!q->spec.addr[0]) {
			r = listen_loopback(q, err);
		} else {
			uint16_t port = 0;
			int fd = bind_one(q->spec.addr, q->spec.host_port, &port, err);

			if (fd < 0) {
				r = fd;
			} else {
				q->spec.host_port = port;
				q->fds[q->nfds] = fd;
				memcpy(q->addrs[q->nfds++], q->spec.addr, sizeof(q->spec.addr));
			}
		}
		if (r < 0) {
			if (err->errnum == EADDRINUSE)
				sbx_err_wrap(err,
					     "publish '%s': the host port is in use (pick another, "
					     "or publish %u alone for a free one)",
					     spec, q->spec.port);
			else
				sbx_err_wrap(err, "publish '%s'", spec);
			break;
		}
		snprintf(q->cookie_name, sizeof(q->cookie_name), "sbx_preview_%u",
			 q->spec.host_port);
		if (random_hex(q->cookie, 16) < 0)
			r = sbx_err_set(err, errno, "cannot make a preview cookie");
	}
	if (r < 0) {
		sbx_publish_free(p);
		return r;
	}
	*pp = p;
	return 0;
}

const char *sbx_publish_token(const struct sbx_publish *p)
{
	return p->token;
}

/* The host a browser on this machine uses for the listener's address. */
static void url_of(const struct sbx_publish *p, const struct pub_port *q, const char *addr,
		   char *buf, size_t len)
{
	const char *host = addr;
	bool v6 = strchr(addr, ':') != NULL;

	if (!strcmp(addr, "0.0.0.0") || !strcmp(addr, "::")) {
		host = "127.0.0.1";
		v6 = false;
	}
	snprintf(buf, len, "http://%s%s%s:%u/%s%s", v6 ? "[" : "", host, v6 ? "]" : "",
		 q->spec.host_port,
		 q->spec.open ? "" : "?sbx_token=", q->spec.open ? "" : p->token);
}

json_t *sbx_publish_json(struct sbx_publish *p)
{
	json_t *arr = json_array();

	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n; i++) {
		struct pub_port *q = &p->ports[i];
		json_t *addrs = json_array(), *urls = json_array();
		char spec[96], url[160];

		for (size_t k = 0; k < q->nfds; k++) {
			json_array_append_new(addrs, json_string(q->addrs[k]));
			url_of(p, q, q->addrs[k], url, sizeof(url));
			json_array_append_new(urls, json_string(url));
		}
		sbx_publish_format(&q->spec, spec, sizeof(spec));
		url_of(p, q, q->nfds ? q->addrs[0] : "127.0.0.1", url, sizeof(url));
		json_array_append_new(
		    arr,
		    json_pack("{s:s, s:o, s:i, s:i, s:s, s:s, s:o, s:I, s:I, s:I}", "spec", spec,
			      "addresses", addrs, "host_port", q->spec.host_port, "port",
			      q->spec.port, "auth", q->spec.open ? "open" : "token", "url", url,
			      "urls", urls, "forwarded", (json_int_t)q->forwarded, "refused",
			      (json_int_t)q->refused, "failed", (json_int_t)q->failed));
	}
	pthread_mutex_unlock(&p->lock);
	return arr;
}

/* ---- events ---- */

static void conn_event(struct pub_conn *c, const char *result, const char *reason)
{
	struct sbx_publish *p = c->p;
	uint64_t one = 1;
	json_t *ev =
	    json_pack("{s:i, s:i, s:s, s:s, s:s*, s:s*, s:s*, s:I, s:I, s:f}", "host_port",
		      c->port->spec.host_port, "port", c->port->spec.port, "peer", c->peer,
		      "result", result, "reason", reason, "method", c->method[0] ? c->method : NULL,
		      "path", c->path[0] ? c->path : NULL, "bytes_in", (json_int_t)c->bytes_in,
		      "bytes_out", (json_int_t)c->bytes_out, "ms", sbx_ms_since(c->t0));

	pthread_mutex_lock(&p->lock);
	if (!strcmp(result, "refused"))
		c->port->refused++;
	else if (!strcmp(result, "failed"))
		c->port->failed++;
	else
		c->port->forwarded++;
	if (ev)
		json_array_append_new(p->events, ev);
	pthread_mutex_unlock(&p->lock);
	(void)!write(p->event_fd, &one, sizeof(one));
}

int sbx_publish_event_fd(struct sbx_publish *p)
{
	return p->event_fd;
}

json_t *sbx_publish_take_events(struct sbx_publish *p)
{
	uint64_t v;
	json_t *out;

	(void)!read(p->event_fd, &v, sizeof(v));
	pthread_mutex_lock(&p->lock);
	out = p->events;
	p->events = json_array();
	pthread_mutex_unlock(&p->lock);
	return out;
}

/* ---- one connection ---- */

/* Wait for ev on fd or the stop: 1 ready, 0 timeout, -1 stopped. */
static int wait_fd(struct pub_conn *c, int fd, short ev, int timeout_ms)
{
	struct pollfd q[2] = {{.fd = fd, .events = ev}, {.fd = c->p->stop_fd, .events = POLLIN}};
	int n;

	do
		n = poll(q, 2, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n < 0 || (q[1].revents & POLLIN))
		return -1;
	return n;
}

static int send_all(struct pub_conn *c, int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t w = send(fd, buf, len, MSG_NOSIGNAL);

		if (w < 0 && errno == EAGAIN) {
			if (wait_fd(c, fd, POLLOUT, PUB_CONNECT_MS) <= 0)
				return -1;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

static void reply(struct pub_conn *c, const char *status, const char *extra, const char *body)
{
	_cleanup_free_ char *msg = sbx_xasprintf(
	    "HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n"
	    "Cache-Control: no-store\r\nConnection: close\r\nServer: sbx\r\n%s\r\n%s",
	    status, strlen(body), extra ? extra : "", body);

	(void)send_all(c, c->client, msg, strlen(msg));
	shutdown(c->client, SHUT_WR);
}

static int connect_jail_family(struct pub_conn *c, int family)
{
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	int fd = c->p->sock_fn(family, c->p->sock_data), e = 0;
	socklen_t el = sizeof(e);

	if (fd < 0)
		return fd;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(c->port->spec.port);
		s6->sin6_addr = in6addr_loopback;
		sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(c->port->spec.port);
		s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sl = sizeof(*s4);
	}
	if (connect(fd, (struct sockaddr *)&ss, sl) < 0) {
		if (errno != EINPROGRESS) {
			e = errno;
		} else if (wait_fd(c, fd, POLLOUT, PUB_CONNECT_MS) <= 0) {
			e = ETIMEDOUT;
		} else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0) {
			e = errno;
		}
	}
	if (e) {
		close(fd);
		return -e;
	}
	return fd;
}

/* The jail's 127.0.0.1:PORT, else its [::1]:PORT. */
static int connect_jail(struct pub_conn *c)
{
	int fd = connect_jail_family(c, AF_INET);

	if (fd == -ECONNREFUSED || fd == -EADDRNOTAVAIL || fd == -ENETUNREACH) {
		int fd6 = connect_jail_family(c, AF_INET6);

		if (fd6 >= 0 || fd6 != -EAFNOSUPPORT)
			return fd6 == -EADDRNOTAVAIL || fd6 == -ENETUNREACH ? fd : fd6;
	}
	return fd;
}

/* Both ways until both ends are done (or the stop). */
static void relay(struct pub_conn *c, const char *first, size_t first_len)
{
	char buf[2][65536];
	size_t have[2] = {0, 0}, off[2] = {0, 0};
	bool eof[2] = {false, false}, shut[2] = {false, false};
	int fd[2] = {c->client, c->jail}; /* 0: client -> jail, 1: jail -> client */

	if (first_len && send_all(c, c->jail, first, first_len) < 0)
		return;
	c->bytes_in += first_len;
	fcntl(c->client, F_SETFL, fcntl(c->client, F_GETFL) | O_NONBLOCK);
	while (!(shut[0] && shut[1])) {
		struct pollfd q[3];
		int n;

		for (int d = 0; d < 2; d++) {
			short evin = !eof[d] && have[d] == 0 ? POLLIN : 0;

			q[d] = (struct pollfd){.fd = fd[d], .events = evin};
		}
		/* pending output of direction d goes to fd[1 - d] */
		for (int d = 0; d < 2; d++)
			if (have[d] > off[d])
				q[1 - d].events |= POLLOUT;
		/* nothing wanted of an fd: not polled (a hung-up one would spin) */
		for (int d = 0; d < 2; d++)
			if (!q[d].events)
				q[d].fd = -1;
		q[2] = (struct pollfd){.fd = c->p->stop_fd, .events = POLLIN};
		n = poll(q, 3, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (q[2].revents & POLLIN))
			return;
		for (int d = 0; d < 2; d++) {
			int src = fd[d], dst = fd[1 - d];

			if (have[d] == 0 && !eof[d] &&
			    (q[d].revents & (POLLIN | POLLHUP | POLLERR))) {
				ssize_t r = recv(src, buf[d], sizeof(buf[d]), 0);

				if (r > 0) {
					have[d] = (size_t)r;
					off[d] = 0;
				} else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
					eof[d] = true;
				}
			}
			if (have[d] > off[d]) {
				ssize_t w =
				    send(dst, buf[d] + off[d], have[d] - off[d], MSG_NOSIGNAL);

				if (w > 0) {
					off[d] += (size_t)w;
					if (d == 0)
						c->bytes_in += (uint64_t)w;
					else
						c->bytes_out += (uint64_t)w;
				} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
					return; /* the other end is gone */
				}
				if (off[d] == have[d])
					have[d] = off[d] = 0;
			}
			if (eof[d] && have[d] == 0 && !shut[d]) {
				shutdown(dst, SHUT_WR);
				shut[d] = true;
			}
		}
	}
}

/* The end of a request head in buf, or 0. */
static size_t head_end(const char *buf, size_t n)
{
	for (size_t i = 3; i < n; i++)
		if (buf[i - 3] == '\r' && buf[i - 2] == '\n' && buf[i - 1] == '\r' &&
		    buf[i] == '\n')
			return i + 1;
	return 0;
}

static bool const_eq(const char *a, const char *b, size_t n)
{
	unsigned char d = 0;

	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

/* "sbx_token=VALUE" in target's query: 1 (the token), -1 (another value),
 * 0 none; clean gets the target without it. */
static int find_token(const struct sbx_publish *p, const char *target, char *clean, size_t len)
{
	const char *q = strchr(target, '?');
	size_t n = 0;
	int found = 0;
	bool first = true;

	if (!q) {
		snprintf(clean, len, "%s", target);
		return 0;
	}
	n = (size_t)snprintf(clean, len, "%.*s", (int)(q - target), target);
	for (const char *s = q + 1; *s && n < len;) {
		const char *amp = strchr(s, '&');
		size_t l = amp ? (size_t)(amp - s) : strlen(s);

		if (l > 10 && strncmp(s, "sbx_token=", 10) == 0) {
			found = (l - 10 == 32 && const_eq(s + 10, p->token, 32)) ? 1 : -1;
		} else if (l > 0) {
			n += (size_t)snprintf(clean + n, len - n, "%c%.*s", first ? '?' : '&',
					      (int)l, s);
			first = false;
		}
		s += l + (amp ? 1 : 0);
	}
	if (!clean[0])
		snprintf(clean, len, "/");
	return found;
}

/* Header name of line (up to ':') equals name? */
static bool is_header(const char *line, size_t len, const char *name)
{
	size_t n = strlen(name);

	return len > n && line[n] == ':' && strncasecmp(line, name, n) == 0;
}

/*
 * The head as the jail gets it: the port's cookie checked (*ok) and every
 * sbx_preview_* cookie taken out, Connection: close unless it is an
 * upgrade (WebSocket).  A malloc'd string.
 */
static char *rewrite_head(const struct pub_port *q, const char *head, size_t len, bool *ok)
{
	const char *eol = memchr(head, '\n', len);
	/* at most twice the head: a bare LF becomes CRLF, ";" "; " */
	char *out = sbx_xmalloc(2 * len + 64);
	_cleanup_free_ char *cookies = sbx_xcalloc(1, 2 * len + 1);
	size_t n, cn = 0;
	bool upgrade = false;

	*ok = false;
	if (!eol) {
		free(out);
		return NULL;
	}
	n = (size_t)(eol - head + 1);
	memcpy(out, head, n);
	for (const char *l = eol + 1; l < head + len;) {
		const char *e = memchr(l, '\n', (size_t)(head + len - l));
		size_t ll = e ? (size_t)(e - l + 1) : (size_t)(head + len - l);
		size_t body = ll;
		bool keep = true;

		while (body > 0 && (l[body - 1] == '\n' || l[body - 1] == '\r'))
			body--;
		if (body == 0)
			break; /* the blank line */
		if (is_header(l, body, "Upgrade"))
			upgrade = true;
		if (is_header(l, body, "Cookie")) {
			_cleanup_free_ char *v = sbx_xstrndup(l + 7, body - 7);
			size_t nl = strlen(q->cookie_name);
			char *save = NULL;

			keep = false;
			for (char *t = strtok_r(v, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
				char *eq;

				while (*t == ' ' || *t == '\t')
					t++;
				eq = strchr(t, '=');
				if (eq && (size_t)(eq - t) == nl &&
				    !strncmp(t, q->cookie_name, nl) && strlen(eq + 1) == 32 &&
				    const_eq(eq + 1, q->cookie, 32))
					*ok = true;
				if (!*t || strncmp(t, "sbx_preview_", 12) == 0)
					continue;
				cn += (size_t)sprintf(cookies + cn, "%s%s", cn ? "; " : "", t);
			}
		} else if (is_header(l, body, "Keep-Alive") ||
			   is_header(l, body, "Proxy-Connection")) {
			keep = false;
		} else if (is_header(l, body, "Connection")) {
			/* an upgrade (WebSocket) keeps it; else Connection: close */
			keep = strcasestr(l, "upgrade") != NULL &&
			       (size_t)(strcasestr(l, "upgrade") - l) < body;
			upgrade = upgrade || keep;
		}
		if (keep) {
			memcpy(out + n, l, body);
			n += body;
			out[n++] = '\r';
			out[n++] = '\n';
		}
		l += ll;
	}
	if (cn)
		n += (size_t)sprintf(out + n, "Cookie: %s\r\n", cookies);
	if (!upgrade)
		n += (size_t)sprintf(out + n, "Connection: close\r\n");
	n += (size_t)sprintf(out + n, "\r\n");
	return out;
}

static void unauthorized(struct pub_conn *c, const char *why)
{
	reply(c, "401 Unauthorized", NULL,
	      "sbx: this preview needs its token: open the URL that 'sbx run', 'sbx ps' or 'sbx "
	      "inspect' printed for this sandbox (it has ?sbx_token=...).\n");
	conn_event(c, "refused", why);
}

static void serve_http(struct pub_conn *c)
{
	char *buf = sbx_xmalloc(PUB_HEAD_MAX + 1);
	size_t n = 0, hl = 0;
	char target[4096], clean[4096];
	_cleanup_free_ char *head = NULL;
	bool ok = false;
	int tok;

	fcntl(c->client, F_SETFL, fcntl(c->client, F_GETFL) | O_NONBLOCK);
	while (!(hl = head_end(buf, n))) {
		ssize_t r;
		int w = n < PUB_HEAD_MAX ? wait_fd(c, c->client, POLLIN, PUB_HEAD_TIMEOUT_MS) : 0;

		if (w <= 0)
			break;
		r = recv(c->client, buf + n, PUB_HEAD_MAX - n, 0);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	if (!hl) {
		if (n > 0)
			unauthorized(c, "no HTTP request head (a raw TCP port needs ':open')");
		free(buf);
		return;
	}
	buf[n] = '\0';
	if (sscanf(buf, "%15s %4095s", c->method, target) != 2) {
		unauthorized(c, "not an HTTP request");
		free(buf);
		return;
	}
	{
		const char *qm = strchr(target, '?');

		snprintf(c->path, sizeof(c->path), "%.*s",
			 (int)(qm ? (size_t)(qm - target) : strlen(target)), target);
	}
	tok = find_token(c->p, target, clean, sizeof(clean));
	if (tok == 1) {
		_cleanup_free_ char *extra = sbx_xasprintf(
		    "Location: %s\r\nSet-Cookie: %s=%s; Path=/; HttpOnly; SameSite=Lax\r\n", clean,
		    c->port->cookie_name, c->port->cookie);

		reply(c, "302 Found", extra, "");
		conn_event(c, "authorized", "the preview token: cookie set, redirected");
		free(buf);
		return;
	}
	if (tok < 0) {
		unauthorized(c, "a wrong preview token");
		free(buf);
		return;
	}
	head = rewrite_head(c->port, buf, hl, &ok);
	if (!head || !ok) {
		unauthorized(c, "no preview token or cookie");
		free(buf);
		return;
	}
	c->jail = connect_jail(c);
	if (c->jail < 0) {
		_cleanup_free_ char *body = sbx_xasprintf(
		    "sbx: nothing accepts connections on port %u in the sandbox (%s)\n",
		    c->port->spec.port, strerror(-c->jail));

		reply(c, "502 Bad Gateway", NULL, body);
		conn_event(c, "failed", strerror(-c->jail));
		free(buf);
		return;
	}
	{
		size_t hn = strlen(head);

		/* the head as rewritten, then whatever followed it */
		head = sbx_xrealloc(head, hn + (n - hl) + 1);
		memcpy(head + hn, buf + hl, n - hl);
		free(buf);
		relay(c, head, hn + (n - hl));
	}
	conn_event(c, "forwarded", NULL);
}

static void serve_open(struct pub_conn *c)
{
	c->jail = connect_jail(c);
	if (c->jail < 0) {
		conn_event(c, "failed", strerror(-c->jail));
		return;
	}
	relay(c, NULL, 0);
	conn_event(c, "forwarded", "open port (no token)");
}

static void *conn_main(void *arg)
{
	struct pub_conn *c = arg;
	struct sbx_publish *p = c->p;

	if (c->port->spec.open)
		serve_open(c);
	else
		serve_http(c);
	close(c->client);
	if (c->jail >= 0)
		close(c->jail);
	free(c);
	pthread_mutex_lock(&p->lock);
	if (--p->active == 0)
		pthread_cond_broadcast(&p->idle);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void peer_text(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%u", a, ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(s4->sin_port));
	}
}

static void *accept_main(void *arg)
{
	struct pub_listener *l = arg;
	struct sbx_publish *p = l->p;

	for (;;) {
		struct pollfd q[2] = {{.fd = l->fd, .events = POLLIN},
				      {.fd = p->stop_fd, .events = POLLIN}};
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		struct pub_conn *c;
		pthread_attr_t at;
		pthread_t t;
		int fd;

		if (poll(q, 2, -1) < 0 && errno != EINTR)
			break;
		if (q[1].revents & POLLIN)
			break;
		if (!(q[0].revents & POLLIN))
			continue;
		fd = accept4(l->fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		c = sbx_xcalloc(1, sizeof(*c));
		c->p = p;
		c->port = l->port;
		c->client = fd;
		c->jail = -1;
		c->t0 = sbx_now_ns();
		peer_text(&ss, c->peer, sizeof(c->peer));
		pthread_mutex_lock(&p->lock);
		if (p->active >= PUB_MAX_CONN) {
			pthread_mutex_unlock(&p->lock);
			conn_event(c, "refused", "too many connections at once");
			close(fd);
			free(c);
			continue;
		}
		p->active++;
		pthread_mutex_unlock(&p->lock);
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&at, 256 * 1024);
		if (pthread_create(&t, &at, conn_main, c) != 0) {
			pthread_mutex_lock(&p->lock);
			p->active--;
			pthread_mutex_unlock(&p->lock);
			close(fd);
			free(c);
		}
		pthread_attr_destroy(&at);
	}
	free(l);
	return NULL;
}

int sbx_publish_start(struct sbx_publish *p, sbx_publish_socket_fn fn, void *data,
		      struct sbx_err *err)
{
	size_t total = 0;

	p->sock_fn = fn;
	p->sock_data = data;
	for (size_t i = 0; i < p->n; i++)
		total += p->ports[i].nfds;
	p->threads = sbx_xcalloc(total ? total : 1, sizeof(*p->threads));
	for (size_t i = 0; i < p->n; i++) {
		for (size_t k = 0; k < p->ports[i].nfds; k++) {
			struct pub_listener *l = sbx_xcalloc(1, sizeof(*l));

			l->p = p;
			l->port = &p->ports[i];
			l->fd = p->ports[i].fds[k];
			if (pthread_create(&p->threads[p->n_threads], NULL, accept_main, l) != 0) {
				free(l);
				return sbx_err_set(err, errno, "cannot start the published ports");
			}
			p->n_threads++;
		}
	}
	p->started = true;
	return 0;
}

void sbx_publish_stop(struct sbx_publish *p)
{
	uint64_t one = 1;

	if (!p || p->stopped)
		return;
	p->stopped = true;
	(void)!write(p->stop_fd, &one, sizeof(one));
	for (size_t i = 0; i < p->n_threads; i++)
		pthread_join(p->threads[i], NULL);
	pthread_mutex_lock(&p->lock);
	while (p->active > 0)
		pthread_cond_wait(&p->idle, &p->lock);
	pthread_mutex_unlock(&p->lock);
	for (size_t i = 0; i < p->n; i++)
		for (size_t k = 0; k < p->ports[i].nfds; k++)
			sbx_fd_close(&p->ports[i].fds[k]);
}

void sbx_publish_free(struct sbx_publish *p)
{
	if (!p)
		return;
	sbx_publish_stop(p); /* closes the listeners */
	sbx_fd_close(&p->stop_fd);
	sbx_fd_close(&p->event_fd);
	json_decref(p->events);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->idle);
	free(p->threads);
	free(p->ports);
	free(p);
}
