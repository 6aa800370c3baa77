/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/idmap.c - idmapped mounts for a jail started by root.
 *
 * As root the jail's ids are 0..65535 -> host 100000.. (SBX_JAIL_HOST_BASE),
 * so a host file owned by an ordinary user shows as `nobody` inside and
 * the jail cannot write it.  An idmapped mount changes how one mount shows
 * (and writes) ownership, without touching the files:
 *
 *   - copy-on-write lowers (the image, overlays) use the jail's own user
 *     namespace: host uid 0 shows as the jail's root, the jail's writes go
 *     to the upper layer in the sandbox's state;
 *   - a read-write bind of a directory owned by an ordinary user U uses a
 *     namespace of its own that maps U (and the directory's group) to the
 *     jail's user: the jail sees the files as its own, and what it creates
 *     there is owned by U on the host, as if U had run the command (git
 *     sees its own user).  Nothing else is mapped: files of other owners
 *     show as `nobody`.  A directory owned by root is never mapped: the
 *     jail never writes as host root, nor creates a root-owned file.
 *
 * The namespace for a bind is made by a short-lived child cloned into a
 * new user namespace whose maps root writes; its /proc/PID/ns/user fd is
 * all that is kept (the namespace lives as long as a mount uses it).
 */
#include "jail.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

int sbx_idmap_bind_owner(const char *src, uid_t *uid, gid_t *gid)
{
	struct stat st;
	struct passwd *pw;

	if (stat(src, &st) < 0)
		return -errno;
	*uid = st.st_uid;
	*gid = st.st_gid;
	if (st.st_uid == 0)
		return 0;
	/* The root group is never mapped either: the owner's own group then. */
	if (*gid == 0) {
		pw = sbx_user(st.st_uid);
		if (!pw || pw->pw_gid == 0)
			return 0;
		*gid = pw->pw_gid;
	}
	return 1;
}

char *sbx_idmap_read_only_why(uid_t owner)
{
	if (owner == 0)
		return sbx_xstrdup("root owns it");
	return sbx_xasprintf("its group is root, and its owner uid %u has no group of its own",
			     owner);
}

static int write_proc(pid_t pid, const char *file, const char *data)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	return sbx_write_file(path, data, strlen(data));
}

int sbx_idmap_userns(uid_t uid, uid_t to_uid, gid_t gid, gid_t to_gid, struct sbx_err *err)
{
	char map[64], path[64];
	int pipefd[2];
	int fd = -1, r = 0;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return sbx_err_set(err, errno, "cannot create a pipe");
	/* Like fork(), into a new user namespace: the child only waits. */
	pid =
	    (pid_t)syscall(SYS_clone, (unsigned long)CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0);
	if (pid == 0) {
		char c;

		close(pipefd[1]);
		(void)!read(pipefd[0], &c, 1);
		_exit(0);
	}
	close(pipefd[0]);
	if (pid < 0) {
		close(pipefd[1]);
		return sbx_err_set(err, errno,
				   "cannot create a user namespace for an idmapped mount");
	}
	snprintf(map, sizeof(map), "%u %u 1\n", uid, to_uid);
	r = write_proc(pid, "uid_map", map);
	if (r == 0) {
		snprintf(map, sizeof(map), "%u %u 1\n", gid, to_gid);
		r = write_proc(pid, "gid_map", map);
	}
	if (r == 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			r = -errno;
	}
	close(pipefd[1]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (r < 0)
		return sbx_err_set(err, -r,
				   "cannot set up the user namespace of an idmapped mount");
	return fd;
}

int sbx_idmap_tree(const char *path, int userns_fd, bool recursive, uint64_t attrs)
{
	struct mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP | attrs,
			       .userns_fd = (uint64_t)userns_fd};
	_cleanup_close_ int fd = -1;
	unsigned int rec = recursive ? AT_RECURSIVE : 0;

	fd = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | rec);
	if (fd < 0)
		return -errno;
	if (mount_setattr(fd, "", AT_EMPTY_PATH | rec, &a, sizeof(a)) < 0)
		return -errno;
	return steal_fd(&fd);
}
