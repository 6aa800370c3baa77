/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_publish.c - published ports (lib/net/publish.h): the spec
 * parser, and a live forwarder on host loopback whose "jail" is a test
 * server in a thread (the socket function makes host sockets): the token,
 * the cookie, its removal before the backend, 401s, the events, ':open'.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "publish.h"

static void test_parse(void **state)
{
	static const struct {
		const char *in, *canon;
	} good[] = {
	    {"3000", "0:3000"},
	    {"8080:80", "8080:80"},
	    {"0:80", "0:80"},
	    {"127.0.0.1:8080:80", "127.0.0.1:8080:80"},
	    {"[::1]:8080:80", "[::1]:8080:80"},
	    {"5432:5432:open", "5432:5432:open"},
	    {"5432:open", "0:5432:open"},
	    {"0.0.0.0:9000:9000:open", "0.0.0.0:9000:9000:open"},
	};
	static const char *const bad[] = {"", "0", "99999", "80:0", "a:80", "1.2.3:80:80",
					  "::1:80:80", "[::1]:80", "[x]:1:2", "1:2:3:4",
					  "8080:80:opn", "-1", "80:"};
	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct sbx_publish_port p;
		struct sbx_err e = {0};
		char buf[96];

		assert_int_equal(sbx_publish_parse(good[i].in, &p, &e), 0);
		sbx_publish_format(&p, buf, sizeof(buf));
		assert_string_equal(buf, good[i].canon);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sbx_publish_port p;
		struct sbx_err e = {0};

		assert_true(sbx_publish_parse(bad[i], &p, &e) < 0);
		assert_true(strstr(e.msg, "a port must be") || strstr(e.msg, "expected PORT") ||
			    strstr(e.msg, "is not an IP"));
	}
}

/* ---- a live forwarder ---- */

static int backend_port;
static int backend_fd = -1;

/* The "jail": answers each connection with the request head it got. */
static void *backend(void *arg)
{
	(void)arg;
	for (;;) {
		int c = accept(backend_fd, NULL, NULL);
		char buf[8192];
		size_t n = 0;
		ssize_t r;

		if (c < 0)
			return NULL;
		while (n < sizeof(buf) - 1 && (r = recv(c, buf + n, sizeof(buf) - 1 - n, 0)) > 0) {
			n += (size_t)r;
			buf[n] = '\0';
			if (strstr(buf, "\r\n\r\n"))
				break;
		}
		char head[256];
		int hl = snprintf(head, sizeof(head),
				  "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", n);

		(void)!write(c, head, (size_t)hl);
		(void)!write(c, buf, n);
		close(c);
	}
}

static int host_socket(int family, void *data)
{
	(void)data;
	return socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
}

/* One request to 127.0.0.1:port; the whole response (malloc'd). */
static char *request(int port, const char *req)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	char *out = calloc(1, 65536);
	size_t n = 0;
	ssize_t r;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	while (n < 65535 && (r = read(fd, out + n, 65535 - n)) > 0)
		n += (size_t)r;
	close(fd);
	return out;
}

static void start_backend(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	pthread_t t;

	if (backend_fd >= 0)
		return;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	backend_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(backend_fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(backend_fd, 16), 0);
	getsockname(backend_fd, (struct sockaddr *)&sa, &sl);
	backend_port = ntohs(sa.sin_port);
	pthread_create(&t, NULL, backend, NULL);
	pthread_detach(t);
}

/* A forwarder of one port to the backend; its JSON (*j) and host port. */
static int forwarder(struct sbx_publish_port *port, struct sbx_publish **p, json_t **j)
{
	struct sbx_err e = {0};

	start_backend();
	port->port = (uint16_t)backend_port;
	assert_int_equal(sbx_publish_listen(p, port, 1, &e), 0);
	assert_int_equal(sbx_publish_start(*p, host_socket, NULL, &e), 0);
	*j = sbx_publish_json(*p);
	return (int)json_integer_value(json_object_get(json_array_get(*j, 0), "host_port"));
}

