/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_netpolicy.c - allowlist, address classes, and a live
 * proxy on host loopback with test HTTP servers in threads.
 *
 * Names that resolve to restricted addresses come from a private
 * /etc/hosts bind-mounted in a private mount namespace (a user namespace
 * too when not root); when that is impossible those cases are skipped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "log.h"
#include "netpolicy.h"
#include "proxy.h"

static bool have_test_hosts;

/* ---- allowlist ---- */

static void test_parse_errors(void **state)
{
	static const char *const bad[] = {
		"", "*.com", "*.1.2.3.4", "host:0", "host:65536", "host:abc", "host:",
		"[::1", "[::1]x", "a b", "[1.2.3.4]:80", "ex@mple.com", "*", "*.", "a..b",
		"-x-:80:90", "http://example.com", "example.com/path",
	};
	struct sbx_err err = { 0 };

	for (size_t i = 0; i < SBX_ARRAY_SIZE(bad); i++) {
		if (sbx_netpolicy_check_entry(bad[i], &err) == 0)
			fail_msg("entry '%s' accepted", bad[i]);
		assert_non_null(strstr(err.msg, "bad allow entry"));
	}
	static const char *const good[] = {
		"example.com", "Example.COM.", "example.com:8443", "*.example.com",
		"*.example.com:80", "1.2.3.4", "1.2.3.4:80", "[::1]:8080", "::1", "2001:db8::1",
		"localhost", "*.localhost", "under_score.example",
	};
	for (size_t i = 0; i < SBX_ARRAY_SIZE(good); i++) {
		if (sbx_netpolicy_check_entry(good[i], &err) < 0)
			fail_msg("entry '%s' refused: %s", good[i], err.msg);
	}
}

struct match_case {
	const char *host;	/* as in a request (normalised by the test) */
	uint16_t port;
	uint16_t defport;
	const char *want;	/* entry text, or NULL */
};

static void test_match_table(void **state)
{
	struct sbx_strv entries = { 0 };
	struct sbx_allowlist al;
	struct sbx_err err = { 0 };
	static const char *const list[] = {
		"api.example.com", "*.pkg.dev", "Mixed.Case.ORG.", "plain.test:8080",
		"10.1.2.3", "[2001:db8::7]:443", "fd00::1", "*.wild.test:8443",
	};
	static const struct match_case t[] = {
		{ "api.example.com", 443, 443, "api.example.com" },
		{ "API.Example.Com.", 443, 443, "api.example.com" },	/* case, trailing dot */
		{ "api.example.com", 80, 80, "api.example.com" },	/* plain HTTP default */
		{ "api.example.com", 80, 443, NULL },	/* CONNECT to 80 needs :80 */
		{ "api.example.com", 8443, 443, NULL },
		{ "example.com", 443, 443, NULL },
		{ "xapi.example.com", 443, 443, NULL },
		{ "a.api.example.com", 443, 443, NULL },	/* no implicit subdomains */
		{ "x.pkg.dev", 443, 443, "*.pkg.dev" },
		{ "a.b.pkg.dev", 443, 443, "*.pkg.dev" },
		{ "pkg.dev", 443, 443, NULL },	/* the apex is not a subdomain */
		{ "xpkg.dev", 443, 443, NULL },
		{ "mixed.case.org", 443, 443, "Mixed.Case.ORG." },
		{ "plain.test", 8080, 443, "plain.test:8080" },
		{ "plain.test", 8080, 80, "plain.test:8080" },
		{ "plain.test", 443, 443, NULL },
		{ "10.1.2.3", 443, 443, "10.1.2.3" },
		{ "10.1.2.3", 22, 443, NULL },
		{ "2001:db8::7", 443, 443, "[2001:db8::7]:443" },
		{ "2001:0db8:0::7", 443, 443, "[2001:db8::7]:443" },	/* compared as addresses */
		{ "2001:db8::8", 443, 443, NULL },
		{ "fd00::1", 443, 443, "fd00::1" },
		{ "a.wild.test", 8443, 443, "*.wild.test:8443" },
		{ "a.wild.test", 443, 443, NULL },
		{ "wild.test", 8443, 443, NULL },
	};

	for (size_t i = 0; i < SBX_ARRAY_SIZE(list); i++)
		sbx_strv_push(&entries, list[i]);
	assert_int_equal(sbx_netpolicy_parse(&al, &entries, &err), 0);
	for (size_t i = 0; i < SBX_ARRAY_SIZE(t); i++) {
		_cleanup_free_ char *h = sbx_netpolicy_norm_host(t[i].host, strlen(t[i].host));
		const struct sbx_allow_entry *e;

		assert_non_null(h);
		e = sbx_netpolicy_match(&al, h, t[i].port, t[i].defport);
		if (!t[i].want && e)
			fail_msg("%s:%u matched '%s'", t[i].host, t[i].port, e->text);
		if (t[i].want && (!e || strcmp(e->text, t[i].want) != 0))
			fail_msg("%s:%u: want '%s', got '%s'", t[i].host, t[i].port, t[i].want,
				 e ? e->text : "(none)");
	}
	sbx_netpolicy_free(&al);
	sbx_strv_free(&entries);
}

static void test_authority(void **state)
{
	char *h = NULL;
	uint16_t port = 0;

	assert_int_equal(sbx_netpolicy_parse_authority("Example.com.", 12, 443, &h, &port), 0);
	assert_string_equal(h, "example.com");
	assert_int_equal(port, 443);
	free(h);
	assert_int_equal(sbx_netpolicy_parse_authority("[::1]:8080", 10, 80, &h, &port), 0);
	assert_string_equal(h, "::1");
	assert_int_equal(port, 8080);
	free(h);
	assert_true(sbx_netpolicy_parse_authority("user@host", 9, 80, &h, &port) < 0);
	assert_true(sbx_netpolicy_parse_authority("::1", 3, 80, &h, &port) < 0);
	assert_true(sbx_netpolicy_parse_authority("a b", 3, 80, &h, &port) < 0);
	assert_true(sbx_netpolicy_parse_authority("host:99999", 10, 80, &h, &port) < 0);
	assert_true(sbx_netpolicy_parse_authority("", 0, 80, &h, &port) < 0);
}

