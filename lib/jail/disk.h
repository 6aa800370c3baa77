/* SPDX-License-Identifier: MIT */
/*
 * lib/jail/disk.h - the cap on a sandbox's writable layers ([limits] disk), and
 * where they live so that the cap holds on disk.
 *
 * Every run with a writable layer gets a cap: [limits] disk, or
 * SBX_DISK_DEFAULT, never more than the state filesystem has free beyond a
 * reserve (5% of it, at least SBX_DISK_RESERVE_MIN, at most a quarter of a
 * small filesystem), so that a jail filling its
 * layers leaves room for every other sandbox and for the rest of the
 * machine.  Once less than the reserve is free (a sandbox filled its layers
 * and was kept), the next cap is a quarter of what is free: sandboxes still
 * start, each smaller, and none takes the last of it.  The cap is enforced by the filesystem the
 * layers are on:
 *
 *   - as root, a sparse file STATE/sandboxes/ID/disk.img made into an ext4
 *     filesystem of that size and inode count (no journal; mke2fs from
 *     e2fsprogs), attached to a loop device that detaches itself at the
 *     last unmount, and mounted on STATE/sandboxes/ID/disk in a mount
 *     namespace of the run's own (sbx_disk_private_ns: the host never sees
 *     the mount, and it goes with the run even when sbx is killed): the
 *     layers' blocks are on the state filesystem, and writing past the cap
 *     is ENOSPC inside the jail;
 *   - otherwise (an ordinary user, or root without loop devices or
 *     mke2fs), a tmpfs of that size: the layers are in memory while the jail
 *     runs (copied to disk/ when the sandbox is kept), and the in-memory cap
 *     is also held to SBX_DISK_MEMORY_SHARE of the machine's memory.
 *
 * Either way the filesystem has one inode per SBX_DISK_BYTES_PER_INODE of
 * its size (sbx_disk_inodes): empty files cost a tmpfs no data pages, and
 * without the count a jail could fill the kernel's memory with them.
 *
 * mke2fs runs once per size and inode count: its result is kept as a
 * template (TEMPLATES/ext4-4k-il-SIZE-INODES.img, a sparse file with ~60 KiB of
 * data, in the state directory's disk-templates/) and each sandbox's
 * image is a copy of that data.  A detached child of an earlier run
 * (sbx_disk_ready_fill, called by the trash purger) keeps SBX_DISK_READY
 * copies of it made and synced (TEMPLATES/ext4-4k-il-SIZE-INODES.ready-N.img):
 * a run takes one in a rename, and makes its own copy only when none is
 * there.
 *
 * The run log's limits line says which, and why the cap is what it is.
 */
#ifndef SBX_DISK_H
#define SBX_DISK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

#define SBX_DISK_DEFAULT	 (16ULL << 30)
#define SBX_DISK_RESERVE_MIN	 (256ULL << 20)
#define SBX_DISK_RESERVE_PCT	 5
#define SBX_DISK_RESERVE_SHARE	 4 /* within the reserve: a quarter of what is free */
#define SBX_DISK_MIN		 (16ULL << 20)
#define SBX_DISK_BYTES_PER_INODE (8ULL << 10)
#define SBX_DISK_MIN_INODES	 1024
#define SBX_DISK_MEMORY_SHARE	 4 /* an in-memory cap is at most memory / 4 */
#define SBX_DISK_READY		 2 /* ready copies of each template (2 runs at once) */
#define SBX_DISK_READ_AHEAD	 8 /* pieces of a fresh image read ahead */

struct sbx_disk_cap {
	uint64_t size; /* bytes */
	uint64_t inodes;
	bool clamped;	/* less than asked: the state filesystem's reserve */
	uint64_t asked; /* [limits] disk or SBX_DISK_DEFAULT */
	char why[200];	/* "" or why it is less than asked, human */
};

/*
 * The cap for a sandbox whose state is in state_dir: asked (SBX_UNSET for
 * the default), less where the state filesystem's free space beyond its
 * reserve is smaller, or memory's share when in_memory.  -ENOSPC with a
 * line naming the filesystem when not even SBX_DISK_MIN is left.
 */
