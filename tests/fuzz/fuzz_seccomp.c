/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_seccomp.c - libFuzzer harness for seccomp policy files
 * (lib/seccomp/seccomp_file.c, format in lib/seccomp/seccomp_policy.md).
 *
 * Each input is a policy file's text, parsed by
 * sbx_seccomp_policy_parse_text() as `sbx profile check` and `sbx run`
 * parse a [security] seccomp = FILE.  A text that parses must also compile
 * to a BPF program (a policy that `profile check` accepts and the run then
 * refuses is a bug), and the error of one that does not must name the file
 * and a line.  Built and run by `make fuzz`; the seeds are in
 * tests/fuzz/corpus/seccomp/.
 */
#include <linux/filter.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seccomp.h"
#include "seccomp_int.h"
#include "util.h"
#include "fuzz_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_seccomp_policy *p;
	struct sbx_err err = {0};
	struct sock_filter *insns = NULL;
	size_t len = 0;
	bool listener = false;
	char *text;

	/* The file reader refuses NUL bytes and files over 1 MiB. */
	if (memchr(data, '\0', size))
		return 0;
	text = fuzz_text(data, size, 65536);
	if (!text)
		return 0;
	p = sbx_xcalloc(1, sizeof(*p));
	p->name = sbx_xstrdup("fuzz.policy");
	if (sbx_seccomp_policy_parse_text("fuzz.policy", text, p, &err) == 0) {
		if (sbx_seccomp_compile(p, size & 1, &insns, &len, &listener, &err) != 0 || !len) {
			fprintf(stderr, "a policy that parses does not compile: %s\n", err.msg);
			abort();
		}
		free(insns);
	} else if (strncmp(err.msg, "seccomp policy 'fuzz.policy': line ", 35) != 0) {
		fprintf(stderr, "an error that names no line: %s\n", err.msg);
		abort();
	}
	sbx_seccomp_policy_free(p);
	free(text);
	return 0;
}