/* ---- addresses ---- */

static void to_sa(const char *s, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &((struct sockaddr_in *)ss)->sin_addr) == 1)
		ss->ss_family = AF_INET;
	else if (inet_pton(AF_INET6, s, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1)
		ss->ss_family = AF_INET6;
	else
		fail_msg("bad test address '%s'", s);
}

static void test_classify(void **state)
{
	static const struct {
		const char *a;
		enum sbx_addr_class c;
	} t[] = {
		{ "127.0.0.1", SBX_ADDR_LOOPBACK },	  { "127.255.0.9", SBX_ADDR_LOOPBACK },
		{ "::1", SBX_ADDR_LOOPBACK },		  { "::ffff:127.0.0.1", SBX_ADDR_LOOPBACK },
		{ "::127.0.0.1", SBX_ADDR_LOOPBACK },	  { "64:ff9b::7f00:1", SBX_ADDR_LOOPBACK },
		{ "169.254.169.254", SBX_ADDR_LINKLOCAL }, { "169.254.0.1", SBX_ADDR_LINKLOCAL },
		{ "::ffff:169.254.169.254", SBX_ADDR_LINKLOCAL }, { "fe80::1", SBX_ADDR_LINKLOCAL },
		{ "febf::1", SBX_ADDR_LINKLOCAL },	  { "10.0.0.1", SBX_ADDR_PRIVATE },
		{ "10.255.255.255", SBX_ADDR_PRIVATE },	  { "172.16.0.1", SBX_ADDR_PRIVATE },
		{ "172.31.255.254", SBX_ADDR_PRIVATE },	  { "172.32.0.1", SBX_ADDR_PUBLIC },
		{ "172.15.255.255", SBX_ADDR_PUBLIC },	  { "192.168.1.1", SBX_ADDR_PRIVATE },
		{ "192.169.0.1", SBX_ADDR_PUBLIC },	  { "100.64.0.1", SBX_ADDR_PRIVATE },
		{ "100.127.255.255", SBX_ADDR_PRIVATE },  { "100.128.0.1", SBX_ADDR_PUBLIC },
		{ "100.63.255.255", SBX_ADDR_PUBLIC },	  { "::ffff:10.1.1.1", SBX_ADDR_PRIVATE },
		{ "::ffff:192.168.0.1", SBX_ADDR_PRIVATE }, { "fc00::1", SBX_ADDR_PRIVATE },
		{ "fdff::1", SBX_ADDR_PRIVATE },	  { "fec0::1", SBX_ADDR_PRIVATE },
		{ "0.0.0.0", SBX_ADDR_UNSPECIFIED },	  { "0.1.2.3", SBX_ADDR_UNSPECIFIED },
		{ "::", SBX_ADDR_UNSPECIFIED },		  { "::ffff:0.0.0.0", SBX_ADDR_UNSPECIFIED },
		{ "224.0.0.1", SBX_ADDR_MULTICAST },	  { "239.255.255.250", SBX_ADDR_MULTICAST },
		{ "ff02::1", SBX_ADDR_MULTICAST },	  { "::ffff:224.0.0.251", SBX_ADDR_MULTICAST },
		{ "240.0.0.1", SBX_ADDR_RESERVED },	  { "255.255.255.255", SBX_ADDR_RESERVED },
		{ "::ffff:255.255.255.255", SBX_ADDR_RESERVED },
		{ "8.8.8.8", SBX_ADDR_PUBLIC },		  { "1.1.1.1", SBX_ADDR_PUBLIC },
		{ "2606:4700::1111", SBX_ADDR_PUBLIC },	  { "::ffff:8.8.8.8", SBX_ADDR_PUBLIC },
		{ "2001:db8::1", SBX_ADDR_PUBLIC },
	};
	struct sockaddr_storage ss;

	for (size_t i = 0; i < SBX_ARRAY_SIZE(t); i++) {
		to_sa(t[i].a, &ss);
		enum sbx_addr_class c = sbx_netpolicy_classify((struct sockaddr *)&ss);

		if (c != t[i].c)
			fail_msg("%s: want %s, got %s", t[i].a, sbx_netpolicy_class_name(t[i].c),
				 sbx_netpolicy_class_name(c));
	}
	/* The host's loopback is loopback first; classify_host agrees on ranges. */
	to_sa("127.0.0.1", &ss);
	assert_int_equal(sbx_netpolicy_classify_host((struct sockaddr *)&ss), SBX_ADDR_LOOPBACK);
	to_sa("8.8.8.8", &ss);
	assert_int_equal(sbx_netpolicy_classify_host((struct sockaddr *)&ss), SBX_ADDR_PUBLIC);
}

/* An address configured on a host interface that is public by range. */
static bool find_host_public(struct sockaddr_storage *out)
{
	struct ifaddrs *ifa = NULL;
	bool found = false;

	if (getifaddrs(&ifa) < 0)
		return false;
	for (struct ifaddrs *i = ifa; i && !found; i = i->ifa_next) {
		if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET &&
				     i->ifa_addr->sa_family != AF_INET6))
			continue;
		if (sbx_netpolicy_classify(i->ifa_addr) == SBX_ADDR_PUBLIC) {
			memset(out, 0, sizeof(*out));
			memcpy(out, i->ifa_addr, i->ifa_addr->sa_family == AF_INET
							 ? sizeof(struct sockaddr_in)
							 : sizeof(struct sockaddr_in6));
			found = true;
		}
	}
	freeifaddrs(ifa);
	return found;
}

