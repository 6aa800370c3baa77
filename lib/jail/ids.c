/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/ids.c - whom the jail's ids map to (the host range as root, an ordinary
 * user's own id and subordinate range), and the command's environment.
 */
#include "jail_int.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

extern char **environ;

/* ---- ids ---- */

/* Ranges of /etc/subuid-style FILE that overlap [base, base + count):
 * the end of the highest such range, or 0. */
static unsigned long overlapping_end(const char *file, unsigned long base)
{
	_cleanup_fclose_ FILE *f = fopen(file, "re");
	char line[512];
	unsigned long end = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		unsigned long start, n;

		if (!c2)
			continue;
		start = strtoul(c1 + 1, NULL, 10);
		n = strtoul(c2 + 1, NULL, 10);
		if (n && start < base + SBX_JAIL_ID_COUNT && start + n > base && start + n > end)
			end = start + n;
	}
	return end;
}

bool sbx_jail_host_base_valid(unsigned long base)
{
	return base == SBX_JAIL_HOST_BASE ||
	       (base >= 2 * SBX_JAIL_ID_COUNT && base % SBX_JAIL_ID_COUNT == 0 &&
		base <= 0xffffffffUL - 2 * SBX_JAIL_ID_COUNT);
}

uid_t sbx_jail_host_base(void)
{
	static unsigned long base;
	unsigned long b = SBX_JAIL_HOST_BASE, e;

	if (base)
		return (uid_t)base;
	for (int rounds = 0; rounds < 4096; rounds++) {
		e = overlapping_end("/etc/subuid", b);
		if (!e)
			e = overlapping_end("/etc/subgid", b);
		if (!e)
			break;
		b = (e + SBX_JAIL_ID_COUNT - 1) / SBX_JAIL_ID_COUNT * SBX_JAIL_ID_COUNT;
		if (!sbx_jail_host_base_valid(b)) {
			b = SBX_JAIL_HOST_BASE; /* every range taken: nothing better */
			break;
		}
	}
	base = b;
	return (uid_t)base;
}

/* Not the initial user namespace ("0 0 4294967295"): *parent is uid one
 * level up. */
static bool nested_userns(uid_t uid, uid_t *parent)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/uid_map", "re");
	unsigned long in, out, n;
	bool nested = false;

	*parent = uid;
	if (!f)
		return false;
	while (fscanf(f, "%lu %lu %lu", &in, &out, &n) == 3) {
		if (!(in == 0 && out == 0 && n == 4294967295UL))
			nested = true;
		if (uid >= in && uid - in < n)
			*parent = (uid_t)(out + (uid - in));
	}
	return nested;
}

/* Does map (our own uid_map or gid_map) cover base and the
 * SBX_JAIL_ID_COUNT ids after it? */
static bool range_mapped(const char *map, unsigned long base)
{
	_cleanup_fclose_ FILE *f = fopen(map, "re");
	unsigned long in, out, n;

	if (!f)
		return true; /* no user namespaces at all: the initial one */
	while (fscanf(f, "%lu %lu %lu", &in, &out, &n) == 3)
		if (in <= base && in + n >= base + SBX_JAIL_ID_COUNT)
			return true;
	return false;
}

