/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_gitconfig.c - libFuzzer harness for git's config syntax
 * (lib/util/gitconfig.c), which sbx reads from files a jail could have
 * written in an earlier run (.gitmodules, a tracked .gitconfig).
 *
 * Every variable passed on must be one git could have read: a section of
 * lower-case letters, digits, '-' (or none), a name starting with a
 * lower-case letter.  Parsing the same bytes twice gives the same
 * variables.  Built and run by `make fuzz`.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gitconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A hash of everything passed on. */
static int gitconfig_check(void *user, const char *section, const char *sub, const char *name,
			   const char *value)
{
	uint64_t *h = user;
	const char *parts[] = {section, sub ? sub : "\x01", name, value ? value : "\x02"};

	for (const char *p = section; *p; p++)
		if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-'))
			abort();
	if (!islower((unsigned char)name[0]))
		abort();
	for (const char *p = name; *p; p++)
		if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-'))
			abort();
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		for (const char *p = parts[i]; *p; p++)
			*h = (*h ^ (unsigned char)*p) * 1099511628211ULL;
	*h = (*h ^ 0xff) * 1099511628211ULL;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t h1 = 14695981039346656037ULL, h2 = h1;
	size_t n1, n2;

	if (size > 65536)
		return 0;
	n1 = sbx_gitconfig_parse((const char *)data, size, gitconfig_check, &h1);
	n2 = sbx_gitconfig_parse((const char *)data, size, gitconfig_check, &h2);
	if (n1 != n2 || h1 != h2)
		abort();
	return 0;
}