static void test_host_addresses(void **state)
{
	struct sbx_strv entries = { 0 };
	struct sbx_allowlist al;
	struct sbx_err err = { 0 };
	struct sockaddr_storage ss;
	char why[256], a[INET6_ADDRSTRLEN], want[300];

	/* A wrapped loopback address is loopback. */
	to_sa("::ffff:127.0.0.1", &ss);
	sbx_strv_push(&entries, "example.com");
	assert_int_equal(sbx_netpolicy_parse(&al, &entries, &err), 0);
	assert_false(sbx_netpolicy_addr_allowed(&al, &al.e[0], (struct sockaddr *)&ss, 443, 443,
						why, sizeof(why)));
	assert_string_equal(why, "address ::ffff:127.0.0.1 is loopback and no allow entry names it");
	sbx_netpolicy_free(&al);
	sbx_strv_free(&entries);

	/* The host's own public address (if it has one) is refused too. */
	if (!find_host_public(&ss))
		skip();
	sbx_netpolicy_addr_str((struct sockaddr *)&ss, a, sizeof(a));
	assert_int_equal(sbx_netpolicy_classify_host((struct sockaddr *)&ss), SBX_ADDR_HOST);
	sbx_strv_push(&entries, "example.com");
	sbx_strv_push_take(&entries, sbx_xasprintf(strchr(a, ':') ? "[%s]:8080" : "%s:8080", a));
	assert_int_equal(sbx_netpolicy_parse(&al, &entries, &err), 0);
	assert_false(sbx_netpolicy_addr_allowed(&al, &al.e[0], (struct sockaddr *)&ss, 443, 443,
						why, sizeof(why)));
	snprintf(want, sizeof(want), "address %s is a host address and no allow entry names it", a);
	assert_string_equal(why, want);
	assert_true(sbx_netpolicy_addr_allowed(&al, &al.e[0], (struct sockaddr *)&ss, 8080, 443,
					       why, sizeof(why)));
	sbx_netpolicy_free(&al);
	sbx_strv_free(&entries);
}

static void test_addr_allowed(void **state)
{
	struct sbx_strv entries = { 0 };
	struct sbx_allowlist al;
	struct sbx_err err = { 0 };
	struct sockaddr_storage ss;
	char why[256] = "";
	static const char *const list[] = { "evil.example", "127.0.0.1:8080", "localhost:9000",
					    "10.0.0.5", "*.localhost:7000" };

	for (size_t i = 0; i < SBX_ARRAY_SIZE(list); i++)
		sbx_strv_push(&entries, list[i]);
	assert_int_equal(sbx_netpolicy_parse(&al, &entries, &err), 0);
	struct sockaddr *sa = (struct sockaddr *)&ss;

	to_sa("169.254.169.254", &ss);	/* a name entry never unlocks a restricted address */
	assert_false(sbx_netpolicy_addr_allowed(&al, &al.e[0], sa, 443, 443, why, sizeof(why)));
	assert_string_equal(why, "address 169.254.169.254 is link-local and no allow entry names it");
	to_sa("127.0.0.1", &ss);
	assert_false(sbx_netpolicy_addr_allowed(&al, &al.e[0], sa, 443, 443, why, sizeof(why)));
	assert_true(sbx_netpolicy_addr_allowed(&al, &al.e[0], sa, 8080, 443, why, sizeof(why)));
	assert_true(sbx_netpolicy_addr_allowed(&al, &al.e[2], sa, 9000, 443, why, sizeof(why)));
	assert_true(sbx_netpolicy_addr_allowed(&al, &al.e[4], sa, 7000, 443, why, sizeof(why)));
	to_sa("::1", &ss);
	assert_true(sbx_netpolicy_addr_allowed(&al, &al.e[2], sa, 9000, 443, why, sizeof(why)));
	to_sa("10.0.0.5", &ss);
	assert_true(sbx_netpolicy_addr_allowed(&al, &al.e[0], sa, 443, 443, why, sizeof(why)));
	assert_false(sbx_netpolicy_addr_allowed(&al, &al.e[0], sa, 22, 443, why, sizeof(why)));
	to_sa("10.0.0.6", &ss);
	assert_false(sbx_netpolicy_addr_allowed(&al, &al.e[0], sa, 443, 443, why, sizeof(why)));
	assert_string_equal(why, "address 10.0.0.6 is private and no allow entry names it");
	to_sa("93.184.215.14", &ss);
	assert_true(sbx_netpolicy_addr_allowed(&al, &al.e[0], sa, 443, 443, why, sizeof(why)));
	sbx_netpolicy_free(&al);
	sbx_strv_free(&entries);
}

/* ---- a live proxy ---- */

struct server {
	int fd;
	uint16_t port;
	pthread_t t;
	pthread_mutex_t lock;
	char last[4096];	/* the last request head received */
	size_t last_len;
	char response[256];
};

static void *server_main(void *arg)
{
	struct server *s = arg;

	for (;;) {
		int c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
		char buf[4096];
		size_t n = 0;

		if (c < 0)
			return NULL;
		while (n < sizeof(buf) - 1) {
			ssize_t k = recv(c, buf + n, sizeof(buf) - 1 - n, 0);

			if (k <= 0)
				break;
			n += (size_t)k;
			buf[n] = '\0';
			if (strstr(buf, "\r\n\r\n"))
				break;
		}
		pthread_mutex_lock(&s->lock);
		memcpy(s->last, buf, n);
		s->last_len = n;
		s->last[n] = '\0';
		pthread_mutex_unlock(&s->lock);
		sbx_write_all(c, s->response, strlen(s->response));
		close(c);
	}
}

static void server_start(struct server *s)
{
	struct sbx_err err = { 0 };

	memset(s, 0, sizeof(*s));
	s->fd = sbx_proxy_listen("127.0.0.1:0", &s->port, &err);
	assert_true(s->fd >= 0);
	snprintf(s->response, sizeof(s->response),
		 "HTTP/1.1 200 OK\r\nContent-Length: 13\r\nConnection: close\r\n\r\n"
		 "hello %05u\r\n", s->port);
	pthread_mutex_init(&s->lock, NULL);
	assert_int_equal(pthread_create(&s->t, NULL, server_main, s), 0);
}

struct fixture {
	struct server a, b;
	struct sbx_proxy *proxy;
	uint16_t port;
	pthread_mutex_t lock;
	json_t *events;
};

static void on_event(json_t *ev, void *data)
{
	struct fixture *f = data;

	pthread_mutex_lock(&f->lock);
	json_array_append(f->events, ev);
	pthread_mutex_unlock(&f->lock);
}

