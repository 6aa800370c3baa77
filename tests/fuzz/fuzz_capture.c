/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_capture.c - libFuzzer harness for the two parsers that
 * read what a jail sends to the proxy's capture side without asking it:
 *
 *   - sbx_proxy_client_hello_sni() (lib/net/proxy_capture.c): the server
 *     name of the TLS ClientHello a captured connection starts with.  A
 *     name it returns must be a normalised host (what the allowlist is
 *     matched against): non-empty, no NUL, lowercase, and unchanged by
 *     sbx_netpolicy_norm_host() again.
 *   - sbx_proxy_dns_question() / sbx_proxy_dns_reply() (lib/net/
 *     proxy_dns.c): the one question of a UDP query captured to the
 *     proxy's DNS server, and the answer built in the same buffer.  A
 *     question it accepts must name a dotted lowercase name of printable
 *     labels that ends inside what arrived; the reply (with as many A or
 *     AAAA records as the input's last byte asks, up to the maximum) must
 *     keep the question's bytes, fit the buffer, and count its records.
 *     A query it refuses gets the 12-byte FORMERR header, as served.
 *
 * Each input is fed to both.  Memory errors are the sanitizers' to find;
 * a broken invariant aborts.  Built and run by `make fuzz`; seeds in
 * tests/fuzz/corpus/capture/ (ClientHellos from curl and openssl, DNS
 * queries from Python).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netpolicy.h"
#include "proxy_int.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "capture harness: %s\n", what);
		abort();
	}
}

static void sni(const uint8_t *data, size_t size)
{
	/* An exact copy: a read past size is the sanitizer's to see. */
	unsigned char *b = malloc(size ? size : 1);
	char *name, *again;

	memcpy(b, data, size);
	name = sbx_proxy_client_hello_sni(b, size);
	free(b);
	if (!name)
		return;
	check(name[0] != '\0', "empty server name");
	for (const char *p = name; *p; p++)
		check(!(*p >= 'A' && *p <= 'Z'), "server name not lowercase");
	again = sbx_netpolicy_norm_host(name, strlen(name));
	check(again && strcmp(again, name) == 0, "server name not normalised");
	free(again);
	free(name);
}

static void dns(const uint8_t *data, size_t size)
{
	struct sbx_dns_query q = {0};
	unsigned char question[SBX_DNS_MAX];
	struct sbx_dns_answer a = {0};
	size_t out, rl, want;

	q.len = size < sizeof(q.buf) ? size : sizeof(q.buf);
	memcpy(q.buf, data, q.len);
	if (!sbx_proxy_dns_question(&q)) {
		if (q.len >= 12 && !(q.buf[2] & 0x80)) {
			q.qend = 12;
			q.buf[4] = q.buf[5] = 0;
			check(sbx_proxy_dns_reply(&q, 1, NULL) == 12,
			      "FORMERR reply is not a header");
			check((q.buf[2] & 0x80) && (q.buf[3] & 0x0f) == 1, "FORMERR reply flags");
		}
		return;
	}
	size_t nl = strlen(q.name);

	check(nl > 0 && nl < sizeof(q.name), "question name length");
	check(q.name[0] != '.' && q.name[nl - 1] != '.' && !strstr(q.name, ".."),
	      "question name has an empty label");
	for (size_t i = 0; i < nl; i++)
		check(q.name[i] > 0x20 && q.name[i] < 0x7f &&
			  !(q.name[i] >= 'A' && q.name[i] <= 'Z'),
		      "question name not printable lowercase");
	/* labels, their length bytes and the root, then type and class */
	check(q.qend == 12 + nl + 2 + 4 && q.qend <= q.len, "question ends outside the query");
	memcpy(question, q.buf, q.qend);

	/* Answers as resolve() gives them: A or AAAA only, the count asked. */
	want = size ? data[size - 1] % (SBX_DNS_MAX_ANSWER + 1) : 0;
	if (q.qtype == 1 || q.qtype == 28) {
		for (a.n = 0; a.n < want; a.n++)
			memset(a.rr[a.n], (int)a.n + 1, sizeof(a.rr[a.n]));
	}
	rl = q.qtype == 1 ? 4 : 16;
	out = sbx_proxy_dns_reply(&q, 0, &a);
	check(out <= sizeof(q.buf), "reply longer than the buffer");
	check(memcmp(q.buf + 12, question + 12, q.qend - 12) == 0, "reply changed the question");
	check((q.buf[2] & 0x80) && (q.buf[3] & 0x0f) == 0, "reply flags");
	check((size_t)(q.buf[6] << 8 | q.buf[7]) == a.n, "answer count");
	check(out == q.qend + a.n * (12 + rl), "reply length and its records disagree");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sni(data, size);
	dns(data, size);
	return 0;
}
