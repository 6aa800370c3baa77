/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/procfs.c - the host's procfs instances, kept out of the jail.
 *
 * The jail has a /proc of its own (its pid namespace's).  A procfs the host
 * has mounted elsewhere (a chroot's /proc: sbuild, schroot, debootstrap,
 * arch-chroot) would list the host's processes and their command lines in
 * the jail if something bound into it took that mount along: the host's
 * root (read-only, recursively), a recursive bind of a directory above
 * it, an overlay of one bound read-only because it holds mount points.
 * init lists the host's procfs mounts before GO, while it waits anyway
 * (sbx_jail_procfs_scan); mounts.c hides each one that reached the new
 * root under an empty read-only directory, and refuses a bind whose source
 * is on a procfs itself.
 */
#include "jail_int.h"

#include <limits.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

void sbx_jail_procfs_scan(struct sbx_jail_child *c)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;

	struct stat root;

	c->procfs_err = f && stat("/", &root) == 0 ? 0 : errno;
	c->root_dev = c->procfs_err ? 0 : root.st_dev;
	c->root_ino = c->procfs_err ? 0 : root.st_ino;
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
		if (!point || !tok || strcmp(tok, "proc") != 0)
			continue;
		sbx_mountinfo_unescape(point);
		sbx_strv_push(&c->procfs, point);
	}
}

bool sbx_jail_on_procfs(int fd)
{
	struct statfs s;

	return fstatfs(fd, &s) == 0 && s.f_type == PROC_SUPER_MAGIC;
}

/* path is dir or below it ("/" holds everything). */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

int sbx_jail_procfs_inside(const struct sbx_jail_child *c, const char *src, int fd, const char *dst,
			   struct sbx_strv *out)
{
	struct stat st;
	char real[PATH_MAX] = "";
	/* the host's root on the jail's: its /proc is covered by the jail's own */
	bool host_root = fd < 0 && strcmp(dst, "/") == 0;
	bool root = host_root ||
		    (fstat(fd, &st) == 0 && st.st_dev == c->root_dev && st.st_ino == c->root_ino);

	if (c->procfs_err)
		return -c->procfs_err;
	for (size_t i = 0; i < c->procfs.n; i++) {
		const char *p = c->procfs.v[i], *rel = p;

		/* /proc (almost always the only one): inside the host's root alone */
		if (under(p, "/proc")) {
			if (!root || host_root)
				continue;
		} else {
			if (!real[0] && !realpath(src, real))
				return -errno;
			if (!under(p, real) || strcmp(p, real) == 0)
				continue;
			rel = p + (strcmp(real, "/") ? strlen(real) : 0);
		}
		sbx_strv_push_take(out, sbx_xasprintf("%s%s", strcmp(dst, "/") ? dst : "", rel));
	}
	return 0;
}