static int live_setup(void **state)
{
	struct fixture *f = sbx_xcalloc(1, sizeof(*f));
	struct sbx_strv allow = { 0 };
	struct sbx_err err = { 0 };
	int fd;

	server_start(&f->a);
	server_start(&f->b);
	pthread_mutex_init(&f->lock, NULL);
	f->events = json_array();
	sbx_strv_push_take(&allow, sbx_xasprintf("127.0.0.1:%u", f->a.port));
	sbx_strv_push_take(&allow, sbx_xasprintf("localhost:%u", f->a.port));
	sbx_strv_push_take(&allow, sbx_xasprintf("loop.test:%u", f->a.port));
	sbx_strv_push_take(&allow, sbx_xasprintf("loop.test:%u", f->b.port));
	sbx_strv_push(&allow, "metadata.test");
	fd = sbx_proxy_listen("127.0.0.1:0", &f->port, &err);
	assert_true(fd >= 0);
	assert_int_equal(sbx_proxy_start(&f->proxy, fd, &allow, on_event, f, &err), 0);
	sbx_strv_free(&allow);
	*state = f;
	return 0;
}

static int live_teardown(void **state)
{
	struct fixture *f = *state;

	sbx_proxy_free(f->proxy);
	shutdown(f->a.fd, SHUT_RDWR);
	shutdown(f->b.fd, SHUT_RDWR);
	pthread_join(f->a.t, NULL);
	pthread_join(f->b.t, NULL);
	close(f->a.fd);
	close(f->b.fd);
	json_decref(f->events);
	free(f);
	return 0;
}

static int dial(uint16_t port)
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = 10 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&in, sizeof(in)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* Read until EOF (or until `until` appears when given). */
static size_t read_reply(int fd, char *buf, size_t cap, const char *until)
{
	size_t n = 0;

	while (n < cap - 1) {
		ssize_t k = recv(fd, buf + n, cap - 1 - n, 0);

		if (k <= 0)
			break;
		n += (size_t)k;
		buf[n] = '\0';
		if (until && strstr(buf, until))
			break;
	}
	buf[n] = '\0';
	return n;
}

/* Send one request through the proxy, return the whole reply. */
static size_t roundtrip(struct fixture *f, const char *req, size_t len, char *out, size_t cap)
{
	int fd = dial(f->port);
	size_t n;

	assert_int_equal(sbx_write_all(fd, req, len), 0);
	n = read_reply(fd, out, cap, NULL);
	close(fd);
	return n;
}

/* Wait for event number i (connections end asynchronously). */
static json_t *event(struct fixture *f, size_t i)
{
	for (int tries = 0; tries < 500; tries++) {
		pthread_mutex_lock(&f->lock);
		json_t *e = json_array_get(f->events, i);

		pthread_mutex_unlock(&f->lock);
		if (e)
			return e;
		usleep(10000);
	}
	fail_msg("no event %zu", i);
	return NULL;
}

/* The event must equal `want` exactly, apart from ts and ms (checked apart). */
static void check_event(json_t *ev, json_t *want)
{
	json_t *copy = json_deep_copy(ev);

	assert_true(json_is_string(json_object_get(ev, "ts")));
	assert_true(json_is_number(json_object_get(ev, "ms")));
	assert_true(json_number_value(json_object_get(ev, "ms")) >= 0);
	json_object_del(copy, "ts");
	json_object_del(copy, "ms");
	if (!json_equal(copy, want)) {
		char *g = json_dumps(copy, JSON_SORT_KEYS), *w = json_dumps(want, JSON_SORT_KEYS);

		fail_msg("event\n got  %s\n want %s", g, w);
	}
	json_decref(copy);
	json_decref(want);
}

static json_t *want_event(const char *method, const char *host, int port, const char *addr,
			  bool allowed, const char *reason, int status, size_t up, size_t down)
{
	return json_pack("{s:s?, s:s?, s:o, s:s?, s:b, s:s, s:s, s:i, s:I, s:I, s:s}", "method",
			 method, "host", host, "port", port ? json_integer(port) : json_null(),
			 "address", addr, "allowed", allowed, "result", allowed ? "ok" : "denied",
			 "reason", reason, "status", status, "bytes_up", (json_int_t)up, "bytes_down",
			 (json_int_t)down, "via", "proxy");
}

static void test_live_get_allowed(void **state)
{
	struct fixture *f = *state;
	char req[256], reply[1024], reason[64];
	int n = snprintf(req, sizeof(req),
			 "GET http://127.0.0.1:%u/some/path?q=1 HTTP/1.1\r\nHost: evil.test\r\n"
			 "Proxy-Connection: keep-alive\r\nUser-Agent: t\r\nAccept: */*\r\n\r\n",
			 f->a.port);
	size_t got = roundtrip(f, req, (size_t)n, reply, sizeof(reply));

	assert_int_equal(got, strlen(f->a.response));
	assert_string_equal(reply, f->a.response);
	/* origin form, Host replaced by the URI's authority, hop-by-hop dropped */
	char want[512];

	snprintf(want, sizeof(want),
		 "GET /some/path?q=1 HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nUser-Agent: t\r\n"
		 "Accept: */*\r\nConnection: close\r\n\r\n", f->a.port);
	pthread_mutex_lock(&f->a.lock);
	assert_string_equal(f->a.last, want);
	pthread_mutex_unlock(&f->a.lock);
	snprintf(reason, sizeof(reason), "allowed by '127.0.0.1:%u'", f->a.port);
	check_event(event(f, 0), want_event("GET", "127.0.0.1", f->a.port, "127.0.0.1", true,
					    reason, 200, strlen(want), got));
}

