/* SPDX-License-Identifier: MIT */
/*
 * lib/image/image.h - rootfs images: tarballs (anything libarchive reads) unpacked
 * once into CACHE/images/<sha256>/ and shared read-only by every run.
 */
#ifndef SBX_IMAGE_H
#define SBX_IMAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/* Called now and then while unpacking: bytes of the archive read so far. */
typedef void (*sbx_image_progress_fn)(uint64_t done, uint64_t total, void *data);
/* Called for each skipped/sanitised entry (device node, fifo, setuid...). */
typedef void (*sbx_image_warn_fn)(const char *path, const char *what, void *data);

struct sbx_image_opts {
	const char *cache_dir; /* CACHE, images go to CACHE/images/ */
	uint64_t max_bytes;    /* total unpacked bytes cap (0 = default 16 GiB) */
	uint64_t max_entries;  /* entry count cap (0 = default 1,000,000) */
	bool preserve_owner;   /* chown entries as in the tarball (root only) */
	bool no_cache;	       /* ignore the stat index and an existing image:
				* always hash and unpack (then publish as usual) */
	bool no_verify;	       /* cache hit: skip the walk that checks the image
				* against its summary (one fstatat per entry) */
	sbx_image_progress_fn progress;
	sbx_image_warn_fn warn;
	void *cb_data;
};

struct sbx_image_stats {
	char sha256[65]; /* content key (tarballs) */
	bool cached;	 /* no unpacking was needed */
	bool is_dir;	 /* rootfs was a directory used as is */
	uint64_t bytes;	 /* unpacked bytes */
	uint64_t entries;
	uint64_t skipped; /* refused or skipped entries (devices, fifos, "..", ...) */
	uint64_t cleared; /* entries whose setuid/setgid bits were cleared */
	double hash_ms, unpack_ms;
};

/*
 * Resolve `rootfs` (a tarball or a directory) to a read-only directory.
 * For a tarball, unpack it into the cache if needed (temporary dir, then
 * rename, so a crash leaves no half image and concurrent callers both
 * succeed).  *out_dir is malloc'd.
 *
 * The image is CACHE/images/<sha256> when opts->preserve_owner (files owned
 * as in the tarball), else CACHE/images/<sha256>-u<euid> (files owned by the
 * caller); it is used only when owned by the caller's euid.  A second use of
 * the same file (same dev, inode, size, mtime, ctime) neither hashes nor
 * unpacks: st->cached is true.  Errors: -ENOENT etc. for the path, -EINVAL
 * for something neither a directory nor a regular file, and those of
 * sbx_image_unpack_fd(), wrapped as "cannot unpack 'PATH': ...".
 */
int sbx_image_prepare(const char *rootfs, const struct sbx_image_opts *opts, char **out_dir,
		      struct sbx_image_stats *st, struct sbx_err *err);

/*
 * Walk the cached image image_dir (an *out_dir of sbx_image_prepare() with
 * the same cache_dir) and compare it with the summary written when it was
 * published: 0, or -EUCLEAN with a message naming the image and what it
 * holds now.  What sbx_image_prepare() does on a cache hit unless
 * opts->no_verify.
 */
int sbx_image_verify(const char *cache_dir, const char *image_dir, struct sbx_err *err);

/*
 * Unpack the archive read from archive_fd into the existing, empty
 * directory dest_dirfd, containing every hostile-tarball class (absolute
 * paths, "..", symlink and hardlink escapes, devices, setuid, bombs).
 * Used by sbx_image_prepare() and directly by tests and the fuzzer.
 *
 * Policy (details in lib/image/image_unpack.c): refused entries (absolute, "..",
 * through a symlink, hardlink out of the image or to a non-file, device,
 * fifo, socket) are skipped, reported to opts->warn and counted in
 * st->skipped; setuid/setgid bits are cleared (st->cleared, a warning).
 * Only tar archives (any compression libarchive implements) are read.
 * Fails with -EFBIG past opts->max_bytes, -E2BIG past opts->max_entries,
 * or the error of a corrupt archive or a write; on failure the destination
 * is emptied again.  st->sha256 is the SHA-256 of all the bytes of the
 * file; st->hash_ms runs in parallel with the unpack for compressed files.
 */
int sbx_image_unpack_fd(int archive_fd, int dest_dirfd, const struct sbx_image_opts *opts,
			struct sbx_image_stats *st, struct sbx_err *err);
/* Same, from memory (fuzzer). */
int sbx_image_unpack_mem(const void *buf, size_t len, int dest_dirfd,
			 const struct sbx_image_opts *opts, struct sbx_image_stats *st,
			 struct sbx_err *err);

#endif
