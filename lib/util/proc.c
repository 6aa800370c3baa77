/* SPDX-License-Identifier: MIT */
/*
 * lib/util/proc.c - small readers of /proc/PID shared by enter, teardown and
 * seccomp audit (plain open/read into a stack buffer), and of
 * /proc/self/mountinfo (teardown, config).
 */
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

int sbx_proc_status_nums(pid_t pid, const char *key, long *last)
{
	char path[64], buf[4096], *line = buf, *p, *end;
	_cleanup_close_ int fd = -1;
	size_t kl = strlen(key);
	ssize_t n;
	int count = 0;

	*last = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = sbx_read_all(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	while (strncmp(line, key, kl) != 0 || line[kl] != ':') {
		line = strchr(line, '\n');
		if (!line)
			return 0;
		line++;
	}
	line[strcspn(line, "\n")] = '\0';
	for (p = line + kl + 1;; p = end) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		*last = v;
		count++;
	}
	return count;
}

bool sbx_proc_is_ns_init(pid_t pid)
{
	long last;

	return sbx_proc_status_nums(pid, "NSpid", &last) >= 2 && last == 1;
}

bool sbx_proc_holds_file(pid_t pid, const struct stat *f)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	bool hit = false;

	if (!f)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return false;
	while (!hit && (de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] != '.' && fstatat(dirfd(d), de->d_name, &st, 0) == 0)
			hit = st.st_dev == f->st_dev && st.st_ino == f->st_ino;
	}
	closedir(d);
	return hit;
}

int sbx_proc_mounts_under(const char *dir, struct sbx_strv *out)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0, dl = strlen(dir);
	bool root = dl == 1 && dir[0] == '/';

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *save = NULL, *tok = strtok_r(line, " ", &save);

		/* id parent major:minor root mountpoint ... */
		for (int i = 0; tok && i < 4; i++)
			tok = strtok_r(NULL, " ", &save);
		if (!tok)
			continue;
		sbx_mountinfo_unescape(tok);
		if (root || (strncmp(tok, dir, dl) == 0 && (tok[dl] == '/' || tok[dl] == '\0')))
			sbx_strv_push(out, tok);
	}
	return 0;
}

/*
 * /proc/PID/stat read into buf, from just after the last ')' (comm may
 * contain spaces and ')': the fields restart there), or NULL with errno.
 */
static char *stat_fields(pid_t pid, char *buf, size_t len)
{
	char path[64];
	_cleanup_close_ int fd = -1;
	ssize_t n;
	char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = sbx_read_all(fd, buf, len - 1);
	if (n < 0) {
		errno = (int)-n;
		return NULL;
	}
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p)
		errno = EINVAL;
	return p ? p + 1 : NULL;
}

int sbx_proc_starttime(pid_t pid, uint64_t *out)
{
	char buf[1024];
	char *p;

	if (pid <= 0)
		return -EINVAL;
	p = stat_fields(pid, buf, sizeof(buf));
	if (!p)
		return -errno;
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

char sbx_proc_state(pid_t pid)
{
	char buf[512];
	char *p = stat_fields(pid, buf, sizeof(buf));

	return p && p[0] == ' ' ? p[1] : 0;
}

static char *title_area;
static size_t title_area_len;

void sbx_proc_title_init(int argc, char **argv)
{
	char *end;

	if (argc < 1 || !argv[0])
		return;
	end = argv[argc - 1] + strlen(argv[argc - 1]) + 1;
	if (end <= argv[0] || end - argv[0] >= (1 << 20))
		return;
	title_area = argv[0];
	title_area_len = (size_t)(end - argv[0]);
}

char *sbx_proc_title_area(size_t *len)
{
	*len = title_area ? title_area_len : 0;
	return title_area;
}

void sbx_proc_retitle(const char *name)
{
	sbx_proc_set_title(title_area, title_area_len, name);
}

void sbx_proc_set_title(char *title, size_t len, const char *name)
{
	size_t n = strlen(name) + 1;

	if (!title || len <= n)
		return;
	memset(title, 0, len);
	memcpy(title, name, n);
	/* A non-NUL last byte is the kernel's sign of setproctitle():
	 * /proc/PID/cmdline is then just name, not a run of NULs. */
	title[len - 1] = ' ';
}