static void test_live_connect_allowed(void **state)
{
	struct fixture *f = *state;
	char req[256], reply[1024], reason[64];
	static const char inner[] = "GET /tunnel HTTP/1.1\r\nHost: x\r\n\r\n";
	int fd = dial(f->port), n;

	n = snprintf(req, sizeof(req), "CONNECT localhost:%u HTTP/1.1\r\nHost: localhost:%u\r\n\r\n",
		     f->a.port, f->a.port);
	assert_int_equal(sbx_write_all(fd, req, (size_t)n), 0);
	read_reply(fd, reply, sizeof(reply), "\r\n\r\n");
	assert_string_equal(reply, "HTTP/1.1 200 Connection established\r\n"
				   "Proxy-Agent: sbx-proxy\r\n\r\n");
	assert_int_equal(sbx_write_all(fd, inner, strlen(inner)), 0);
	size_t got = read_reply(fd, reply, sizeof(reply), NULL);

	close(fd);
	assert_string_equal(reply, f->a.response);
	pthread_mutex_lock(&f->a.lock);
	assert_string_equal(f->a.last, inner);	/* a tunnel passes bytes unchanged */
	pthread_mutex_unlock(&f->a.lock);
	snprintf(reason, sizeof(reason), "allowed by 'localhost:%u'", f->a.port);
	check_event(event(f, 0), want_event("CONNECT", "localhost", f->a.port, "127.0.0.1", true,
					    reason, 200, strlen(inner), got));
}

/* A denied request: exact reply and event. */
static void expect_denied(struct fixture *f, const char *req, int status, const char *text,
			  const char *reason, json_t *want)
{
	char reply[1024], exp[1024];

	roundtrip(f, req, strlen(req), reply, sizeof(reply));
	snprintf(exp, sizeof(exp),
		 "HTTP/1.1 %d %s\r\nServer: sbx-proxy\r\nX-Sbx-Deny: %s\r\n"
		 "Content-Type: text/plain\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n"
		 "sbx-proxy: %s\n", status, text, reason, strlen(reason) + 12, reason);
	assert_string_equal(reply, exp);
	pthread_mutex_lock(&f->lock);
	size_t i = json_array_size(f->events);

	pthread_mutex_unlock(&f->lock);
	for (int tries = 0; tries < 500 && i == 0; tries++) {
		usleep(10000);
		pthread_mutex_lock(&f->lock);
		i = json_array_size(f->events);
		pthread_mutex_unlock(&f->lock);
	}
	check_event(event(f, i - 1), want);
}

static void test_live_denied_port(void **state)
{
	struct fixture *f = *state;
	char req[256], reason[128];

	snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/ HTTP/1.1\r\n\r\n", f->b.port);
	snprintf(reason, sizeof(reason), "127.0.0.1 port %u is not in the allowlist", f->b.port);
	expect_denied(f, req, 403, "Forbidden", reason,
		      want_event("GET", "127.0.0.1", f->b.port, NULL, false, reason, 403, 0, 0));
	pthread_mutex_lock(&f->b.lock);
	assert_int_equal(f->b.last_len, 0);	/* the server never saw a byte */
	pthread_mutex_unlock(&f->b.lock);
	snprintf(req, sizeof(req), "CONNECT localhost:%u HTTP/1.1\r\n\r\n", f->b.port);
	snprintf(reason, sizeof(reason), "localhost port %u is not in the allowlist", f->b.port);
	expect_denied(f, req, 403, "Forbidden", reason,
		      want_event("CONNECT", "localhost", f->b.port, NULL, false, reason, 403, 0, 0));
	/* other spellings of 127.0.0.1 are names, not the listed literal */
	static const char *const alias[] = { "2130706433", "127.1", "0x7f000001" };

	for (size_t i = 0; i < SBX_ARRAY_SIZE(alias); i++) {
		_cleanup_free_ char *norm = sbx_netpolicy_norm_host(alias[i], strlen(alias[i]));

		snprintf(req, sizeof(req), "GET http://%s:%u/ HTTP/1.1\r\n\r\n", alias[i], f->a.port);
		snprintf(reason, sizeof(reason), "%s port %u is not in the allowlist", norm,
			 f->a.port);
		expect_denied(f, req, 403, "Forbidden", reason,
			      want_event("GET", norm, f->a.port, NULL, false, reason, 403, 0, 0));
	}
	/* the metadata address as a literal, not listed */
	expect_denied(f, "GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\n\r\n", 403,
		      "Forbidden", "169.254.169.254 port 80 is not in the allowlist",
		      want_event("GET", "169.254.169.254", 80, NULL, false,
				 "169.254.169.254 port 80 is not in the allowlist", 403, 0, 0));
}

static void test_live_names_to_restricted(void **state)
{
	struct fixture *f = *state;
	char req[256], reason[128];

	if (!have_test_hosts)
		skip();
	/* allowed by name, but the name resolves to loopback: refused */
	snprintf(req, sizeof(req), "GET http://loop.test:%u/ HTTP/1.1\r\n\r\n", f->b.port);
	snprintf(reason, sizeof(reason), "address 127.0.0.1 is loopback and no allow entry names it");
	expect_denied(f, req, 403, "Forbidden", reason,
		      want_event("GET", "loop.test", f->b.port, "127.0.0.1", false, reason, 403, 0,
				 0));
	pthread_mutex_lock(&f->b.lock);
	assert_int_equal(f->b.last_len, 0);	/* the server never saw a byte */
	pthread_mutex_unlock(&f->b.lock);
	/* ...unless an entry names that address and port ("127.0.0.1:A"): the
	 * jail could reach it by the literal anyway */
	char reply[512];

	snprintf(req, sizeof(req), "GET http://loop.test:%u/ HTTP/1.1\r\n\r\n", f->a.port);
	roundtrip(f, req, strlen(req), reply, sizeof(reply));
	assert_string_equal(reply, f->a.response);
	snprintf(reason, sizeof(reason), "allowed by 'loop.test:%u'", f->a.port);
	pthread_mutex_lock(&f->a.lock);
	size_t up = f->a.last_len;	/* the rewritten head, as the server got it */

	assert_non_null(strstr(f->a.last, "Host: loop.test:"));
	pthread_mutex_unlock(&f->a.lock);
	check_event(event(f, 1), want_event("GET", "loop.test", f->a.port, "127.0.0.1", true,
					    reason, 200, up, strlen(f->a.response)));
	/* allowed by name, resolving to the cloud metadata address: refused */
	strcpy(reason, "address 169.254.169.254 is link-local and no allow entry names it");
	expect_denied(f, "GET http://metadata.test/ HTTP/1.1\r\n\r\n", 403, "Forbidden", reason,
		      want_event("GET", "metadata.test", 80, "169.254.169.254", false, reason, 403,
				 0, 0));
	expect_denied(f, "CONNECT metadata.test:443 HTTP/1.1\r\n\r\n", 403, "Forbidden", reason,
		      want_event("CONNECT", "metadata.test", 443, "169.254.169.254", false, reason,
				 403, 0, 0));
}

