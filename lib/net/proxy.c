/* SPDX-License-Identifier: MIT */
/*
 * lib/net/proxy.c - the allowlist HTTP proxy of `--net proxy` (and `sbx proxy`).
 *
 * One accept thread, one detached thread per client connection.  At most
 * PROXY_MAX_CONN are served at a time: past that, a new connection makes
 * room by closing the one idle the longest, and gets a 503 only when every
 * one is busy; idle ones are closed anyway after a while (the limits are
 * in proxy_int.h).  Connections that never sent a whole request are
 * counted (sbx_proxy_stats.idle), not logged one by one, so that a jail
 * opening thousands of them cannot flood the run log.  A connection reads one
 * request head (capped at PROXY_HEAD_MAX), decides, connects to the exact
 * address it checked, then relays both directions through a 4 MiB buffer
 * each (see sbx_proxy_relay() in proxy_conn.c for why not splice(2)).
 *
 * Plain HTTP: the absolute-form request line is rewritten to origin form,
 * Host is replaced by the URI's authority (no "Host:" fronting to another
 * site on the same server), hop-by-hop headers (Connection, Keep-Alive,
 * Proxy-*, TE, Trailer) are dropped and "Connection: close" is sent
 * upstream (or "Connection: Upgrade" for an upgrade).  One request per
 * client connection: whatever the client sends after the first request
 * head goes to the same (already allowed) upstream, which closes after
 * its response; then the proxy closes the client connection.
 *
 * CONNECT: "200 Connection established", then a byte tunnel.  The proxy
 * does not look inside TLS (SNI is not checked).
 *
 * Every thread blocks all signals (so the supervisor's signal handling is
 * unchanged and SIGPIPE becomes EPIPE).
 */
#include "proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "log.h"
#include "proxy_int.h"

#define PROXY_STACK (256 * 1024)

#define PROXY_MAX_LISTEN 4
#define DNS_MEMO	 256

struct dns_memo {
	struct sockaddr_storage addr;
	char *name;
};

struct sbx_proxy {
	int listen_fd[PROXY_MAX_LISTEN];
	size_t n_listen;
	int dns_fd[PROXY_MAX_LISTEN];
	size_t n_dns;
	pthread_t dns_thread;
	bool dns_started;
	struct sbx_proxy_inject *inject;
	size_t n_inject;
	struct sbx_tls_ca *ca;
	struct dns_memo memo[DNS_MEMO]; /* under lock; round robin */
	size_t memo_next;
	int stop_fd;  /* eventfd, readable once stopping */
	int event_fd; /* eventfd, readable while events are queued */
	struct sbx_allowlist al;
	sbx_proxy_event_fn cb;
	void *data;
	pthread_t accept_thread;
	pthread_mutex_t lock; /* stats, queue, active, cb serialisation */
	pthread_cond_t idle;  /* signalled when active drops */
	bool stopped;
	json_t *queue;
	struct sbx_proxy_stats st;
	struct proxy_conn *conns; /* being served, newest first */
	uint64_t evicting;	  /* of those, shut down to make room and not gone yet */
};

static void proxy_emit(struct sbx_proxy *p, struct proxy_conn *c);

/* ---- events ---- */

static json_t *conn_event(const struct proxy_conn *c)
{
	json_t *ev = json_object();

	json_object_set_new(ev, "ts", json_string(c->ts));
	json_object_set_new(ev, "method", c->method[0] ? json_string(c->method) : json_null());
	json_object_set_new(ev, "host", c->host ? json_string(c->host) : json_null());
	json_object_set_new(ev, "port", c->port ? json_integer(c->port) : json_null());
	json_object_set_new(ev, "address", c->address[0] ? json_string(c->address) : json_null());
	json_object_set_new(ev, "allowed", json_boolean(c->allowed));
	/* Allowed but it never got through (no such name, refused): failed. */
	json_object_set_new(ev, "result",
			    json_string(!c->allowed ? "denied"
					: c->failed ? "failed"
						    : "ok"));
	json_object_set_new(ev, "reason", json_string(c->reason));
	json_object_set_new(ev, "status", json_integer(c->status));
	json_object_set_new(ev, "bytes_up", json_integer((json_int_t)c->bytes_up));
	json_object_set_new(ev, "bytes_down", json_integer((json_int_t)c->bytes_down));
	json_object_set_new(
	    ev, "ms", json_real((double)(int64_t)(sbx_ms_since(c->start_ns) * 1000) / 1000.0));
	json_object_set_new(ev, "via", json_string(c->captured ? "capture" : "proxy"));
	if (c->tls) {
		json_t *inj = json_array();
		_cleanup_free_ char *names = sbx_xstrdup(c->injected);
		char *save = NULL;

		for (char *n = strtok_r(names, ", ", &save); n; n = strtok_r(NULL, ", ", &save))
			json_array_append_new(inj, json_string(n));
		json_object_set_new(ev, "tls", json_string("terminated"));
		json_object_set_new(ev, "injected", inj);
	}
	return ev;
}

