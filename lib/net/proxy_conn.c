/* SPDX-License-Identifier: MIT */
/* lib/net/proxy_conn.c - one proxy client connection: request, decision, sbx_proxy_relay. */
#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <poll.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "proxy_int.h"

#define HEAD_MAX	   PROXY_HEAD_MAX
#define HEAD_TIMEOUT_MS	   PROXY_HEAD_TIMEOUT_MS
#define CONNECT_TIMEOUT_MS 10000
#define RELAY_BUF	   (4 * 1024 * 1024)
#define RELAY_SNDBUF	   (128 * 1024) /* the kernel doubles it */

/* ---- small I/O ---- */

/* poll fd for ev together with the stop fd: 1 ready, 0 timeout, -ECANCELED
 * when the proxy stops, other -errno */
int sbx_proxy_wait(struct proxy_conn *c, int fd, short ev, int timeout_ms)
{
	struct pollfd pf[2] = {{.fd = fd, .events = ev},
			       {.fd = sbx_proxy_conn_stop_fd(c), .events = POLLIN}};
	int r;

	do
		r = poll(pf, 2, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (pf[1].revents)
		return -ECANCELED;
	return r > 0;
}

int sbx_proxy_send_all(struct proxy_conn *c, int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (sbx_proxy_wait(c, fd, POLLOUT, HEAD_TIMEOUT_MS) <= 0)
				return -ETIMEDOUT;
			continue;
		}
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

void sbx_proxy_reply(struct proxy_conn *c, int status, const char *text, const char *reason)
{
	char clean[256], resp[1024];
	size_t i;
	int n;

	c->status = status;
	if (c->raw)
		return; /* not an HTTP client: no reply it could read */
	for (i = 0; reason[i] && i < sizeof(clean) - 1; i++)
		clean[i] = (reason[i] >= 0x20 && reason[i] < 0x7f) ? reason[i] : '?';
	clean[i] = '\0';
	n = snprintf(resp, sizeof(resp),
		     "HTTP/1.1 %d %s\r\nServer: sbx-proxy\r\nX-Sbx-Deny: %s\r\n"
		     "Content-Type: text/plain\r\nContent-Length: %zu\r\n"
		     "Connection: close\r\n\r\nsbx-proxy: %s\n",
		     status, text, clean, strlen(clean) + 12, clean);
	if (n > 0 && (size_t)n < sizeof(resp) && c->client_tls)
		sbx_proxy_tls_send(c, resp, (size_t)n);
	else if (n > 0 && (size_t)n < sizeof(resp))
		sbx_proxy_send_all(c, c->client, resp, (size_t)n);
}

void sbx_proxy_deny(struct proxy_conn *c, int status, const char *text, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->reason, sizeof(c->reason), fmt, ap);
	va_end(ap);
	sbx_proxy_reply(c, status, text, c->reason);
}

/* ---- the request head ---- */

static const char *find_head_end(const char *buf, size_t from, size_t total, size_t *skip)
{
	for (size_t i = from; i < total; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < total && buf[i + 1] == '\n') {
			*skip = 2;
			return buf + i;
		}
		if (i + 2 < total && buf[i + 1] == '\r' && buf[i + 2] == '\n') {
			*skip = 3;
			return buf + i;
		}
	}
	return NULL;
}

/* 0: head read; -1: nothing to answer (closed, timeout, stop); -2: too big */
int sbx_proxy_read_head(struct proxy_conn *c, struct proxy_request *rq)
{
	uint64_t deadline = sbx_now_ns() + (uint64_t)HEAD_TIMEOUT_MS * 1000000;

	rq->buf = sbx_xmalloc(HEAD_MAX + 1);
	while (rq->total < HEAD_MAX) {
		size_t from = rq->total > 2 ? rq->total - 2 : 0, skip = 0;
		ssize_t n = recv(c->client, rq->buf + rq->total, HEAD_MAX - rq->total, 0);

		if (n > 0) {
			sbx_proxy_touch(c);
			rq->total += (size_t)n;
			const char *end = find_head_end(rq->buf, from, rq->total, &skip);

			if (end) {
				rq->head_len = (size_t)(end - rq->buf) + skip;
				__atomic_store_n(&c->requested, true, __ATOMIC_RELAXED);
				return 0;
			}
			continue;
		}
		if (n == 0) {
			snprintf(c->reason, sizeof(c->reason),
				 "client closed before a full request");
			return -1;
		}
		if (errno != EAGAIN && errno != EINTR) {
			snprintf(c->reason, sizeof(c->reason), "client error: %s", strerror(errno));
			return -1;
		}
		uint64_t now = sbx_now_ns();
		int w = now >= deadline ? 0
					: sbx_proxy_wait(c, c->client, POLLIN,
							 (int)((deadline - now) / 1000000) + 1);

		if (w <= 0) {
			if (w == -ECANCELED)
				snprintf(c->reason, sizeof(c->reason),
					 "proxy stopped before a full request");
			else
				snprintf(c->reason, sizeof(c->reason),
					 "no full request within %d s", HEAD_TIMEOUT_MS / 1000);
			return -1;
		}
	}
	return -2;
}