int sbx_disk_cap(const char *state_dir, uint64_t asked, bool in_memory, struct sbx_disk_cap *cap,
		 struct sbx_err *err);

/* The same for a filesystem of total bytes with avail free (state_dir only
 * names it in messages), in memory when memory (the machine's) is not 0. */
int sbx_disk_cap_of(const char *state_dir, uint64_t total, uint64_t avail, uint64_t memory,
		    uint64_t asked, struct sbx_disk_cap *cap, struct sbx_err *err);

/* The inode count of a layers' filesystem of size bytes. */
uint64_t sbx_disk_inodes(uint64_t size);

/*
 * What the layers' capped filesystem held at the end of a run, from one
 * statfs (run log, record).  full: so little room was left (what ext4
 * keeps back after ENOSPC, up to SBX_DISK_FULL_SLACK) or no inode, that
 * the command's writes may have failed with ENOSPC.  Measured once: a
 * layer filled and emptied again is not full.
 */
#define SBX_DISK_FULL_SLACK (64ULL << 20)
struct sbx_disk_usage {
	bool set;
	uint64_t size, used; /* bytes */
	uint64_t inodes, inodes_used;
	bool full, full_inodes;
};
struct statfs;
void sbx_disk_usage_of(const struct statfs *s, struct sbx_disk_usage *u);
/* 0, or -errno (u unset) */
int sbx_disk_usage_fd(int fd, struct sbx_disk_usage *u);

/* mke2fs's path (e2fsprogs), or NULL. */
const char *sbx_disk_mke2fs(void);

/*
 * As root: make IMAGE (which must not exist) an ext4 filesystem of
 * cap->size bytes and cap->inodes inodes, and mount it on TARGET through a
 * loop device that goes away with the mount.  With TEMPLATES (not NULL) a
 * ready copy becomes IMAGE, or else the template is copied (made first
 * when there is none); without, mke2fs makes IMAGE.  On failure nothing is
 * left mounted or attached (IMAGE may remain, for the caller to remove).
 */
int sbx_disk_loop_mount(const char *image, const char *target, const struct sbx_disk_cap *cap,
			const char *templates, struct sbx_err *err);

/*
 * Make the ready copies of the template of cap's size and inode count that
 * are missing (nothing when there is no template yet), and remove the
 * temporary files killed writers left in TEMPLATES.  Slow (it syncs):
 * for a detached child, never a run's path.
 */
void sbx_disk_ready_fill(const char *templates, const struct sbx_disk_cap *cap);

/*
 * A kept sandbox's image mounted on LAYER_DIR (SBFD/disk.img): its
 * filesystem synced, then the image file (the mount has no barriers: a
 * sync of the filesystem reaches the file, not the disk).
 */
int sbx_disk_settle(const char *layer_dir, int sbfd, struct sbx_err *err);

/*
 * As root, before the layers' image is mounted: a mount namespace of this
 * process's own (a slave of the host's), so that the mount goes away with
 * the run even when sbx is killed, and the host never sees it.  sbfd (the
 * sandbox directory) is reopened in place, as below.  A single-threaded
 * process only (unshare).
 */
int sbx_disk_private_ns(int sbfd, const char *sbdir, struct sbx_err *err);

/*
 * The layers of a sandbox when they are an image (SBDIR/disk.img).  Kept
 * (running == 0): mount it on SBDIR/disk in a mount namespace of this
 * process's own, which goes away with it (so does the loop device),
 * read-only unless writable.  Running (running = its supervisor's pid,
 * running_start its recorded start time): enter the supervisor's mount
 * namespace, where the run has it mounted (never a second mount of it).
 * 0 when there is nothing to do (no image, or disk/ already a mount
 * point); -EPERM for anyone but root.  A single-threaded process only.
 * sbfd (the sandbox directory) is reopened in place, on the same number: a
 * walk from the old one would not see the mount.  The working directory
 * stays.
 */
int sbx_disk_attach_kept(int sbfd, const char *sbdir, pid_t running, uint64_t running_start,
			 bool writable, struct sbx_err *err);

/* Can this process mount a loop device at all (root, /dev/loop-control)? */
bool sbx_disk_loop_usable(void);

#endif
