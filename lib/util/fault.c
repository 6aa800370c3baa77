/* SPDX-License-Identifier: MIT */
/*
 * lib/util/fault.c - fault injection points (see fault.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fault.h"

/* 0: SBX_FAULT not read yet, 1: unset or empty, 2: set (in spec). */
static int fault_state;
static const char *fault_spec;

static const char *fault_env(void)
{
	int s = __atomic_load_n(&fault_state, __ATOMIC_ACQUIRE);

	if (s == 0) {
		const char *v = getenv("SBX_FAULT");

		fault_spec = v && *v ? v : NULL;
		s = fault_spec ? 2 : 1;
		__atomic_store_n(&fault_state, s, __ATOMIC_RELEASE);
	}
	return s == 2 ? fault_spec : NULL;
}

/*
 * Is name one of the comma-separated items of spec ("NAME" or "NAME@N")?
 * Returns the N of the item (1 without "@N"), or 0 when name is not listed.
 */
static unsigned long listed(const char *spec, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = spec; *p;) {
		size_t n = strcspn(p, ",");

		if (n >= len && strncmp(p, name, len) == 0 && (n == len || p[len] == '@')) {
			unsigned long at = n == len ? 1 : strtoul(p + len + 1, NULL, 10);

			return at ? at : 1;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

void sbx_fault_point(const char *name)
{
	static unsigned long hits;
	const char *spec = fault_env();
	unsigned long at;

	if (!spec)
		return;
	at = listed(spec, name);
	if (!at || __atomic_add_fetch(&hits, 1, __ATOMIC_RELAXED) < at)
		return;
	/* SIGKILL ends every thread of the process, not just this one. */
	for (;;) {
		kill(getpid(), SIGKILL);
		pause();
	}
}

void sbx_fault_pause(const char *name)
{
	const char *spec = fault_env();
	struct timespec ts = {1, 500 * 1000 * 1000};

	if (spec && listed(spec, name))
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
}

bool sbx_fault_fails(const char *name)
{
	const char *spec = fault_env();

	return spec && listed(spec, name);
}
