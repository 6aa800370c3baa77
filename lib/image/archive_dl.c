/* SPDX-License-Identifier: MIT */
/*
 * lib/image/archive_dl.c - libarchive and libcrypto, loaded on first use.
 *
 * sbx is not linked against them: linked, they (and the 16 libraries
 * libarchive needs: libxml2, ICU, libstdc++, nettle, lzma, zstd...) were
 * mapped and relocated at every start, about 3 ms of CPU before main -
 * as long as a whole bwrap run - while only unpacking or exporting a
 * tarball uses them (a cached image is found through its by-stat index).
 *
 * Each function sbx calls is defined here with its exact prototype from
 * <archive.h>, <archive_entry.h> and <openssl/evp.h> (the compiler checks
 * them) and forwards to the symbol resolved once, on the first call, from
 * the library dlopen()ed by its soname (RTLD_NOW: bound at load, as the
 * binary's -z now would have).  If the library cannot be loaded, every
 * function returns its failure value (NULL, ARCHIVE_FATAL, -1, 0) and
 * touches nothing.  A new libarchive/libcrypto call in sbx needs its line
 * below (the link fails otherwise: "undefined reference").
 */
#include <archive.h>
#include <archive_entry.h>
#include <dlfcn.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

enum { L_ARCHIVE, L_CRYPTO };

static const char *const sonames[] = {
    [L_ARCHIVE] = "libarchive.so.13",
    [L_CRYPTO] = "libcrypto.so.3",
};
static void *handles[2];

