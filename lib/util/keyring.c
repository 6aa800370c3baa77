/* SPDX-License-Identifier: MIT */
/* lib/util/keyring.c - a value for a later process, in the kernel's user keyring (keyring.h). */
#include "util.h"
#include "keyring.h"

#include <errno.h>
#include <linux/keyctl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KEY_TYPE  "user"
#define VALUE_MAX (32u << 10) /* a "user" key holds at most 32 KiB */

/* Possessor-only (keyctl(2) KEYCTL_SETPERM; <keyutils.h> names them
 * KEY_POS_VIEW, _READ, _WRITE, _SEARCH, _LINK and _SETATTR): see keyring.h. */
#define POS_ONLY 0x3f000000u

static long keyctl(int op, unsigned long a, unsigned long b, unsigned long c, unsigned long d)
{
	return syscall(SYS_keyctl, op, a, b, c, d);
}

bool sbx_keyring_has(const char *desc)
{
	return keyctl(KEYCTL_SEARCH, (unsigned long)KEY_SPEC_USER_KEYRING, (unsigned long)KEY_TYPE,
		      (unsigned long)desc, 0) >= 0;
}

int sbx_keyring_put(const char *desc, const void *data, size_t len, unsigned timeout)
{
	long k;
	int r = 0;

	if (len == 0 || len > VALUE_MAX)
		return -EINVAL;
	/*
	 * Made in this process's own keyring with a placeholder, made
	 * possessor-only, and only then given its value and linked where a
	 * later process finds it: no moment where a process of the same uid
	 * that is not its possessor could read the value by its serial.
	 */
	k = syscall(SYS_add_key, KEY_TYPE, desc, "-", (size_t)1, KEY_SPEC_PROCESS_KEYRING);
	if (k < 0)
		return -errno;
	if (keyctl(KEYCTL_SETPERM, (unsigned long)k, POS_ONLY, 0, 0) < 0 ||
	    keyctl(KEYCTL_UPDATE, (unsigned long)k, (unsigned long)data, len, 0) < 0 ||
	    keyctl(KEYCTL_SET_TIMEOUT, (unsigned long)k, timeout, 0, 0) < 0 ||
	    keyctl(KEYCTL_LINK, (unsigned long)k, (unsigned long)KEY_SPEC_USER_KEYRING, 0, 0) < 0)
		r = -errno;
	(void)keyctl(KEYCTL_UNLINK, (unsigned long)k, (unsigned long)KEY_SPEC_PROCESS_KEYRING, 0,
		     0);
	if (r < 0)
		(void)keyctl(KEYCTL_INVALIDATE, (unsigned long)k, 0, 0, 0);
	return r;
}

int sbx_keyring_take(const char *desc, char **out, size_t *len)
{
	char *buf;
	long k, n;
	bool mine;

	*out = NULL;
	*len = 0;
	/* Found through the user keyring (possessed) and linked into this
	 * process's keyring, so that it stays possessed once unlinked there. */
	k = keyctl(KEYCTL_SEARCH, (unsigned long)KEY_SPEC_USER_KEYRING, (unsigned long)KEY_TYPE,
		   (unsigned long)desc, (unsigned long)KEY_SPEC_PROCESS_KEYRING);
	if (k < 0)
		return 0;
	/* The unlink that succeeds is the one claim. */
	mine = keyctl(KEYCTL_UNLINK, (unsigned long)k, (unsigned long)KEY_SPEC_USER_KEYRING, 0,
		      0) == 0;
	buf = mine ? sbx_xmalloc(VALUE_MAX + 1) : NULL;
	n = mine ? keyctl(KEYCTL_READ, (unsigned long)k, (unsigned long)buf, VALUE_MAX, 0) : -1;
	/* Gone from the kernel at once, read or not (by the one that took it
	 * only: a loser's invalidate would destroy the winner's value). */
	if (mine)
		(void)keyctl(KEYCTL_INVALIDATE, (unsigned long)k, 0, 0, 0);
	(void)keyctl(KEYCTL_UNLINK, (unsigned long)k, (unsigned long)KEY_SPEC_PROCESS_KEYRING, 0,
		     0);
	if (n <= 0 || n > (long)VALUE_MAX) {
		if (buf && n > 0)
			explicit_bzero(buf, VALUE_MAX);
		free(buf);
		return 0;
	}
	buf[n] = '\0';
	*out = buf;
	*len = (size_t)n;
	return 1;
}