int sbx_jail_ids_resolve(const struct sbx_config *cfg, struct sbx_jail_ids *ids,
			 struct sbx_err *err)
{
	memset(ids, 0, sizeof(*ids));
	ids->outer_uid = geteuid();
	ids->outer_gid = getegid();
	/* Root maps the jail's ids to its range only where that range exists:
	 * root of a container's user namespace (rootless podman) often has
	 * only a few ids, and then maps itself, as an ordinary user does. */
	ids->base = ids->outer_uid == 0 ? sbx_jail_host_base() : 0;
	ids->range = ids->outer_uid == 0 && range_mapped("/proc/self/uid_map", ids->base) &&
		     range_mapped("/proc/self/gid_map", ids->base);
	ids->nested = nested_userns(ids->outer_uid, &ids->parent_uid);
	if (cfg->user_set && cfg->user_root) {
		ids->uid = 0;
		ids->gid = 0;
	} else if (cfg->user_set) {
		ids->uid = cfg->uid;
		ids->gid = cfg->gid;
	} else {
		ids->uid = getuid();
		ids->gid = getgid();
	}
	if (ids->range) {
		if (ids->uid >= SBX_JAIL_ID_COUNT || ids->gid >= SBX_JAIL_ID_COUNT)
			return sbx_err_set(err, ERANGE,
					   "user %u:%u is outside the jail's id range 0..%u",
					   ids->uid, ids->gid, SBX_JAIL_ID_COUNT - 1);
		ids->host_uid = ids->base + ids->uid;
		ids->host_gid = ids->base + ids->gid;
		ids->host_root = ids->base;
	} else {
		ids->host_uid = ids->outer_uid;
		ids->host_gid = ids->outer_gid;
		ids->host_root = ids->uid == 0 ? ids->outer_uid : (uid_t)-1;
		/* The user's subordinate range, the user's own id where the
		 * jail's user is (when that fits in the range). */
		if (sbx_subid_lookup(ids->outer_uid, ids->outer_gid, &ids->sub) &&
		    ids->uid <= ids->sub.ucount && ids->gid <= ids->sub.gcount) {
			ids->subid = true;
			if (ids->uid != 0)
				ids->host_root = ids->sub.ustart;
		}
	}
	return 0;
}

/* ---- environment ---- */

static bool env_has(const struct sbx_strv *env, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < env->n; i++)
		if (strncmp(env->v[i], name, n) == 0 && env->v[i][n] == '=')
			return true;
	return false;
}

/* Set NAME=VALUE, replacing an earlier entry. */
static void env_put(struct sbx_strv *env, const char *entry)
{
	const char *eq = strchr(entry, '=');
	size_t n = eq ? (size_t)(eq - entry) : strlen(entry);

	for (size_t i = 0; i < env->n; i++) {
		if (strncmp(env->v[i], entry, n) == 0 && env->v[i][n] == '=') {
			free(env->v[i]);
			env->v[i] = sbx_xstrdup(entry);
			return;
		}
	}
	sbx_strv_push(env, entry);
}

static void env_pass(const struct sbx_config *cfg, struct sbx_strv *env)
{
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		_cleanup_free_ char *name = NULL;

		if (!eq)
			continue;
		name = sbx_xstrndup(*e, (size_t)(eq - *e));
		for (size_t i = 0; i < cfg->env_pass.n; i++) {
			if (fnmatch(cfg->env_pass.v[i], name, 0) == 0) {
				env_put(env, *e);
				break;
			}
		}
	}
}

void sbx_jail_build_env(const struct sbx_config *cfg, const struct sbx_jail_ids *ids,
			bool host_root, bool tty, char *const *extra, struct sbx_strv *out)
{
	const char *home = getenv("HOME");

	if (!cfg->env_clear)
		for (char **e = environ; e && *e; e++)
			sbx_strv_push(out, *e);
	env_pass(cfg, out);
	for (size_t i = 0; i < cfg->env_set.n; i++)
		env_put(out, cfg->env_set.v[i]);
	for (size_t i = 0; extra && extra[i]; i++)
		env_put(out, extra[i]);
	if (!env_has(out, "PATH"))
		sbx_strv_push(out,
			      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	if (!env_has(out, "HOME")) {
		if (host_root && home && home[0] == '/')
			sbx_strv_push_take(out, sbx_xasprintf("HOME=%s", home));
		else
			sbx_strv_push(out, ids->uid == 0 ? "HOME=/root" : "HOME=/");
	}
	if (tty && !env_has(out, "TERM")) {
		const char *term = getenv("TERM");

		sbx_strv_push_take(out, sbx_xasprintf("TERM=%s", term && *term ? term : "xterm"));
	}
}