/* Queue or hand over one event (a new reference taken). */
static void emit_event(struct sbx_proxy *p, json_t *ev)
{
	if (p->cb) {
		p->cb(ev, p->data);
	} else {
		uint64_t one = 1;

		json_array_append(p->queue, ev);
		if (write(p->event_fd, &one, sizeof(one)) < 0) {
			/* counter saturated: still readable */
		}
	}
}

void sbx_proxy_dns_event(struct sbx_proxy *p, json_t *ev, bool allowed, bool failed)
{
	pthread_mutex_lock(&p->lock);
	if (!allowed)
		p->st.denied++;
	else if (failed)
		p->st.failed++;
	else
		p->st.allowed++;
	p->st.dns++;
	emit_event(p, ev);
	pthread_mutex_unlock(&p->lock);
	json_decref(ev);
}

static void proxy_emit(struct sbx_proxy *p, struct proxy_conn *c)
{
	json_t *ev;

	/* No request (nothing, or not a whole head, before it closed, timed
	 * out, was closed for room or the proxy stopped): a count, no event. */
	if (!__atomic_load_n(&c->requested, __ATOMIC_RELAXED) && c->status == 0) {
		pthread_mutex_lock(&p->lock);
		p->st.idle++;
		pthread_mutex_unlock(&p->lock);
		return;
	}
	ev = conn_event(c);
	pthread_mutex_lock(&p->lock);
	if (!c->allowed)
		p->st.denied++;
	else if (c->failed)
		p->st.failed++;
	else
		p->st.allowed++;
	if (c->captured)
		p->st.captured++;
	emit_event(p, ev);
	pthread_mutex_unlock(&p->lock);
	json_decref(ev);
}

json_t *sbx_proxy_take_events(struct sbx_proxy *p)
{
	json_t *out;
	uint64_t v;

	pthread_mutex_lock(&p->lock);
	out = p->queue;
	p->queue = json_array();
	if (read(p->event_fd, &v, sizeof(v)) < 0) {
		/* nothing pending (EAGAIN) */
	}
	pthread_mutex_unlock(&p->lock);
	return out;
}

int sbx_proxy_max_connections(void)
{
	return PROXY_MAX_CONN;
}

int sbx_proxy_event_fd(struct sbx_proxy *p)
{
	return p->event_fd;
}

void sbx_proxy_get_stats(struct sbx_proxy *p, struct sbx_proxy_stats *st)
{
	pthread_mutex_lock(&p->lock);
	*st = p->st;
	st->bytes_up = __atomic_load_n(&p->st.bytes_up, __ATOMIC_RELAXED);
	st->bytes_down = __atomic_load_n(&p->st.bytes_down, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&p->lock);
}

void sbx_proxy_touch(struct proxy_conn *c)
{
	__atomic_store_n(&c->last_ns, sbx_now_ns(), __ATOMIC_RELAXED);
}

void sbx_proxy_count(struct proxy_conn *c, bool up, uint64_t n)
{
	struct sbx_proxy *p = c->proxy;

	if (n)
		sbx_proxy_touch(c);
	if (up) {
		c->bytes_up += n;
		__atomic_add_fetch(&p->st.bytes_up, n, __ATOMIC_RELAXED);
	} else {
		c->bytes_down += n;
		__atomic_add_fetch(&p->st.bytes_down, n, __ATOMIC_RELAXED);
	}
}

