/* SPDX-License-Identifier: MIT */
/*
 * lib/export.h - `sbx export`: a sandbox's change set as a tarball
 * (libarchive writer, pax format).  Format (also in RECORD.md):
 *
 *   - entry names are jail paths without the leading '/';
 *   - added and changed files, directories and symlinks as themselves
 *     (mode, uid, gid, mtime from the writable layer; symlinks never
 *     followed; regular files opened O_NOFOLLOW and checked to be the
 *     entry that was listed);
 *   - a deleted path P/N as an empty regular file P/.wh.N, an opaque
 *     directory D (old contents removed) as D plus D/.wh..wh..opq - the
 *     OCI image layer / AUFS whiteout convention;
 *   - fifos, sockets and device nodes (other than whiteouts) are skipped
 *     and reported; nothing is ever opened before its type is known.
 *
 * Compression follows the file name: .tar, .tar.gz/.tgz, .tar.xz/.txz,
 * .tar.zst/.tzst, .tar.bz2/.tbz2; "-" writes an uncompressed tar to stdout.
 */
#ifndef SBX_EXPORT_H
#define SBX_EXPORT_H

#include <stdint.h>

#include "state.h"
#include "util.h"

struct sbx_export_stats {
	size_t files, dirs, symlinks, whiteouts, opaque;
	uint64_t bytes;
	struct sbx_strv skipped;	/* "path (fifo)" etc., escaped for display */
	size_t errors;			/* unreadable entries of the writable layer */
};

/* Compression for a file name, or NULL with err set if it is unknown. */
const char *sbx_export_compression(const char *file, struct sbx_err *err);

/* Write the change set of sb to file.  stats is filled (free skipped). */
int sbx_export_write(const struct sbx_sandbox *sb, const char *file,
		     struct sbx_export_stats *stats, struct sbx_err *err);

#endif