static bool is_tchar(unsigned char ch)
{
	return isalnum(ch) || (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static bool clean_text(const char *s)
{
	for (; *s; s++)
		if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f)
			return false;
	return true;
}

/* Split the head in place: request line fields, then the header lines. */
int sbx_proxy_parse_head(struct proxy_conn *c, struct proxy_request *rq)
{
	char *head = rq->buf, *eol, *sp1, *sp2;

	head[rq->head_len] = '\0';
	eol = strchr(head, '\n');
	if (!eol)
		return -1;
	rq->lines = eol + 1;
	*eol = '\0';
	if (eol > head && eol[-1] == '\r')
		eol[-1] = '\0';
	sp1 = strchr(head, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || strchr(sp2 + 1, ' ') || sp1 == head || sp1 - head >= 16 ||
	    sp2 == sp1 + 1)
		return -1;
	*sp1 = *sp2 = '\0';
	for (const char *m = head; *m; m++)
		if (!is_tchar((unsigned char)*m))
			return -1;
	snprintf(c->method, sizeof(c->method), "%s", head);
	rq->target = sp1 + 1;
	rq->version = sp2 + 1;
	if (strcmp(rq->version, "HTTP/1.1") != 0 && strcmp(rq->version, "HTTP/1.0") != 0)
		return -1;
	return clean_text(rq->target) ? 0 : -1;
}

/* Next header line in *cur: sets name/value (NUL-terminated); 0 at the end. */
int sbx_proxy_next_header(char **cur, char **name, char **value)
{
	char *line = *cur, *eol = strchr(line, '\n'), *colon;

	if (!eol)
		return -1;
	*cur = eol + 1;
	*eol = '\0';
	if (eol > line && eol[-1] == '\r')
		*--eol = '\0';
	if (line[0] == '\0')
		return 0;
	colon = strchr(line, ':');
	if (!colon || colon == line)
		return -1;
	*colon = '\0';
	for (const char *p = line; *p; p++)
		if (!is_tchar((unsigned char)*p))
			return -1; /* also rejects obs-fold (leading space) */
	*name = line;
	*value = colon + 1;
	while (**value == ' ' || **value == '\t')
		(*value)++;
	return clean_text(*value) ? 1 : -1;
}

bool sbx_proxy_hop_by_hop(const char *name)
{
	static const char *const hop[] = {
	    "connection",	  "keep-alive", "proxy-connection", "proxy-authorization",
	    "proxy-authenticate", "te",		"trailer",	    "host"};
	for (size_t i = 0; i < SBX_ARRAY_SIZE(hop); i++)
		if (strcasecmp(name, hop[i]) == 0)
			return true;
	return false;
}

static const char *format_authority(const struct proxy_conn *c, uint16_t defport, char *buf,
				    size_t len)
{
	bool v6 = strchr(c->host, ':') != NULL;

	if (c->port == defport)
		snprintf(buf, len, v6 ? "[%s]" : "%s", c->host);
	else
		snprintf(buf, len, v6 ? "[%s]:%u" : "%s:%u", c->host, c->port);
	return buf;
}

/* Build the origin-form request for upstream; NULL on a bad header. */
char *sbx_proxy_rewrite_head(struct proxy_conn *c, struct proxy_request *rq, const char *path,
			     uint16_t defport)
{
	char auth[300], *cur = rq->lines, *name, *value;
	bool upgrade = false;
	char *out =
	    sbx_xasprintf("%s %s%s %s\r\nHost: %s\r\n", c->method, path[0] == '/' ? "" : "/", path,
			  rq->version, format_authority(c, defport, auth, sizeof(auth)));
	size_t len = strlen(out);
	int r;

	while ((r = sbx_proxy_next_header(&cur, &name, &value)) > 0) {
		if (strcasecmp(name, "connection") == 0 && strcasestr(value, "upgrade"))
			upgrade = true;
		if (sbx_proxy_hop_by_hop(name))
			continue;
		size_t add = strlen(name) + strlen(value) + 4;

		out = sbx_xrealloc(out, len + add + 1);
		len += (size_t)snprintf(out + len, add + 1, "%s: %s\r\n", name, value);
	}
	if (r < 0) {
		free(out);
		return NULL;
	}
	char *full = sbx_xasprintf("%sConnection: %s\r\n\r\n", out, upgrade ? "Upgrade" : "close");

	free(out);
	return full;
}

/* ---- target, resolution, connection ---- */

/* Fill c->host/port from the target; *path gets the origin-form path. */
static int parse_target(struct proxy_conn *c, const char *target, const char **path)
{
	const char *auth = target, *end;
	uint16_t defport = 443;

	*path = NULL;
	if (!c->is_connect) {
		if (strncasecmp(target, "http://", 7) != 0)
			return -1;
		auth = target + 7;
		defport = 80;
	}
	end = auth + strcspn(auth, c->is_connect ? "" : "/?#");
	if (!c->is_connect) {
		if (*end == '#')
			return -1;
		*path = end;
	}
	return sbx_netpolicy_parse_authority(auth, (size_t)(end - auth), defport, &c->host,
					     &c->port);
}

bool sbx_proxy_sockaddr(const char *host, uint16_t port, struct sockaddr_storage *ss,
			socklen_t *len)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		*len = sizeof(*in4);
		return true;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*len = sizeof(*in6);
		return true;
	}
	return false;
}