int sbx_proxy_conn_stop_fd(const struct proxy_conn *c)
{
	return c->proxy->stop_fd;
}

const struct sbx_allowlist *sbx_proxy_conn_allowlist(const struct proxy_conn *c)
{
	return &c->proxy->al;
}

struct sbx_tls_ca *sbx_proxy_conn_ca(const struct proxy_conn *c)
{
	return c->proxy->ca;
}

/* host is normalised; a hosts entry "*.d" matches names strictly below d. */
static bool host_listed(const struct sbx_strv *hosts, const char *host)
{
	size_t hl = strlen(host);

	for (size_t i = 0; i < hosts->n; i++) {
		const char *h = hosts->v[i];

		if (strncmp(h, "*.", 2) == 0) {
			size_t dl = strlen(h + 2);

			if (hl > dl + 1 && host[hl - dl - 1] == '.' &&
			    strcasecmp(host + hl - dl, h + 2) == 0)
				return true;
		} else if (strcasecmp(h, host) == 0) {
			return true;
		}
	}
	return false;
}

size_t sbx_proxy_injections(const struct proxy_conn *c, const char *host,
			    const struct sbx_proxy_inject **out, size_t max)
{
	const struct sbx_proxy *p = c->proxy;
	size_t n = 0;

	for (size_t i = 0; host && i < p->n_inject && n + 1 < max; i++)
		if (host_listed(p->inject[i].hosts, host))
			out[n++] = &p->inject[i];
	if (max)
		out[n] = NULL;
	return n;
}

void sbx_proxy_dns_remember(struct sbx_proxy *p, const char *name, const struct sockaddr *sa)
{
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < DNS_MEMO; i++) {
		struct dns_memo *m = &p->memo[i];

		if (m->name && sbx_netpolicy_addr_equal((struct sockaddr *)&m->addr, sa)) {
			free(m->name);
			m->name = sbx_xstrdup(name);
			pthread_mutex_unlock(&p->lock);
			return;
		}
	}
	struct dns_memo *m = &p->memo[p->memo_next++ % DNS_MEMO];

	free(m->name);
	m->name = sbx_xstrdup(name);
	memcpy(&m->addr, sa,
	       sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
	pthread_mutex_unlock(&p->lock);
}

char *sbx_proxy_dns_name_of(struct proxy_conn *c, const struct sockaddr *sa)
{
	struct sbx_proxy *p = c->proxy;
	char *name = NULL;

	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < DNS_MEMO && !name; i++)
		if (p->memo[i].name &&
		    sbx_netpolicy_addr_equal((struct sockaddr *)&p->memo[i].addr, sa))
			name = sbx_xstrdup(p->memo[i].name);
	pthread_mutex_unlock(&p->lock);
	return name;
}

/* ---- threads ---- */

/* Under the lock. */
static void unlink_conn(struct sbx_proxy *p, struct proxy_conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		p->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;
}

