/* SPDX-License-Identifier: MIT */
/*
 * lib/teardown.c - taking a sandbox down: process identity checks and
 * unmounting whatever a run left mounted under its directory.
 */
#include "state.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>

int sbx_proc_starttime(pid_t pid, uint64_t *out)
{
	char path[64], buf[1024];
	_cleanup_close_ int fd = -1;
	ssize_t n;
	char *p;

	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = sbx_read_all(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	/* comm may contain spaces and ')': fields restart after the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	p++;
	/* After ')': field 3 (state) ... field 22 (starttime) = 20th token. */
	for (int field = 3; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -EINVAL;
	}
	errno = 0;
	unsigned long long v = strtoull(p + 1, NULL, 10);
	if (errno)
		return -errno;
	*out = v;
	return 0;
}

/* Decode mountinfo's octal escapes (\040 space, \011 tab, \012 nl, \134 \). */
static void unescape_mountinfo(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* Mount points equal to or below dir, from /proc/self/mountinfo. */
static int mounts_under(const char *dir, struct sbx_strv *out)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0, dl = strlen(dir);

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *save = NULL, *tok = strtok_r(line, " ", &save);

		/* id parent major:minor root mountpoint ... */
		for (int i = 0; tok && i < 4; i++)
			tok = strtok_r(NULL, " ", &save);
		if (!tok)
			continue;
		unescape_mountinfo(tok);
		if (strncmp(tok, dir, dl) == 0 && (tok[dl] == '/' || tok[dl] == '\0'))
			sbx_strv_push(out, tok);
	}
	return 0;
}

static int cmp_len_desc(const void *a, const void *b)
{
	size_t x = strlen(*(char *const *)a), y = strlen(*(char *const *)b);

	return x < y ? 1 : x > y ? -1 : 0;
}

int sbx_sandbox_unmount_all(const struct sbx_sandbox *sb, size_t *n_unmounted,
			    struct sbx_err *err)
{
	size_t total = 0;
	int r = 0;

	if (n_unmounted)
		*n_unmounted = 0;
	if (!sb->dir)
		return 0;
	/* Stacked mounts show up again after the top one goes: repeat. */
	for (int round = 0; round < 64; round++) {
		struct sbx_strv m = { 0 };
		size_t done = 0;

		r = mounts_under(sb->dir, &m);
		if (r < 0) {
			sbx_strv_free(&m);
			return sbx_err_set(err, -r, "cannot read /proc/self/mountinfo");
		}
		if (m.n == 0) {
			sbx_strv_free(&m);
			break;
		}
		qsort(m.v, m.n, sizeof(char *), cmp_len_desc);
		for (size_t i = 0; i < m.n; i++)
			if (umount2(m.v[i], MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
				done++;
			else if (!r)
				r = sbx_err_set(err, errno, "cannot unmount '%s'", m.v[i]);
		sbx_strv_free(&m);
		total += done;
		if (!done)
			break;
		r = 0;
	}
	if (n_unmounted)
		*n_unmounted = total;
	return r;
}