static void test_preview(void **state)
{
	struct sbx_publish_port port = {.port = 0};
	struct sbx_publish *p = NULL;
	char req[1024], cookie[80] = "";
	json_t *j, *evs;
	int hp;
	char *r;

	(void)state;
	hp = forwarder(&port, &p, &j);
	assert_true(hp > 0);
	assert_string_equal(json_string_value(json_object_get(json_array_get(j, 0), "auth")), "token");
	{
		char want[160];

		snprintf(want, sizeof(want), "http://127.0.0.1:%d/?sbx_token=%s", hp,
			 sbx_publish_token(p));
		assert_string_equal(json_string_value(json_object_get(json_array_get(j, 0), "url")),
				    want);
	}
	json_decref(j);

	/* no token: 401 */
	r = request(hp, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
	assert_non_null(strstr(r, "HTTP/1.1 401"));
	free(r);
	/* the token, among other parameters: a cookie and the clean URL */
	snprintf(req, sizeof(req), "GET /a/b?x=1&sbx_token=%s&y=2 HTTP/1.1\r\nHost: x\r\n\r\n",
		 sbx_publish_token(p));
	r = request(hp, req);
	assert_non_null(strstr(r, "HTTP/1.1 302"));
	assert_non_null(strstr(r, "Location: /a/b?x=1&y=2\r\n"));
	{
		const char *c = strstr(r, "Set-Cookie: ");

		assert_non_null(c);
		sscanf(c + 12, "%79[^;]", cookie);
	}
	free(r);
	assert_null(strstr(cookie, sbx_publish_token(p)));
	/* the cookie: forwarded, without it and with Connection: close */
	snprintf(req, sizeof(req),
		 "GET /page HTTP/1.1\r\nHost: x\r\nCookie: a=1; %s; sbx_preview_1=zz\r\n"
		 "Connection: keep-alive\r\n\r\n",
		 cookie);
	r = request(hp, req);
	assert_non_null(strstr(r, "HTTP/1.1 200"));
	assert_non_null(strstr(r, "GET /page HTTP/1.1\r\n"));
	assert_non_null(strstr(r, "Cookie: a=1\r\n"));
	assert_null(strstr(r, "sbx_preview_"));
	assert_non_null(strstr(r, "Connection: close\r\n"));
	assert_null(strstr(r, "keep-alive"));
	free(r);
	/* a forged cookie and a wrong token: 401 */
	snprintf(req, sizeof(req),
		 "GET / HTTP/1.1\r\nCookie: sbx_preview_%d=00000000000000000000000000000000\r\n\r\n",
		 hp);
	r = request(hp, req);
	assert_non_null(strstr(r, "HTTP/1.1 401"));
	free(r);
	r = request(hp, "GET /?sbx_token=00000000000000000000000000000000 HTTP/1.1\r\n\r\n");
	assert_non_null(strstr(r, "HTTP/1.1 401"));
	free(r);

	usleep(100 * 1000);
	evs = sbx_publish_take_events(p);
	assert_int_equal(json_array_size(evs), 5);
	/* each event is queued as its connection ends: counted, not ordered */
	{
		size_t refused = 0, authorized = 0, forwarded = 0, i;
		json_t *ev;

		json_array_foreach(evs, i, ev)
		{
			const char *res = json_string_value(json_object_get(ev, "result"));

			if (!strcmp(res, "refused"))
				refused++;
			else if (!strcmp(res, "forwarded"))
				forwarded++;
			else if (!strcmp(res, "authorized")) {
				authorized++;
				/* the query (where the token is) is never logged */
				assert_string_equal(
				    json_string_value(json_object_get(ev, "path")), "/a/b");
			}
		}
		assert_int_equal(refused, 3);
		assert_int_equal(authorized, 1);
		assert_int_equal(forwarded, 1);
	}
	json_decref(evs);
	sbx_publish_free(p);
}

static void test_open(void **state)
{
	struct sbx_publish_port port = {.open = true};
	struct sbx_publish *p = NULL;
	json_t *j;
	char *r;
	int hp;

	(void)state;
	hp = forwarder(&port, &p, &j);
	json_decref(j);
	r = request(hp, "GET /raw HTTP/1.1\r\nCookie: sbx_preview_1=x\r\n\r\n");
	/* raw: forwarded as it came, nothing taken out */
	assert_non_null(strstr(r, "HTTP/1.1 200"));
	assert_non_null(strstr(r, "Cookie: sbx_preview_1=x"));
	free(r);
	sbx_publish_free(p);
}

static void test_port_in_use(void **state)
{
	struct sbx_publish_port port = {.port = 80};
	struct sbx_publish *p = NULL;
	struct sbx_err e = {0};

	(void)state;
	start_backend();
	port.host_port = (uint16_t)backend_port;
	assert_true(sbx_publish_listen(&p, &port, 1, &e) < 0);
	assert_null(p);
	assert_non_null(strstr(e.msg, "the host port is in use"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_preview),
	    cmocka_unit_test(test_open),
	    cmocka_unit_test(test_port_in_use),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