bool sbx_proxy_is_localhost(const char *h)
{
	size_t n = strlen(h);

	return strcmp(h, "localhost") == 0 || (n > 10 && strcmp(h + n - 10, ".localhost") == 0);
}

/* Candidate addresses: the literal, localhost's two, or getaddrinfo's. */
static int resolve(struct proxy_conn *c, struct sockaddr_storage *out, size_t max, size_t *n)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_ADDRCONFIG},
			*res = NULL;
	socklen_t sl;
	int r;

	*n = 0;
	if (sbx_proxy_sockaddr(c->host, c->port, &out[0], &sl)) {
		*n = 1;
		return 0;
	}
	if (sbx_proxy_is_localhost(c->host)) {
		sbx_proxy_sockaddr("127.0.0.1", c->port, &out[0], &sl);
		sbx_proxy_sockaddr("::1", c->port, &out[1], &sl);
		*n = 2;
		return 0;
	}
	r = getaddrinfo(c->host, NULL, &hints, &res);
	if (r != 0) {
		snprintf(c->reason, sizeof(c->reason), "cannot resolve '%s': %s", c->host,
			 r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
		return -1;
	}
	for (struct addrinfo *a = res; a && *n < max; a = a->ai_next) {
		if (a->ai_family != AF_INET && a->ai_family != AF_INET6)
			continue;
		memcpy(&out[*n], a->ai_addr, a->ai_addrlen);
		if (a->ai_family == AF_INET)
			((struct sockaddr_in *)&out[*n])->sin_port = htons(c->port);
		else
			((struct sockaddr_in6 *)&out[*n])->sin6_port = htons(c->port);
		(*n)++;
	}
	freeaddrinfo(res);
	return 0;
}

/* Connect to one checked address; 0 or -errno (with a stop as -ECANCELED). */
int sbx_proxy_connect_to(struct proxy_conn *c, const struct sockaddr_storage *ss)
{
	socklen_t sl =
	    ss->ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), e = 0;
	socklen_t el = sizeof(e);

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)ss, sl) < 0 && errno != EINPROGRESS) {
		e = errno;
		close(fd);
		return -e;
	}
	int r = sbx_proxy_wait(c, fd, POLLOUT, CONNECT_TIMEOUT_MS);

	if (r <= 0) {
		close(fd);
		return r < 0 ? r : -ETIMEDOUT;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e) {
		close(fd);
		return e ? -e : -EIO;
	}
	c->upstream = fd;
	return 0;
}

