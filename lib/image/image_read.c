/* SPDX-License-Identifier: MIT */
/*
 * lib/image/image_read.c - where lib/image/image_unpack.c's tar reader gets its bytes
 * (lib/image/image_int.h): a file or a memory buffer, hashed as it is read, and
 * for a compressed file a decompressor thread, so that inflating the next
 * megabytes overlaps writing the files of the previous ones.  This is what
 * puts the unpack ahead of `bsdtar -xf` on a .tar.gz (bench/unpack.sh).
 *
 * Only the filters libarchive implements in-process are enabled (it could
 * otherwise run external programs for some formats).
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "image_int.h"

#define PROGRESS_STEP (4U << 20)

static void add_filters(struct archive *a)
{
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_bzip2(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_lzma(a);
	archive_read_support_filter_lzip(a);
	archive_read_support_filter_zstd(a);
	archive_read_support_filter_lz4(a);
	archive_read_support_filter_compress(a);
}

static void hash(struct sbx_image_src *s, const void *p, size_t n)
{
	uint64_t t0 = sbx_now_ns();

	EVP_DigestUpdate(s->md, p, n);
	s->hash_ns += sbx_now_ns() - t0;
	atomic_fetch_add(&s->done, n);
}

/* Progress callback, always from the caller's thread. */
static void progress(struct sbx_image_src *s, bool last)
{
	uint64_t d = atomic_load(&s->done);

	if (s->o->progress && (last || d >= s->next_progress)) {
		s->o->progress(d, s->total, s->o->cb_data);
		s->next_progress = d + PROGRESS_STEP;
	}
}

static ssize_t read_fd(struct sbx_image_src *s)
{
	ssize_t n;

	do
		n = read(s->fd, s->buf, SBX_SRC_BUFSZ);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	hash(s, s->buf, (size_t)n);
	return n;
}

/* Direct mode: the tar reader reads (and decompresses) the file itself. */
static la_ssize_t direct_cb(struct archive *a, void *data, const void **buf)
{
	struct sbx_image_src *s = data;
	ssize_t n = read_fd(s);

	if (n < 0) {
		archive_set_error(a, (int)-n, "cannot read the archive");
		return -1;
	}
	progress(s, false);
	*buf = s->buf;
	return n;
}

/* ---- threaded mode: decompressor thread -> ring -> tar reader ---- */

static la_ssize_t raw_cb(struct archive *a, void *data, const void **buf)
{
	struct sbx_image_src *s = data;
	ssize_t n = read_fd(s);

	if (n < 0) {
		archive_set_error(a, (int)-n, "cannot read the archive");
		return -1;
	}
	*buf = s->buf;
	return n;
}

/* A free ring buffer for the producer, or NULL when no more is wanted. */
static unsigned char *ring_get(struct sbx_image_src *s, unsigned *idx)
{
	unsigned char *b = NULL;

	pthread_mutex_lock(&s->mu);
	while (s->count == SBX_SRC_NBUF && !s->cancel && !s->stop_inflate)
		pthread_cond_wait(&s->cv, &s->mu);
	if (!s->cancel && !s->stop_inflate) {
		*idx = (s->head + s->count) % SBX_SRC_NBUF;
		b = s->ring[*idx];
	}
	pthread_mutex_unlock(&s->mu);
	return b;
}