static void test_live_malformed(void **state)
{
	struct fixture *f = *state;
	static const char origin[] = "not a proxy request: expected an absolute http:// URI";

	expect_denied(f, "GARBAGE\r\n\r\n", 400, "Bad Request", "malformed request line",
		      want_event(NULL, NULL, 0, NULL, false, "malformed request line", 400,
				 0, 0));
	expect_denied(f, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 400, "Bad Request", origin,
		      want_event("GET", NULL, 0, NULL, false, origin, 400, 0, 0));
	expect_denied(f, "GET https://x.test/ HTTP/1.1\r\n\r\n", 400, "Bad Request",
		      "https:// URIs need CONNECT",
		      want_event("GET", NULL, 0, NULL, false, "https:// URIs need CONNECT", 400,
				 0, 0));
	expect_denied(f, "GET http://user@x.test/ HTTP/1.1\r\n\r\n", 400, "Bad Request", origin,
		      want_event("GET", NULL, 0, NULL, false, origin, 400, 0, 0));
	expect_denied(f, "GET http://x.test/ HTTP/1.1\r\n folded: header\r\n\r\n", 400,
		      "Bad Request", "malformed header",
		      want_event("GET", "x.test", 80, NULL, false, "malformed header", 400, 0, 0));

	/* a request head over the cap */
	size_t big = 70 * 1024;
	char *req = sbx_xmalloc(big + 64);
	int n = snprintf(req, 64, "GET http://x.test/ HTTP/1.1\r\nX-Big: ");

	memset(req + n, 'a', big);
	memcpy(req + n + big, "\r\n\r\n", 5);
	expect_denied(f, req, 431, "Request Header Fields Too Large",
		      "request head over 65536 bytes",
		      want_event(NULL, NULL, 0, NULL, false, "request head over 65536 bytes", 431,
				 0, 0));
	free(req);
}

static void test_live_stats_and_queue(void **state)
{
	struct fixture *f = *state;
	struct sbx_proxy_stats st;
	struct sbx_proxy *q = NULL;
	struct sbx_strv allow = { 0 };
	struct sbx_err err = { 0 };
	uint16_t port;
	char req[128], reply[512];

	(void)f;
	sbx_strv_push_take(&allow, sbx_xasprintf("127.0.0.1:%u", f->a.port));
	int fd = sbx_proxy_listen("127.0.0.1:0", &port, &err);

	assert_int_equal(sbx_proxy_start(&q, fd, &allow, NULL, NULL, &err), 0);
	int c = dial(port), n = snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/ HTTP/1.0\r\n\r\n",
					 f->a.port);

	sbx_write_all(c, req, (size_t)n);
	read_reply(c, reply, sizeof(reply), NULL);
	close(c);
	struct pollfd pf = { .fd = sbx_proxy_event_fd(q), .events = POLLIN };

	assert_int_equal(poll(&pf, 1, 5000), 1);
	json_t *evs = sbx_proxy_take_events(q);

	assert_int_equal(json_array_size(evs), 1);
	assert_true(json_is_true(json_object_get(json_array_get(evs, 0), "allowed")));
	json_decref(evs);
	sbx_proxy_get_stats(q, &st);
	assert_int_equal(st.connections, 1);
	assert_int_equal(st.allowed, 1);
	assert_int_equal(st.denied, 0);
	assert_int_equal(st.bytes_down, strlen(f->a.response));
	sbx_proxy_free(q);
	sbx_strv_free(&allow);
}

/* Allowed, but nothing listens there: failed, counted apart from allowed. */
static void test_live_failed(void **state)
{
	struct sbx_proxy_stats st;
	struct sbx_proxy *q = NULL;
	struct sbx_strv allow = { 0 };
	struct sbx_err err = { 0 };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	uint16_t port, closed;
	char req[128], reply[512];
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	(void)state;
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &al), 0);
	closed = ntohs(a.sin_port);
	close(s); /* now nothing listens on it */
	sbx_strv_push_take(&allow, sbx_xasprintf("127.0.0.1:%u", closed));
	int fd = sbx_proxy_listen("127.0.0.1:0", &port, &err);

	assert_int_equal(sbx_proxy_start(&q, fd, &allow, NULL, NULL, &err), 0);
	int c = dial(port), n = snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/ HTTP/1.0\r\n\r\n",
					 closed);

	sbx_write_all(c, req, (size_t)n);
	read_reply(c, reply, sizeof(reply), NULL);
	close(c);
	assert_non_null(strstr(reply, "502 Bad Gateway"));
	struct pollfd pf = { .fd = sbx_proxy_event_fd(q), .events = POLLIN };

	assert_int_equal(poll(&pf, 1, 5000), 1);
	json_t *evs = sbx_proxy_take_events(q);
	json_t *e = json_array_get(evs, 0);

	assert_true(json_is_true(json_object_get(e, "allowed")));
	assert_string_equal(json_string_value(json_object_get(e, "result")), "failed");
	assert_non_null(strstr(json_string_value(json_object_get(e, "reason")), "Connection refused"));
	json_decref(evs);
	sbx_proxy_get_stats(q, &st);
	assert_int_equal(st.allowed, 0);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.denied, 0);
	sbx_proxy_free(q);
	sbx_strv_free(&allow);
}