/* Check every candidate, connect to the first allowed one that answers. */
void sbx_proxy_open_upstream(struct proxy_conn *c, const struct sbx_allow_entry *e)
{
	struct sockaddr_storage cand[16];
	uint16_t defport = c->is_connect ? 443 : 80;
	char why[256] = "";
	size_t n = 0;
	int last = 0;

	if (resolve(c, cand, SBX_ARRAY_SIZE(cand), &n) < 0) {
		c->allowed = true; /* by the allowlist; the name just did not resolve */
		c->failed = true;
		sbx_proxy_reply(c, 502, "Bad Gateway", c->reason);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		char r[256];

		if (!sbx_netpolicy_addr_allowed(sbx_proxy_conn_allowlist(c), e,
						(struct sockaddr *)&cand[i], c->port, defport, r,
						sizeof(r))) {
			if (!why[0]) {
				memcpy(why, r, sizeof(why));
				sbx_netpolicy_addr_str((struct sockaddr *)&cand[i], c->address,
						       sizeof(c->address));
			}
			continue;
		}
		sbx_netpolicy_addr_str((struct sockaddr *)&cand[i], c->address, sizeof(c->address));
		c->allowed = true;
		last = sbx_proxy_connect_to(c, &cand[i]);
		if (last == 0)
			return;
		if (last == -ECANCELED) {
			snprintf(c->reason, sizeof(c->reason), "proxy stopped while connecting");
			c->failed = true;
			return;
		}
	}
	if (!c->allowed) {
		if (!why[0])
			snprintf(why, sizeof(why), "'%s' has no address", c->host);
		sbx_proxy_deny(c, 403, "Forbidden", "%s", why);
		return;
	}
	c->failed = true;
	sbx_proxy_deny(c, last == -ETIMEDOUT ? 504 : 502,
		       last == -ETIMEDOUT ? "Gateway Timeout" : "Bad Gateway",
		       "cannot connect to %s port %u: %s", c->address, c->port, strerror(-last));
}

/* ---- sbx_proxy_relay ---- */

/*
 * Each direction copies through a buffer of its own, mapped when its first
 * byte arrives and unmapped when the connection ends, so that a finished
 * transfer leaves nothing resident.  A recv() writes only what the socket
 * holds, so only a bulk transfer whose bytes queue up faster than they
 * leave makes more than a few pages resident: at most what the kernel
 * already held for it in the socket's receive buffer (autotuned up to
 * 6 MiB).  bench/proxy.sh (1 GiB on loopback, kernel 6.18, 2 CPUs), 4 MiB
 * against 1 MiB, 9 alternating rounds: GET 0.70 against 0.62 of direct,
 * CONNECT 0.76 against 0.59 (1.1-1.26 times as fast in three sets
 * before); 8 and 16 MiB no faster than 4.  A spliced pipe of 1 MiB was
 * 1.27-1.42 times slower than copies through a buffer of that size
 * (splice(2) keeps the sender's pages referenced along the whole path; two
 * copies reuse pages that are still in the cache).
 */
struct half {
	int src, dst;
	char *buf; /* RELAY_BUF bytes, MAP_FAILED until the first byte */
	size_t off, fill;
	bool eof, shut, up;
};

static void half_init(struct half *h, int src, int dst, bool up)
{
	*h = (struct half){.src = src, .dst = dst, .buf = MAP_FAILED, .up = up};
}

static void half_fini(struct half *h)
{
	if (h->buf != MAP_FAILED)
		munmap(h->buf, RELAY_BUF);
}

/* Move what can move without blocking; -errno on a broken connection. */
static int half_pump(struct proxy_conn *c, struct half *h)
{
	for (;;) {
		bool moved = false;
		ssize_t n;

		if (!h->eof && h->fill == 0) {
			if (h->buf == MAP_FAILED) {
				h->buf = mmap(NULL, RELAY_BUF, PROT_READ | PROT_WRITE,
					      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
				if (h->buf == MAP_FAILED)
					return -errno;
			}
			h->off = 0;
			n = recv(h->src, h->buf, RELAY_BUF, 0);
			if (n > 0) {
				h->fill = (size_t)n;
				moved = true;
			} else if (n == 0) {
				h->eof = true;
			} else if (errno != EAGAIN && errno != EINTR) {
				return -errno;
			}
		}
		if (h->fill > 0) {
			n = send(h->dst, h->buf + h->off, h->fill, MSG_NOSIGNAL);
			if (n > 0) {
				h->fill -= (size_t)n;
				h->off += (size_t)n;
				sbx_proxy_count(c, h->up, (uint64_t)n);
				moved = true;
			} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
				return -errno;
			}
		}
		if (h->eof && h->fill == 0 && !h->shut) {
			shutdown(h->dst, SHUT_WR);
			h->shut = true;
		}
		if (!moved)
			return 0;
	}
}

