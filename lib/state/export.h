/* SPDX-License-Identifier: MIT */
/*
 * lib/state/export.h - `sbx export`: a sandbox's change set as a tarball
 * (libarchive writer, pax format).  Format (also in RECORD.md):
 *
 *   - entry names are jail paths without the leading '/';
 *   - added and changed files, directories and symlinks as themselves
 *     (mode and mtime from the writable layer; symlinks never followed;
 *     regular files opened O_NOFOLLOW and checked to be the entry that
 *     was listed);
 *   - by default, for use without sbx: every entry owned by the caller
 *     (opts.uid, opts.gid), set-user-ID and set-group-ID bits of files
 *     dropped, and deletions listed in a last entry SBX_EXPORT_DELETED:
 *     each deleted path, and each directory whose old contents were all
 *     removed (an opaque one, whose new contents follow in the tarball),
 *     relative and NUL-terminated, for `xargs -0 rm -rf --` before the
 *     rest is extracted;
 *   - with opts.oci, an OCI image layer: owners and modes as in the
 *     writable layer, a deleted path P/N as an empty regular file
 *     P/.wh.N, an opaque directory D as D plus D/.wh..wh..opq (the OCI /
 *     AUFS whiteout convention);
 *   - a file with holes is a sparse entry (pax GNU.sparse 1.0, which GNU
 *     tar and bsdtar extract as sparse files): only its data is read and
 *     written;
 *   - fifos, sockets and device nodes (other than whiteouts) are skipped
 *     and reported; nothing is ever opened before its type is known.
 *
 * Compression follows the file name: .tar, .tar.gz/.tgz, .tar.xz/.txz,
 * .tar.zst/.tzst, .tar.bz2/.tbz2; "-" writes an uncompressed tar to stdout.
 */
#ifndef SBX_EXPORT_H
#define SBX_EXPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "state.h"
#include "util.h"

/* The manifest of deletions (not with opts.oci). */
#define SBX_EXPORT_DELETED ".sbx-deleted"

/*
 * What an export reads from the writable layer and writes, at most: the
 * data of one file and of all of them (holes do not count: a sparse file
 * is stored sparse).  An export that would pass either fails, naming the
 * file; --max-file / --max-total raise them.
 */
#define SBX_EXPORT_MAX_FILE  (4ULL << 30)
#define SBX_EXPORT_MAX_TOTAL (16ULL << 30)

struct sbx_export_opts {
	bool oci;  /* an OCI layer: layer owners, .wh. whiteouts */
	uid_t uid; /* otherwise: the owner of every entry */
	gid_t gid;
	uint64_t max_file;  /* bytes of data per file; 0 = SBX_EXPORT_MAX_FILE,
			     * UINT64_MAX = unlimited */
	uint64_t max_total; /* in all; 0 = SBX_EXPORT_MAX_TOTAL */
};

struct sbx_export_stats {
	size_t files, dirs, symlinks, whiteouts, opaque;
	size_t setid_dropped;	  /* files whose set-user/group-ID bit was dropped */
	uint64_t bytes;		  /* data written (holes not counted) */
	size_t sparse;		  /* files stored sparse */
	uint64_t sparse_apparent; /* their sizes, holes included */
	struct sbx_strv skipped;  /* "path (fifo)" etc., escaped for display */
	size_t errors;		  /* unreadable entries of the writable layer */
};

/* Compression for a file name, or NULL with err set if it is unknown. */
const char *sbx_export_compression(const char *file, struct sbx_err *err);

/* Write the change set of sb to file.  stats is filled (free skipped). */
int sbx_export_write(const struct sbx_sandbox *sb, const char *file,
		     const struct sbx_export_opts *opts, struct sbx_export_stats *stats,
		     struct sbx_err *err);

#endif
