/* SPDX-License-Identifier: MIT */
/*
 * lib/util/keyring.h - one value handed from a process to a later one of
 * the same user through the kernel's user keyring: in kernel memory only
 * (never on disk, never swapped), gone after a timeout, and taken once.
 *
 * The value is a "user" key linked into the caller's user keyring
 * (KEY_SPEC_USER_KEYRING: per user and per user namespace, so a jail in a
 * user namespace of its own has another one) under a fixed description.
 * Only a possessor may read it (no user, group or other permission): a
 * process of the same uid reaches it through that keyring by its special
 * id, one that only knows the key's serial number does not.  Taking it
 * unlinks it from the user keyring; of two processes taking it at once,
 * only the one whose unlink succeeds may use it (the other gets 0).
 * Where the kernel or a container's seccomp policy refuses keyrings,
 * put does nothing and take finds nothing.
 */
#ifndef SBX_KEYRING_H
#define SBX_KEYRING_H

#include <stdbool.h>
#include <stddef.h>

/* Whether a value is waiting under desc. */
bool sbx_keyring_has(const char *desc);

/* Put data under desc (replacing one there), for at most timeout seconds;
 * 0, or -errno (the kernel's: EDQUOT when the user's key quota is full). */
int sbx_keyring_put(const char *desc, const void *data, size_t len, unsigned timeout);

/* Take the value under desc: 1 with *out (malloc'd, NUL-terminated, the
 * caller wipes and frees it) and *len; 0 when there is none or another
 * process took it first. */
int sbx_keyring_take(const char *desc, char **out, size_t *len);

#endif