/* Stopping cuts open tunnels; their events still come, and drain to the log. */
static void test_live_stop_and_drain(void **state)
{
	struct fixture *f = *state;
	struct sbx_proxy *q = NULL;
	struct sbx_strv allow = { 0 };
	struct sbx_err err = { 0 };
	struct sbx_log log;
	struct sbx_proxy_stats st;
	uint16_t port;
	char req[128], reply[512];

	sbx_strv_push_take(&allow, sbx_xasprintf("127.0.0.1:%u", f->a.port));
	int fd = sbx_proxy_listen("127.0.0.1:0", &port, &err);

	assert_int_equal(sbx_proxy_start(&q, fd, &allow, NULL, NULL, &err), 0);
	int c = dial(port), n = snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n",
					 f->a.port);

	sbx_write_all(c, req, (size_t)n);
	read_reply(c, reply, sizeof(reply), "\r\n\r\n");
	assert_non_null(strstr(reply, " 200 "));
	int half = dial(port);	/* and one that sent half a request head */

	sbx_write_all(half, "GET http://", 11);
	usleep(100000);
	sbx_proxy_stop(q);	/* the tunnel is idle and open: stop must cut it */
	sbx_proxy_stop(q);	/* idempotent */
	assert_int_equal(recv(c, reply, sizeof(reply), 0), 0);	/* closed by the proxy */
	assert_int_equal(recv(half, reply, sizeof(reply), 0), 0);
	close(c);
	close(half);
	sbx_proxy_get_stats(q, &st);
	assert_int_equal(st.active, 0);
	assert_int_equal(st.allowed, 1);
	/* Half a request head is no request: counted, not an event. */
	assert_int_equal(st.denied, 0);
	assert_int_equal(st.idle, 1);
	sbx_log_init(&log);
	assert_int_equal(sbx_proxy_drain(q, &log), 1);
	json_t *ev = json_array_get(log.events, 0);

	assert_string_equal(json_string_value(json_object_get(ev, "event")), "net");
	assert_string_equal(json_string_value(json_object_get(ev, "method")), "CONNECT");
	snprintf(req, sizeof(req), "allowed by '127.0.0.1:%u'; cut by proxy stop", f->a.port);
	assert_string_equal(json_string_value(json_object_get(ev, "reason")), req);
	assert_int_equal(sbx_proxy_drain(q, &log), 0);
	sbx_log_free(&log);
	sbx_proxy_free(q);
	sbx_strv_free(&allow);
}

/* One CONNECT through the proxy at port: the status of its reply. */
static int connect_status(uint16_t port, uint16_t target)
{
	char req[128], reply[512] = "";
	int c = dial(port), n = snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n",
					 target);

	sbx_write_all(c, req, (size_t)n);
	read_reply(c, reply, sizeof(reply), "\r\n\r\n");
	close(c);
	return strncmp(reply, "HTTP/1.1 ", 9) == 0 ? atoi(reply + 9) : 0;
}

/*
 * More idle connections than the proxy serves at once (each sent nothing,
 * or half a request head): new requests are still answered, each making
 * room by closing the one that has waited longest for its request; the
 * idle ones are counted, not logged one by one, and a busy relay is never
 * the one closed.
 */
static void test_live_idle_flood(void **state)
{
	struct fixture *f = *state;
	struct sbx_proxy_stats st;
	struct sbx_proxy *q = NULL;
	struct sbx_strv allow = { 0 };
	struct sbx_err err = { 0 };
	struct sbx_log log;
	enum { FLOOD = 600 };
	int idle[FLOOD], ok = 0;
	uint16_t port;

	struct rlimit rl;

	/* the flood's descriptors and the proxy's, in one process */
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < 4096 && rl.rlim_max >= 4096)
		rl.rlim_cur = 4096;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	sbx_strv_push_take(&allow, sbx_xasprintf("127.0.0.1:%u", f->a.port));
	int fd = sbx_proxy_listen("127.0.0.1:0", &port, &err);

	assert_int_equal(sbx_proxy_start(&q, fd, &allow, NULL, NULL, &err), 0);
	assert_int_equal(connect_status(port, f->a.port), 200);
	for (int i = 0; i < FLOOD; i++) {
		idle[i] = dial(port);
		if (i % 2)
			sbx_write_all(idle[i], "GET http://", 11);
	}
	usleep(200000);
	for (int i = 0; i < 40; i++)
		ok += connect_status(port, f->a.port) == 200;
	assert_int_equal(ok, 40);
	/* An evicted connection is shut down at once; its thread ends on its
	 * own (later under load): wait for them, 2 s at most. */
	for (int i = 0; i < 200; i++) {
		sbx_proxy_get_stats(q, &st);
		if (st.active <= (uint64_t)sbx_proxy_max_connections())
			break;
		usleep(10000);
	}
	assert_true(st.active <= (uint64_t)sbx_proxy_max_connections());
	assert_true(st.evicted >= FLOOD - (uint64_t)sbx_proxy_max_connections());
	assert_int_equal(st.refused, 0);
	for (int i = 0; i < FLOOD; i++)
		close(idle[i]);
	sbx_proxy_stop(q);
	sbx_proxy_get_stats(q, &st);
	assert_int_equal(st.idle, FLOOD);
	assert_int_equal(st.allowed, 41);
	sbx_log_init(&log);
	assert_int_equal(sbx_proxy_drain(q, &log), 41);
	sbx_log_free(&log);
	sbx_proxy_free(q);
	sbx_strv_free(&allow);
}

static void test_env(void **state)
{
	struct sbx_strv env = { 0 };

	sbx_proxy_env(3128, &env);
	assert_true(sbx_strv_contains(&env, "HTTPS_PROXY=http://127.0.0.1:3128"));
	assert_true(sbx_strv_contains(&env, "http_proxy=http://127.0.0.1:3128"));
	assert_true(sbx_strv_contains(&env, "NO_PROXY=localhost,127.0.0.1,::1"));
	assert_true(sbx_strv_contains(&env, "npm_config_https_proxy=http://127.0.0.1:3128"));
	sbx_strv_free(&env);
}

/* ---- a private /etc/hosts ---- */