static void *conn_main(void *arg)
{
	struct proxy_conn *c = arg;
	struct sbx_proxy *p = c->proxy;
	bool evicted;

	sbx_proxy_serve_conn(c);
	/* Off the list before its descriptors close: an eviction shuts them
	 * down under the lock, never a number reused meanwhile. */
	pthread_mutex_lock(&p->lock);
	unlink_conn(p, c);
	evicted = c->evicted;
	if (evicted)
		p->evicting--;
	pthread_mutex_unlock(&p->lock);
	if (evicted)
		snprintf(c->reason + strlen(c->reason), sizeof(c->reason) - strlen(c->reason),
			 "%sclosed to make room: %d connections at once, this one idle the longest",
			 c->reason[0] ? "; " : "", PROXY_MAX_CONN);
	proxy_emit(p, c);
	sbx_closep(&c->client);
	sbx_closep(&c->upstream);
	free(c->host);
	free(c);
	pthread_mutex_lock(&p->lock);
	p->st.active--;
	pthread_cond_broadcast(&p->idle);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Every one busy relaying: a 503, counted (sbx_proxy_stats.refused), no
 * event. */
static void reject_busy(struct sbx_proxy *p, struct proxy_conn *c)
{
	snprintf(c->reason, sizeof(c->reason),
		 "too many connections: %d at once, all relaying in the last %d ms", PROXY_MAX_CONN,
		 PROXY_EVICT_IDLE_MS);
	sbx_proxy_reply(c, 503, "Service Unavailable", c->reason);
	pthread_mutex_lock(&p->lock);
	p->st.refused++;
	pthread_mutex_unlock(&p->lock);
	close(c->client);
	free(c);
}

/*
 * Under the lock, with PROXY_MAX_CONN being served: shut down the one that
 * has waited longest for its request head, or else the relay idle the
 * longest if it has been idle PROXY_EVICT_IDLE_MS.  (A flood of idle
 * connections thus only ever pushes out its own oldest, and a real request
 * leaves the waiting set as soon as its head is in.)  Its thread sees both
 * sockets end and finishes.  False when none may go.
 */
static bool evict_one(struct sbx_proxy *p, uint64_t now)
{
	struct proxy_conn *v = NULL, *c;
	bool v_head = false;

	for (c = p->conns; c; c = c->next) {
		bool head = !__atomic_load_n(&c->requested, __ATOMIC_RELAXED);
		uint64_t last = __atomic_load_n(&c->last_ns, __ATOMIC_RELAXED);

		if (c->evicted || (!head && now - last < (uint64_t)PROXY_EVICT_IDLE_MS * 1000000))
			continue;
		if (!v || (head && !v_head) ||
		    (head == v_head && last < __atomic_load_n(&v->last_ns, __ATOMIC_RELAXED))) {
			v = c;
			v_head = head;
		}
	}
	if (!v)
		return false;
	v->evicted = true;
	p->evicting++;
	p->st.evicted++;
	shutdown(v->client, SHUT_RDWR);
	if (v->upstream >= 0)
		shutdown(v->upstream, SHUT_RDWR);
	return true;
}

static bool spawn_conn(struct sbx_proxy *p, int fd)
{
	struct proxy_conn *c = sbx_xcalloc(1, sizeof(*c));
	pthread_attr_t attr;
	pthread_t t;
	bool ok;

	c->proxy = p;
	c->client = fd;
	c->upstream = -1;
	c->start_ns = c->last_ns = sbx_now_ns();
	sbx_rfc3339_now(c->ts, sizeof(c->ts));
	pthread_mutex_lock(&p->lock);
	p->st.connections++;
	ok = p->st.active - p->evicting < PROXY_MAX_CONN || evict_one(p, c->start_ns);
	if (ok) {
		p->st.active++;
		c->next = p->conns;
		if (p->conns)
			p->conns->prev = c;
		p->conns = c;
	}
	pthread_mutex_unlock(&p->lock);
	if (!ok) {
		reject_busy(p, c);
		return true;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, PROXY_STACK);
	if (pthread_create(&t, &attr, conn_main, c) != 0) {
		pthread_mutex_lock(&p->lock);
		p->st.active--;
		unlink_conn(p, c);
		pthread_mutex_unlock(&p->lock);
		reject_busy(p, c);
	}
	pthread_attr_destroy(&attr);
	return true;
}

static void *accept_main(void *arg)
{
	struct sbx_proxy *p = arg;

	for (;;) {
		struct pollfd pf[PROXY_MAX_LISTEN + 1] = {{.fd = p->stop_fd, .events = POLLIN}};

		for (size_t i = 0; i < p->n_listen; i++)
			pf[i + 1] = (struct pollfd){.fd = p->listen_fd[i], .events = POLLIN};
		if (poll(pf, (nfds_t)p->n_listen + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[0].revents)
			break;
		for (size_t i = 0; i < p->n_listen; i++) {
			if (!(pf[i + 1].revents & POLLIN))
				continue;
			int fd = accept4(p->listen_fd[i], NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

			if (fd < 0) {
				if (errno == EMFILE || errno == ENFILE)
					poll(NULL, 0, 100); /* let connections finish */
				continue;
			}
			spawn_conn(p, fd);
		}
	}
	return NULL;
}

static void *dns_main(void *arg)
{
	struct sbx_proxy *p = arg;

	for (;;) {
		struct pollfd pf[PROXY_MAX_LISTEN + 1] = {{.fd = p->stop_fd, .events = POLLIN}};

		for (size_t i = 0; i < p->n_dns; i++)
			pf[i + 1] = (struct pollfd){.fd = p->dns_fd[i], .events = POLLIN};
		if (poll(pf, (nfds_t)p->n_dns + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[0].revents)
			break;
		for (size_t i = 0; i < p->n_dns; i++)
			if (pf[i + 1].revents & POLLIN)
				sbx_proxy_dns_serve(p, p->dns_fd[i]);
	}
	return NULL;
}

static void proxy_release(struct sbx_proxy *p)
{
	for (size_t i = 0; i < p->n_listen; i++)
		sbx_closep(&p->listen_fd[i]);
	for (size_t i = 0; i < p->n_dns; i++)
		sbx_closep(&p->dns_fd[i]);
	for (size_t i = 0; i < DNS_MEMO; i++)
		free(p->memo[i].name);
	free(p->inject);
	sbx_closep(&p->stop_fd);
	sbx_closep(&p->event_fd);
	sbx_netpolicy_free(&p->al);
	json_decref(p->queue);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->idle);
	free(p);
}

int sbx_proxy_start(struct sbx_proxy **out, int listen_fd, const struct sbx_strv *allow,
		    sbx_proxy_event_fn cb, void *data, struct sbx_err *err)
{
	struct sbx_proxy_opts o = {
	    .listen_fds = &listen_fd, .n_listen = 1, .allow = allow, .cb = cb, .data = data};

	return sbx_proxy_start_opts(out, &o, err);
}

static int start_threads(struct sbx_proxy *p, struct sbx_err *err)
{
	sigset_t all, old;
	int r;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = -pthread_create(&p->accept_thread, NULL, accept_main, p);
	if (r == 0 && p->n_dns > 0) {
		r = -pthread_create(&p->dns_thread, NULL, dns_main, p);
		if (r < 0) {
			uint64_t one = 1;

			if (write(p->stop_fd, &one, sizeof(one)) < 0) {
				/* an eventfd write of 1 cannot fail here */
			}
			pthread_join(p->accept_thread, NULL);
		}
		p->dns_started = r == 0;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		return sbx_err_set(err, -r, "cannot start the proxy thread");
	return 0;
}

int sbx_proxy_start_opts(struct sbx_proxy **out, const struct sbx_proxy_opts *o,
			 struct sbx_err *err)
{
	struct sbx_proxy *p = sbx_xcalloc(1, sizeof(*p));
	int r = 0;

	*out = NULL;
	for (size_t i = 0; i < o->n_listen && i < PROXY_MAX_LISTEN; i++)
		p->listen_fd[p->n_listen++] = o->listen_fds[i];
	for (size_t i = 0; i < o->n_dns && i < PROXY_MAX_LISTEN; i++)
		p->dns_fd[p->n_dns++] = o->dns_fds[i];
	p->cb = o->cb;
	p->data = o->data;
	p->ca = o->ca;
	if (o->n_inject) {
		p->inject = sbx_xcalloc(o->n_inject, sizeof(*p->inject));
		memcpy(p->inject, o->inject, o->n_inject * sizeof(*p->inject));
		p->n_inject = o->n_inject;
	}
	p->queue = json_array();
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->idle, NULL);
	p->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	p->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (o->n_listen > PROXY_MAX_LISTEN || o->n_dns > PROXY_MAX_LISTEN)
		r = sbx_err_set(err, EINVAL, "too many proxy sockets");
	else if (p->stop_fd < 0 || p->event_fd < 0)
		r = sbx_err_set(err, errno, "cannot create the proxy's eventfd");
	if (r == 0)
		r = sbx_netpolicy_parse(&p->al, o->allow, err);
	for (size_t i = 0; r == 0 && i < p->n_listen + p->n_dns; i++) {
		int fd = i < p->n_listen ? p->listen_fd[i] : p->dns_fd[i - p->n_listen];

		if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
			r = sbx_err_set(err, errno, "bad proxy socket");
	}
	if (r == 0)
		r = start_threads(p, err);
	if (r < 0) {
		proxy_release(p);
		return r;
	}
	*out = p;
	return 0;
}

void sbx_proxy_stop(struct sbx_proxy *p)
{
	uint64_t one = 1;

	if (!p || p->stopped)
		return;
	if (write(p->stop_fd, &one, sizeof(one)) < 0) {
		/* an eventfd write of 1 cannot fail here */
	}
	pthread_join(p->accept_thread, NULL);
	if (p->dns_started)
		pthread_join(p->dns_thread, NULL);
	pthread_mutex_lock(&p->lock);
	while (p->st.active > 0)
		pthread_cond_wait(&p->idle, &p->lock);
	pthread_mutex_unlock(&p->lock);
	for (size_t i = 0; i < p->n_listen; i++)
		sbx_closep(&p->listen_fd[i]);
	p->stopped = true;
}

void sbx_proxy_free(struct sbx_proxy *p)
{
	if (!p)
		return;
	sbx_proxy_stop(p);
	proxy_release(p);
}

size_t sbx_proxy_drain(struct sbx_proxy *p, struct sbx_log *log)
{
	json_t *evs = sbx_proxy_take_events(p), *ev;
	size_t i;

	json_array_foreach(evs, i, ev) sbx_log_event(log, "net", json_incref(ev));
	i = json_array_size(evs);
	json_decref(evs);
	return i;
}

/* ---- sockets ---- */

int sbx_proxy_listen(const char *hostport, uint16_t *port_out, struct sbx_err *err)
{
	_cleanup_free_ char *host = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	_cleanup_close_ int fd = -1;
	int one = 1;

	const char *colon = strrchr(hostport, ':');
	size_t hl = colon ? (size_t)(colon - hostport) : 0;
	uint64_t v = 0;

	if (hl >= 2 && hostport[0] == '[' && hostport[hl - 1] == ']')
		host = sbx_xstrndup(hostport + 1, hl - 2);
	else if (colon)
		host = sbx_xstrndup(hostport, hl);
	if (!host || sbx_parse_u64(colon + 1, &v, NULL) < 0 || v > 65535 ||
	    !sbx_proxy_sockaddr(host, (uint16_t)v, &ss, &sl))
		return sbx_err_set(err, 0, "bad listen address '%s': expected IP:PORT", hostport);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return sbx_err_set(err, errno, "cannot create a socket for '%s'", hostport);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0)
		return sbx_err_set(err, errno, "cannot listen on '%s'", hostport);
	if (listen(fd, 128) < 0)
		return sbx_err_set(err, errno, "cannot listen on '%s'", hostport);
	sl = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return sbx_err_set(err, errno, "cannot read the address of '%s'", hostport);
	if (port_out)
		*port_out =
		    ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
						  : ((struct sockaddr_in6 *)&ss)->sin6_port);
	return steal_fd(&fd);
}

void sbx_proxy_env(uint16_t port, struct sbx_strv *env)
{
	static const char *const names[] = {
	    "http_proxy",      "HTTP_PROXY",	   "https_proxy",      "HTTPS_PROXY",
	    "all_proxy",       "ALL_PROXY",	   "npm_config_proxy", "npm_config_https_proxy",
	    "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY", "PIP_PROXY",
	};
	for (size_t i = 0; i < SBX_ARRAY_SIZE(names); i++)
		sbx_strv_push_take(env, sbx_xasprintf("%s=http://127.0.0.1:%u", names[i], port));
	sbx_strv_push(env, "no_proxy=localhost,127.0.0.1,::1");
	sbx_strv_push(env, "NO_PROXY=localhost,127.0.0.1,::1");
	sbx_strv_push(env, "NODE_USE_ENV_PROXY=1");
}

const struct sbx_allowlist *sbx_proxy_allowlist(const struct sbx_proxy *p)
{
	return &p->al;
}
