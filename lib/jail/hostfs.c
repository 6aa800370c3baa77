/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/hostfs.c - the host's procfs and sysfs instances, kept out of
 * the jail.
 *
 * The jail has a /proc of its own (its pid namespace's) and a /sys of its
 * own (its network namespace's devices, no block, PCI or firmware ids).
 * A procfs or sysfs the host has mounted elsewhere (a chroot's /proc and
 * /sys: sbuild, schroot, debootstrap, arch-chroot) would show the jail the
 * host's processes and their command lines, or the host's devices, if
 * something bound into it took that mount along: the host's root
 * (read-only, recursively), a recursive bind of a directory above it, an
 * overlay of one bound read-only because it holds mount points.  init
 * lists the host's procfs and sysfs mounts before GO, while it waits
 * anyway (sbx_jail_hostfs_scan); mounts.c hides each one that reached the
 * new root under an empty read-only directory, and refuses a bind whose
 * source is on a procfs itself.
 */
#include "jail_int.h"

#include <limits.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

void sbx_jail_hostfs_scan(struct sbx_jail_child *c)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	struct stat root;
	size_t cap = 0;

	c->hostfs_err = f && stat("/", &root) == 0 ? 0 : errno;
	c->root_dev = c->hostfs_err ? 0 : root.st_dev;
	c->root_ino = c->hostfs_err ? 0 : root.st_ino;
	while (f && getline(&line, &cap, f) > 0) {
		char *save = NULL, *tok = strtok_r(line, " ", &save), *point = NULL;

		/* id parent major:minor root mountpoint options... - fstype */
		for (int i = 0; tok; i++, tok = strtok_r(NULL, " ", &save)) {
			if (i == 4)
				point = tok;
			if (i > 4 && strcmp(tok, "-") == 0)
				break;
		}
		tok = tok ? strtok_r(NULL, " ", &save) : NULL;
		if (!point || !tok || (strcmp(tok, "proc") != 0 && strcmp(tok, "sysfs") != 0))
			continue;
		sbx_mountinfo_unescape(point);
		sbx_strv_push(tok[0] == 'p' ? &c->host_proc : &c->host_sys, point);
	}
}

bool sbx_jail_on_procfs(int fd)
{
	struct statfs s;

	return fstatfs(fd, &s) == 0 && s.f_type == PROC_SUPER_MAGIC;
}

bool sbx_jail_on_hostfs(int fd)
{
	struct statfs s;

	return fstatfs(fd, &s) == 0 && (s.f_type == PROC_SUPER_MAGIC || s.f_type == SYSFS_MAGIC);
}

/* One list (the host's procfs or sysfs mounts; own: /proc or /sys, the
 * jail's own, which covers the host's in the host's root). */
static int inside(const struct sbx_strv *l, const char *own, const char *src, char *real, bool root,
		  bool host_root, const char *dst, struct sbx_strv *out)
{
	for (size_t i = 0; i < l->n; i++) {
		const char *p = l->v[i], *rel = p;

		/* /proc and /sys (almost always the only ones): inside a bind of
		 * the host's root alone */
		if (sbx_path_under(p, own)) {
			if (!root || host_root)
				continue;
		} else {
			if (!real[0] && !realpath(src, real))
				return -errno;
			if (!sbx_path_under(p, real) || strcmp(p, real) == 0)
				continue;
			rel = p + (strcmp(real, "/") ? strlen(real) : 0);
		}
		sbx_strv_push_take(out, sbx_xasprintf("%s%s", strcmp(dst, "/") ? dst : "", rel));
	}
	return 0;
}

int sbx_jail_hostfs_inside(const struct sbx_jail_child *c, const char *src, int fd, const char *dst,
			   struct sbx_strv *out)
{
	struct stat st;
	char real[PATH_MAX] = "";
	/* the host's root on the jail's: its /proc and /sys are covered by the
	 * jail's own */
	bool host_root = fd < 0 && strcmp(dst, "/") == 0;
	bool root = host_root ||
		    (fstat(fd, &st) == 0 && st.st_dev == c->root_dev && st.st_ino == c->root_ino);
	int r;

	if (c->hostfs_err)
		return -c->hostfs_err;
	r = inside(&c->host_proc, "/proc", src, real, root, host_root, dst, out);
	return r < 0 ? r : inside(&c->host_sys, "/sys", src, real, root, host_root, dst, out);
}
