/* SPDX-License-Identifier: MIT */
/*
 * lib/image/image_int.h - internal to lib/image*.c: the archive source
 * (lib/image/image_read.c) that lib/image/image_unpack.c reads tar entries from.
 *
 * A source hashes every byte of the archive file (SHA-256, the image key)
 * as it is read and reports progress.  A compressed tarball in a regular
 * file is decompressed by a second thread into a small ring of buffers, so
 * decompression overlaps the writing of files; anything else is read and
 * decompressed in the caller's thread.
 */
#ifndef SBX_IMAGE_INT_H
#define SBX_IMAGE_INT_H

#include <archive.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>

#include "image.h"

#define SBX_SRC_NBUF  4
#define SBX_SRC_BUFSZ (1U << 20)

struct sbx_image_src {
	const struct sbx_image_opts *o;
	int fd; /* -1 for memory */
	const void *mem;
	size_t memlen;
	uint64_t total;	       /* archive size, 0 if unknown */
	_Atomic uint64_t done; /* archive bytes read so far */
	uint64_t next_progress;
	EVP_MD_CTX *md;
	uint64_t hash_ns;
	unsigned char *buf; /* direct mode read buffer */
	/* Threaded mode: the decompressor fills ring[], the tar reader drains it. */
	bool threaded;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned char *ring[SBX_SRC_NBUF];
	size_t len[SBX_SRC_NBUF];
	unsigned head, count; /* count includes the buffer being read */
	bool holding;	      /* the reader holds ring[head] */
	bool eof, cancel;     /* cancel: failed, stop everything */
	bool stop_inflate;    /* tar done: only hash the rest of the file */
	int err;
	char errmsg[256];
};

/* Set up a source; nothing is read yet. */
void sbx_image_src_init(struct sbx_image_src *s, int fd, const void *mem, size_t len,
			const struct sbx_image_opts *o);
/* Enable the tar formats and filters on `a` and open it on the source. */
int sbx_image_src_open(struct sbx_image_src *s, struct archive *a);
/*
 * Done with the archive.  On success (ok), read and hash what follows its
 * end so the key covers the whole file; write the hex SHA-256.  Stops the
 * thread, frees everything.  Returns 0 or -errno (read error), err filled.
 */
int sbx_image_src_finish(struct sbx_image_src *s, bool ok, char sha256[65], struct sbx_err *err);

#endif