static bool enter_test_hosts(void)
{
	static const char hosts[] = "127.0.0.1 localhost\n127.0.0.1 loop.test\n"
				    "169.254.169.254 metadata.test\n";
	char path[] = "/tmp/sbx-test-hosts-XXXXXX";
	uid_t uid = getuid();
	gid_t gid = getgid();
	int fd = mkstemp(path);
	bool ok;

	if (fd < 0)
		return false;
	sbx_write_all(fd, hosts, sizeof(hosts) - 1);
	fchmod(fd, 0644);
	close(fd);
	if (unshare(CLONE_NEWNS) < 0) {
		char map[64];

		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			goto out;
		snprintf(map, sizeof(map), "0 %u 1\n", uid);
		sbx_write_file("/proc/self/uid_map", map, strlen(map));
		sbx_write_file("/proc/self/setgroups", "deny", 4);
		snprintf(map, sizeof(map), "0 %u 1\n", gid);
		sbx_write_file("/proc/self/gid_map", map, strlen(map));
	}
	ok = mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == 0 &&
	     mount(path, "/etc/hosts", "none", MS_BIND, NULL) == 0;
	unlink(path);
	return ok;
out:
	unlink(path);
	return false;
}

/* One DNS query for name (type qtype) to the socket at port; the reply's
 * rcode, and its first A record in *a. */
static int dns_ask(uint16_t port, const char *name, uint16_t qtype, struct in_addr *a, int *answers)
{
	unsigned char q[300] = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0}, r[600];
	size_t n = 12;
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct timeval tv = {.tv_sec = 5};
	ssize_t got;

	for (const char *p = name; *p;) {
		size_t l = strcspn(p, ".");

		q[n++] = (unsigned char)l;
		memcpy(q + n, p, l);
		n += l;
		p += l + (p[l] == '.');
	}
	q[n++] = 0;
	q[n++] = (unsigned char)(qtype >> 8);
	q[n++] = (unsigned char)qtype;
	q[n++] = 0;
	q[n++] = 1;
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	assert_true(sendto(s, q, n, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)n);
	got = recv(s, r, sizeof(r), 0);
	close(s);
	assert_true(got >= (ssize_t)n);
	assert_int_equal(r[0] << 8 | r[1], 0x1234);
	assert_true(r[2] & 0x80); /* a response */
	*answers = r[6] << 8 | r[7];
	if (*answers && got >= (ssize_t)n + 16)
		memcpy(a, r + n + 12, 4);
	return r[3] & 15;
}

/* The jail's DNS: listed names answer, others NXDOMAIN, each an event. */
static void test_live_dns(void **state)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), l;
	struct sbx_strv allow = {0};
	struct sbx_proxy *q = NULL;
	struct sbx_proxy_stats st;
	struct sbx_err err;
	struct in_addr a = {0};
	int n = 0;
	json_t *evs;

	l = sbx_proxy_listen("127.0.0.1:0", NULL, &err);
	assert_true(l >= 0 && u >= 0);
	assert_int_equal(bind(u, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(u, (struct sockaddr *)&sa, &sl), 0);
	sbx_strv_push(&allow, "localhost:8080");
	sbx_strv_push(&allow, "*.corp.test");
	struct sbx_proxy_opts o = {.listen_fds = &l, .n_listen = 1, .dns_fds = &u, .n_dns = 1,
				   .allow = &allow};

	assert_int_equal(sbx_proxy_start_opts(&q, &o, &err), 0);
	assert_int_equal(dns_ask(ntohs(sa.sin_port), "nope.test", 1, &a, &n), 3);
	assert_int_equal(n, 0);
	assert_int_equal(dns_ask(ntohs(sa.sin_port), "corp.test", 1, &a, &n), 3); /* apex: no */
	assert_int_equal(dns_ask(ntohs(sa.sin_port), "LocalHost", 1, &a, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ntohl(a.s_addr), INADDR_LOOPBACK);
	assert_int_equal(dns_ask(ntohs(sa.sin_port), "localhost", 16, &a, &n), 0); /* TXT: none */
	assert_int_equal(n, 0);
	sbx_proxy_stop(q);
	sbx_proxy_get_stats(q, &st);
	assert_int_equal(st.dns, 4);
	assert_int_equal(st.denied, 2);
	evs = sbx_proxy_take_events(q);
	assert_int_equal(json_array_size(evs), 4);
	json_t *e0 = json_array_get(evs, 0);

	assert_string_equal(json_string_value(json_object_get(e0, "method")), "DNS");
	assert_string_equal(json_string_value(json_object_get(e0, "host")), "nope.test");
	assert_string_equal(json_string_value(json_object_get(e0, "rcode")), "NXDOMAIN");
	assert_string_equal(json_string_value(json_object_get(e0, "reason")),
			    "'nope.test' is not in the allowlist");
	assert_string_equal(json_string_value(json_object_get(json_array_get(evs, 2), "address")),
			    "127.0.0.1");
	json_decref(evs);
	sbx_proxy_free(q);
	sbx_strv_free(&allow);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_match_table),
		cmocka_unit_test(test_authority),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_host_addresses),
		cmocka_unit_test(test_addr_allowed),
		cmocka_unit_test(test_env),
		cmocka_unit_test_setup_teardown(test_live_get_allowed, live_setup, live_teardown),
		cmocka_unit_test_setup_teardown(test_live_connect_allowed, live_setup, live_teardown),
		cmocka_unit_test_setup_teardown(test_live_denied_port, live_setup, live_teardown),
		cmocka_unit_test_setup_teardown(test_live_names_to_restricted, live_setup,
						live_teardown),
		cmocka_unit_test_setup_teardown(test_live_malformed, live_setup, live_teardown),
		cmocka_unit_test_setup_teardown(test_live_stats_and_queue, live_setup, live_teardown),
		cmocka_unit_test_setup_teardown(test_live_failed, live_setup, live_teardown),
		cmocka_unit_test_setup_teardown(test_live_stop_and_drain, live_setup, live_teardown),
		cmocka_unit_test_setup_teardown(test_live_idle_flood, live_setup, live_teardown),
		cmocka_unit_test(test_live_dns),
	};

	have_test_hosts = enter_test_hosts();
	if (!have_test_hosts)
		fprintf(stderr, "note: no private /etc/hosts (namespaces unavailable): "
				"name-to-restricted-address cases skipped\n");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