static void ring_put(struct sbx_image_src *s, unsigned idx, size_t len)
{
	pthread_mutex_lock(&s->mu);
	s->len[idx] = len;
	s->count++;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static bool cancelled(struct sbx_image_src *s)
{
	bool c;

	pthread_mutex_lock(&s->mu);
	c = s->cancel;
	pthread_mutex_unlock(&s->mu);
	return c;
}

static void producer_done(struct sbx_image_src *s, int err, const char *msg)
{
	pthread_mutex_lock(&s->mu);
	s->eof = true;
	s->err = err;
	snprintf(s->errmsg, sizeof(s->errmsg), "%s", msg ? msg : "read error");
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

/* Decompress into the ring; then hash the rest of the file. */
static int pump(struct sbx_image_src *s, struct archive *a)
{
	unsigned char *cur = NULL;
	unsigned idx = 0;
	size_t fill = 0;

	for (;;) {
		const void *p;
		size_t n;
		la_int64_t off;
		int r = archive_read_data_block(a, &p, &n, &off);

		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN)
			return -1;
		while (n) {
			size_t k;

			if (!cur && !(cur = ring_get(s, &idx)))
				return 1; /* cancelled, or the tar reader is done */
			k = n < SBX_SRC_BUFSZ - fill ? n : SBX_SRC_BUFSZ - fill;
			memcpy(cur + fill, p, k);
			fill += k;
			p = (const char *)p + k;
			n -= k;
			if (fill == SBX_SRC_BUFSZ) {
				ring_put(s, idx, fill);
				cur = NULL;
				fill = 0;
			}
		}
	}
	if (cur && fill)
		ring_put(s, idx, fill);
	return 0;
}

static void *producer(void *arg)
{
	struct sbx_image_src *s = arg;
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	int r;

	add_filters(a);
	archive_read_support_format_raw(a);
	r = archive_read_open(a, s, NULL, raw_cb, NULL);
	if (r == ARCHIVE_OK) {
		r = archive_read_next_header(a, &e);
		r = r == ARCHIVE_EOF ? 0 : r < ARCHIVE_WARN ? -1 : pump(s, a);
	} else {
		r = -1;
	}
	if (r < 0) {
		int en = archive_errno(a);

		producer_done(s, en > 0 && en != EILSEQ ? en : EIO, archive_error_string(a));
	} else {
		ssize_t n = 0;

		/* Hash what is left without inflating it: the key covers the
		 * file, and data after the tar's end must cost no CPU. */
		while (!cancelled(s) && (n = read_fd(s)) > 0)
			;
		producer_done(s, n < 0 ? (int)-n : 0, n < 0 ? "cannot read the archive" : NULL);
	}
	archive_read_free(a);
	return NULL;
}

/* Next decompressed buffer: length, 0 at the end, -1 on error. */
static ssize_t ring_next(struct sbx_image_src *s, const void **buf)
{
	ssize_t n;

	pthread_mutex_lock(&s->mu);
	if (s->holding) {
		s->head = (s->head + 1) % SBX_SRC_NBUF;
		s->count--;
		s->holding = false;
		pthread_cond_broadcast(&s->cv);
	}
	while (s->count == 0 && !s->eof)
		pthread_cond_wait(&s->cv, &s->mu);
	if (s->count == 0) {
		n = s->err ? -1 : 0;
	} else {
		s->holding = true;
		*buf = s->ring[s->head];
		n = (ssize_t)s->len[s->head];
	}
	pthread_mutex_unlock(&s->mu);
	return n;
}

static la_ssize_t ring_cb(struct archive *a, void *data, const void **buf)
{
	struct sbx_image_src *s = data;
	ssize_t n = ring_next(s, buf);

	if (n < 0)
		archive_set_error(a, s->err, "%s", s->errmsg);
	progress(s, false);
	return n;
}

/* Worth a thread: a compressed regular file (by its magic). */
static bool compressed_file(int fd)
{
	static const struct {
		const char *m;
		size_t n;
	} magic[] = {
	    {"\x1f\x8b", 2}, /* gzip */
	    {"BZh", 3},	     /* bzip2 */
	    {"\xfd"
	     "7zXZ\0",
	     6},		     /* xz */
	    {"\x28\xb5\x2f\xfd", 4}, /* zstd */
	    {"\x04\x22\x4d\x18", 4}, /* lz4 */
	    {"LZIP", 4},	     /* lzip */
	};
	unsigned char head[8];
	struct stat sb;
	off_t at = lseek(fd, 0, SEEK_CUR);

	if (at < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    pread(fd, head, sizeof(head), at) != (ssize_t)sizeof(head))
		return false;
	for (size_t i = 0; i < SBX_ARRAY_SIZE(magic); i++)
		if (memcmp(head, magic[i].m, magic[i].n) == 0)
			return true;
	return false;
}

static bool start_thread(struct sbx_image_src *s)
{
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	for (int i = 0; i < SBX_SRC_NBUF; i++)
		s->ring[i] = sbx_xmalloc(SBX_SRC_BUFSZ);
	s->threaded = pthread_create(&s->thread, NULL, producer, s) == 0;
	return s->threaded;
}

void sbx_image_src_init(struct sbx_image_src *s, int fd, const void *mem, size_t len,
			const struct sbx_image_opts *o)
{
	struct stat sb;

	*s = (struct sbx_image_src){.o = o, .fd = fd, .mem = mem, .memlen = len};
	s->md = EVP_MD_CTX_new();
	if (!s->md || !EVP_DigestInit_ex(s->md, EVP_sha256(), NULL))
		abort();
	if (mem) {
		s->total = len;
		return;
	}
	s->buf = sbx_xmalloc(SBX_SRC_BUFSZ);
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
		s->total = (uint64_t)sb.st_size;
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	}
}

int sbx_image_src_open(struct sbx_image_src *s, struct archive *a)
{
	archive_read_support_format_tar(a);
	if (s->mem) {
		hash(s, s->mem, s->memlen);
		add_filters(a);
		return archive_read_open_memory(a, s->mem, s->memlen);
	}
	if (compressed_file(s->fd) && start_thread(s))
		return archive_read_open(a, s, NULL, ring_cb, NULL);
	add_filters(a);
	return archive_read_open(a, s, NULL, direct_cb, NULL);
}

/* Read what the tar reader left (end-of-archive padding, trailing data). */
static int drain(struct sbx_image_src *s, struct sbx_err *err)
{
	ssize_t n;

	if (s->threaded) {
		const void *b;

		pthread_mutex_lock(&s->mu);
		s->stop_inflate = true;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		while ((n = ring_next(s, &b)) > 0)
			;
		if (n < 0)
			return sbx_err_set(err, s->err, "cannot read the archive: %s", s->errmsg);
		return 0;
	}
	if (s->mem)
		return 0;
	while ((n = read_fd(s)) > 0)
		;
	return n < 0 ? sbx_err_set(err, (int)-n, "cannot read the archive") : 0;
}

int sbx_image_src_finish(struct sbx_image_src *s, bool ok, char sha256[65], struct sbx_err *err)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	int r = ok ? drain(s, err) : 0;

	if (s->threaded) {
		pthread_mutex_lock(&s->mu);
		s->cancel = true;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->thread, NULL);
		pthread_mutex_destroy(&s->mu);
		pthread_cond_destroy(&s->cv);
	}
	for (int i = 0; i < SBX_SRC_NBUF; i++)
		free(s->ring[i]);
	if (ok && r == 0)
		progress(s, true);
	EVP_DigestFinal_ex(s->md, md, &mdlen);
	sbx_hex_encode(md, mdlen < 32 ? mdlen : 32, sha256);
	EVP_MD_CTX_free(s->md);
	free(s->buf);
	return r;
}
