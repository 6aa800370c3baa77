/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_proxy.c - libFuzzer harness for the allowlist proxy's
 * request parser (lib/net/proxy_conn.c: the request line, the target's
 * authority through lib/net/netpolicy.c, the header lines and the origin-form
 * rewrite) and the allowlist match.
 *
 * Each input is what a jail sends on a fresh proxy connection.  Where a
 * whole request head is in it, sbx_proxy_parse_request() parses it as the
 * proxy does; a head it accepts must give a host, and for plain HTTP a
 * rewritten head that is one request only: CRLF line ends, exactly one
 * Host line, nothing after its blank line (no header or request smuggled
 * upstream).  The host is then matched against a fixed allowlist.  Built
 * and run by `make fuzz`; seeds in tests/fuzz/corpus/proxy/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "netpolicy.h"
#include "proxy_int.h"
#include "util.h"
#include "fuzz_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct sbx_allowlist proxy_al;

static void proxy_allowlist_once(void)
{
	static const char *const entries[] = {"example.com", "*.example.org:8443", "10.0.0.1",
					      "[::1]:8080", "registry.npmjs.org", "*.googleapis.com"};
	static bool done;
	struct sbx_strv v = {0};
	struct sbx_err err = {0};

	if (done)
		return;
	done = true;
	for (size_t i = 0; i < SBX_ARRAY_SIZE(entries); i++)
		sbx_strv_push(&v, entries[i]);
	if (sbx_netpolicy_parse(&proxy_al, &v, &err) != 0) {
		fprintf(stderr, "allowlist: %s\n", err.msg);
		abort();
	}
	sbx_strv_free(&v);
}

static void proxy_fail(const char *what, const char *head)
{
	fprintf(stderr, "%s\n--- rewritten head\n%s\n", what, head ? head : "(none)");
	abort();
}

/* One request, CRLF only, one Host line, the blank line last. */
static void check_rewrite(const struct proxy_conn *c, const char *h)
{
	size_t n = strlen(h), hosts = 0;
	const char *blank = strstr(h, "\r\n\r\n");

	if (!blank || (size_t)(blank - h) + 4 != n)
		proxy_fail("the rewritten head does not end at its first blank line", h);
	for (size_t i = 0; i < n; i++) {
		if (h[i] == '\n' && (i == 0 || h[i - 1] != '\r'))
			proxy_fail("a bare LF in the rewritten head", h);
		if (h[i] == '\r' && h[i + 1] != '\n')
			proxy_fail("a bare CR in the rewritten head", h);
		if ((i == 0 || h[i - 1] == '\n') && strncasecmp(h + i, "host:", 5) == 0)
			hosts++;
	}
	if (hosts != 1)
		proxy_fail("not exactly one Host line", h);
	if (strncmp(h, c->method, strlen(c->method)) != 0 || h[strlen(c->method)] != ' ' ||
	    h[strlen(c->method) + 1] != '/')
		proxy_fail("the request line is not METHOD /path", h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proxy_conn c = {.client = -1, .upstream = -1};
	char *buf, *head = NULL;
	size_t len;

	proxy_allowlist_once();
	buf = fuzz_text(data, size, 65536);
	if (!buf)
		return 0;
	len = sbx_proxy_head_end(buf, size);
	if (len && sbx_proxy_parse_request(&c, buf, len, &head) == 0) {
		if (!c.host || !*c.host)
			proxy_fail("an accepted request without a host", head);
		if (!c.is_connect)
			check_rewrite(&c, head);
		(void)sbx_netpolicy_match(&proxy_al, c.host, c.port, c.is_connect ? 443 : 80);
	} else if (len && !c.reason[0]) {
		proxy_fail("a refused request without a reason", NULL);
	}
	free(head);
	free(c.host);
	free(buf);
	return 0;
}