static void *sym(int lib, const char *name)
{
	void *h = __atomic_load_n(&handles[lib], __ATOMIC_ACQUIRE);

	if (!h) {
		void *none = NULL;

		h = dlopen(sonames[lib], RTLD_NOW | RTLD_LOCAL);
		if (!h)
			return NULL;
		/* Two threads may race here: dlopen counts, the handle is one. */
		if (!__atomic_compare_exchange_n(&handles[lib], &none, h, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			dlclose(h);
			h = none;
		}
	}
	return dlsym(h, name);
}

/* The resolved pointer is cached per function; a racing second resolve
 * stores the same value. */
#define RESOLVE(lib, name, ret, params)                                                            \
	typedef ret(*fn_t) params;                                                                 \
	static fn_t fp_;                                                                           \
	fn_t f = __atomic_load_n(&fp_, __ATOMIC_ACQUIRE);                                          \
	if (!f) {                                                                                  \
		f = (fn_t)sym(lib, #name);                                                         \
		if (f)                                                                             \
			__atomic_store_n(&fp_, f, __ATOMIC_RELEASE);                               \
	}

#define FN(lib, ret, name, fail, params, args)                                                     \
	ret name params                                                                            \
	{                                                                                          \
		RESOLVE(lib, name, ret, params)                                                    \
		return f ? f args : (fail);                                                        \
	}

#define VFN(lib, name, params, args)                                                               \
	void name params                                                                           \
	{                                                                                          \
		RESOLVE(lib, name, void, params)                                                   \
		if (f)                                                                             \
			f args;                                                                    \
	}

#define A  L_ARCHIVE
#define AE struct archive_entry *e
#define AR struct archive *a

/* archive_entry.h */
FN(A, struct archive_entry *, archive_entry_new, NULL, (void), ())
FN(A, struct archive_entry *, archive_entry_clear, NULL, (AE), (e))
VFN(A, archive_entry_free, (AE), (e))
FN(A, mode_t, archive_entry_filetype, 0, (AE), (e))
FN(A, mode_t, archive_entry_perm, 0, (AE), (e))
FN(A, la_int64_t, archive_entry_uid, 0, (AE), (e))
FN(A, la_int64_t, archive_entry_gid, 0, (AE), (e))
FN(A, la_int64_t, archive_entry_size, 0, (AE), (e))
FN(A, int, archive_entry_size_is_set, 0, (AE), (e))
FN(A, time_t, archive_entry_mtime, 0, (AE), (e))
FN(A, long, archive_entry_mtime_nsec, 0, (AE), (e))
FN(A, int, archive_entry_mtime_is_set, 0, (AE), (e))
FN(A, const char *, archive_entry_pathname, NULL, (AE), (e))
FN(A, const char *, archive_entry_symlink, NULL, (AE), (e))
FN(A, const char *, archive_entry_hardlink, NULL, (AE), (e))
VFN(A, archive_entry_copy_pathname, (AE, const char *s), (e, s))
VFN(A, archive_entry_copy_symlink, (AE, const char *s), (e, s))
VFN(A, archive_entry_copy_uname, (AE, const char *s), (e, s))
VFN(A, archive_entry_copy_gname, (AE, const char *s), (e, s))
VFN(A, archive_entry_set_pathname, (AE, const char *s), (e, s))
VFN(A, archive_entry_set_symlink, (AE, const char *s), (e, s))
VFN(A, archive_entry_set_hardlink, (AE, const char *s), (e, s))
VFN(A, archive_entry_set_filetype, (AE, unsigned int t), (e, t))
VFN(A, archive_entry_set_mode, (AE, mode_t m), (e, m))
VFN(A, archive_entry_set_perm, (AE, mode_t m), (e, m))
VFN(A, archive_entry_set_uid, (AE, la_int64_t v), (e, v))
VFN(A, archive_entry_set_gid, (AE, la_int64_t v), (e, v))
VFN(A, archive_entry_set_size, (AE, la_int64_t v), (e, v))
VFN(A, archive_entry_set_rdev, (AE, dev_t v), (e, v))
VFN(A, archive_entry_set_mtime, (AE, time_t t, long ns), (e, t, ns))
VFN(A, archive_entry_sparse_add_entry, (AE, la_int64_t o, la_int64_t l), (e, o, l))

/* archive.h: errors */
FN(A, int, archive_errno, 0, (AR), (a))
FN(A, const char *, archive_error_string, NULL, (AR), (a))

void archive_set_error(struct archive *a, int err, const char *fmt, ...)
{
	RESOLVE(A, archive_set_error, void, (struct archive *, int, const char *, ...))
	char msg[512];
	va_list ap;

	if (!f)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	f(a, err, "%s", msg);
}

/* archive.h: reading */
FN(A, struct archive *, archive_read_new, NULL, (void), ())
FN(A, int, archive_read_free, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_read_support_filter_all, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_read_support_filter_bzip2, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_read_support_filter_compress, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_read_support_filter_gzip, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_read_support_filter_lz4, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_read_support_filter_lzip, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_read_support_filter_lzma, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_read_support_filter_xz, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_read_support_filter_zstd, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_read_support_format_all, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_read_support_format_raw, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_read_support_format_tar, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_read_open, ARCHIVE_FATAL,
   (AR, void *data, archive_open_callback *o, archive_read_callback *r, archive_close_callback *c),
   (a, data, o, r, c))
FN(A, int, archive_read_open_filename, ARCHIVE_FATAL, (AR, const char *p, size_t bs), (a, p, bs))
FN(A, int, archive_read_open_memory, ARCHIVE_FATAL, (AR, const void *b, size_t n), (a, b, n))
FN(A, int, archive_read_next_header, ARCHIVE_FATAL, (AR, struct archive_entry **e), (a, e))
FN(A, la_ssize_t, archive_read_data, -1, (AR, void *b, size_t n), (a, b, n))
FN(A, int, archive_read_data_block, ARCHIVE_FATAL, (AR, const void **b, size_t *n, la_int64_t *off),
   (a, b, n, off))

/* archive.h: writing */
FN(A, struct archive *, archive_write_new, NULL, (void), ())
FN(A, int, archive_write_free, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_write_close, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_write_add_filter_bzip2, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_write_add_filter_gzip, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_write_add_filter_none, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_write_add_filter_xz, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_write_add_filter_zstd, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_write_set_format_pax, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_write_set_format_pax_restricted, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_write_set_format_raw, ARCHIVE_FATAL, (AR), (a))
FN(A, int, archive_write_open_fd, ARCHIVE_FATAL, (AR, int fd), (a, fd))
FN(A, int, archive_write_open_filename, ARCHIVE_FATAL, (AR, const char *p), (a, p))
FN(A, int, archive_write_header, ARCHIVE_FATAL, (AR, AE), (a, e))
FN(A, la_ssize_t, archive_write_data, -1, (AR, const void *b, size_t n), (a, b, n))
FN(A, int, archive_write_finish_entry, ARCHIVE_FATAL, (AR), (a))

/* openssl/evp.h: SHA-256 of a tarball (image ids) */
FN(L_CRYPTO, EVP_MD_CTX *, EVP_MD_CTX_new, NULL, (void), ())
VFN(L_CRYPTO, EVP_MD_CTX_free, (EVP_MD_CTX * c), (c))
FN(L_CRYPTO, const EVP_MD *, EVP_sha256, NULL, (void), ())
FN(L_CRYPTO, int, EVP_DigestInit_ex, 0, (EVP_MD_CTX * c, const EVP_MD *t, ENGINE *impl),
   (c, t, impl))
FN(L_CRYPTO, int, EVP_DigestUpdate, 0, (EVP_MD_CTX * c, const void *d, size_t n), (c, d, n))
FN(L_CRYPTO, int, EVP_DigestFinal_ex, 0, (EVP_MD_CTX * c, unsigned char *md, unsigned int *s),
   (c, md, s))