static void half_events(const struct half *h, struct pollfd *src, struct pollfd *dst)
{
	if (!h->eof && h->fill == 0)
		src->events |= POLLIN;
	if (h->fill > 0)
		dst->events |= POLLOUT;
}

/* Status code of a plain HTTP response, from a peek at its first bytes. */
static void peek_status(struct proxy_conn *c)
{
	char b[16] = "";
	ssize_t n = recv(c->upstream, b, sizeof(b) - 1, MSG_PEEK | MSG_DONTWAIT);

	if (n >= 12 && strncmp(b, "HTTP/1.", 7) == 0 && b[8] == ' ' && isdigit((unsigned char)b[9]))
		c->status = atoi(b + 9);
	else if (n > 0)
		c->status = -1; /* not an HTTP response: reported as-is */
}

/*
 * A client on loopback (every jail's: the proxy listens in the jail's own
 * network namespace) gets a send buffer of RELAY_SNDBUF instead of the
 * kernel's autotuned one (up to 4 MiB): less in flight towards the client,
 * pages still in the cache.  bench/proxy.sh A/B, 3 x 15 interleaved 1 GiB
 * transfers: GET 1.04-1.85, CONNECT 1.46-1.84; 256 KiB was less steady,
 * 64 KiB 0.5; bench/tls.sh (TLS injection, the same call in proxy_tls.c):
 * 0.42 -> 0.46 of direct.  A client elsewhere keeps autotuning (a fixed
 * buffer would cap a long path's throughput).  The upstream's buffers stay
 * the kernel's: a fixed receive buffer there measured nothing and would cap
 * a far server.
 */
void sbx_proxy_client_sndbuf(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int v = RELAY_SNDBUF;

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0 &&
	    sbx_netpolicy_classify((struct sockaddr *)&ss) == SBX_ADDR_LOOPBACK)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
}

void sbx_proxy_relay(struct proxy_conn *c)
{
	struct half up, down;
	int r = 0;

	sbx_proxy_client_sndbuf(c->client);
	half_init(&up, c->client, c->upstream, true);
	half_init(&down, c->upstream, c->client, false);
	while (r == 0 && !(up.shut && down.shut)) {
		struct pollfd pf[3] = {{.fd = c->client},
				       {.fd = c->upstream},
				       {.fd = sbx_proxy_conn_stop_fd(c), .events = POLLIN}};

		uint64_t idle = sbx_now_ns() - __atomic_load_n(&c->last_ns, __ATOMIC_RELAXED);
		int n;

		half_events(&up, &pf[0], &pf[1]);
		half_events(&down, &pf[1], &pf[0]);
		n = idle >= (uint64_t)PROXY_IDLE_MS * 1000000
			? 0
			: poll(pf, 3,
			       (int)(((uint64_t)PROXY_IDLE_MS * 1000000 - idle) / 1000000) + 1);
		if (n < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
		if (n == 0 && sbx_now_ns() - __atomic_load_n(&c->last_ns, __ATOMIC_RELAXED) >=
				  (uint64_t)PROXY_IDLE_MS * 1000000) {
			snprintf(
			    c->reason + strlen(c->reason), sizeof(c->reason) - strlen(c->reason),
			    "; closed after %d s without a byte either way", PROXY_IDLE_MS / 1000);
			break;
		}
		if (pf[2].revents) {
			snprintf(c->reason + strlen(c->reason),
				 sizeof(c->reason) - strlen(c->reason), "; cut by proxy stop");
			break;
		}
		if (c->status == 0 && !c->raw && (pf[1].revents & POLLIN))
			peek_status(c);
		r = half_pump(c, &up);
		if (r == 0)
			r = half_pump(c, &down);
	}
	if (r < 0 && r != -ECONNRESET && r != -EPIPE)
		snprintf(c->reason + strlen(c->reason), sizeof(c->reason) - strlen(c->reason),
			 "; sbx_proxy_relay error: %s", strerror(-r));
	half_fini(&up);
	half_fini(&down);
}

/* ---- one connection ---- */

static bool headers_ok(struct proxy_request *rq)
{
	char *cur = rq->lines, *name, *value;
	int r;

	while ((r = sbx_proxy_next_header(&cur, &name, &value)) > 0)
		;
	return r == 0;
}

size_t sbx_proxy_head_end(const char *buf, size_t total)
{
	size_t skip = 0;
	const char *end = find_head_end(buf, 0, total, &skip);

	return end ? (size_t)(end - buf) + skip : 0;
}

int sbx_proxy_parse_request(struct proxy_conn *c, char *buf, size_t head_len, char **head_out)
{
	struct proxy_request rq = {.buf = buf, .head_len = head_len, .total = head_len};
	const char *path = NULL;

	*head_out = NULL;
	if (sbx_proxy_parse_head(c, &rq) < 0) {
		snprintf(c->reason, sizeof(c->reason), "malformed request line");
		return 400;
	}
	c->is_connect = strcmp(c->method, "CONNECT") == 0;
	if (parse_target(c, rq.target, &path) < 0) {
		snprintf(c->reason, sizeof(c->reason), "%s",
			 !c->is_connect && strncasecmp(rq.target, "https://", 8) == 0
			     ? "https:// URIs need CONNECT"
			 : c->is_connect ? "bad CONNECT target"
					 : "not a proxy request: expected an absolute http:// URI");
		return 400;
	}
	if (c->is_connect ? !headers_ok(&rq)
			  : !(*head_out = sbx_proxy_rewrite_head(c, &rq, path, 80))) {
		snprintf(c->reason, sizeof(c->reason), "malformed header");
		return 400;
	}
	return 0;
}

bool sbx_proxy_open_named(struct proxy_conn *c, uint16_t defport)
{
	const struct sbx_allow_entry *e =
	    sbx_netpolicy_match(sbx_proxy_conn_allowlist(c), c->host, c->port, defport);

	if (!e) {
		sbx_proxy_deny(c, 403, "Forbidden", "%s port %u is not in the allowlist", c->host,
			       c->port);
		return false;
	}
	sbx_proxy_open_upstream(c, e);
	if (c->upstream < 0)
		return false;
	snprintf(c->reason, sizeof(c->reason), "allowed by '%s'", e->text);
	return true;
}

/* Parse and check; true when an upstream connection is open. */
static bool decide(struct proxy_conn *c, struct proxy_request *rq, char **head_out)
{
	int status = sbx_proxy_parse_request(c, rq->buf, rq->head_len, head_out);

	if (status) {
		sbx_proxy_reply(c, status, "Bad Request", c->reason);
		return false;
	}
	return sbx_proxy_open_named(c, c->is_connect ? 443 : 80);
}

/* A whole request head has been read from the client: decide and relay. */
void sbx_proxy_serve_request(struct proxy_conn *c, struct proxy_request *rq)
{
	_cleanup_free_ char *head = NULL;
	static const char established[] =
	    "HTTP/1.1 200 Connection established\r\nProxy-Agent: sbx-proxy\r\n\r\n";
	const struct sbx_proxy_inject *inj[2];
	size_t extra = rq->total - rq->head_len;
	int r;

	if (!decide(c, rq, &head))
		return;
	if (c->is_connect) {
		bool tls = sbx_proxy_injections(c, c->host, inj, 2) > 0;

		if (tls && extra) {
			sbx_proxy_deny(c, 400, "Bad Request",
				       "data sent before the tunnel to injection host '%s' was "
				       "established",
				       c->host);
			return;
		}
		r = sbx_proxy_send_all(c, c->client, established, sizeof(established) - 1);
		c->status = 200;
		if (r == 0 && tls) {
			sbx_proxy_serve_tls(c);
			return;
		}
	} else {
		r = sbx_proxy_send_all(c, c->upstream, head, strlen(head));
		if (r == 0)
			sbx_proxy_count(c, true, strlen(head));
	}
	if (r == 0 && extra)
		r = sbx_proxy_send_all(c, c->upstream, rq->buf + rq->head_len, extra);
	if (r == 0) {
		sbx_proxy_count(c, true, extra);
		sbx_proxy_relay(c);
	}
}

void sbx_proxy_serve_conn(struct proxy_conn *c)
{
	struct proxy_request rq = {0};
	struct sockaddr_storage dst;
	int r;

	if (sbx_proxy_captured(c, &dst)) {
		sbx_proxy_serve_captured(c, &dst);
		return;
	}
	r = sbx_proxy_read_head(c, &rq);
	if (r == -2)
		sbx_proxy_deny(c, 431, "Request Header Fields Too Large",
			       "request head over %d bytes", HEAD_MAX);
	else if (r == 0)
		sbx_proxy_serve_request(c, &rq);
	free(rq.buf);
}
