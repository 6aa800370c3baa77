/* SPDX-License-Identifier: MIT */
/*
 * lib/review/git_dl.c - libgit2, loaded on first use.
 *
 * As with libarchive (lib/image/archive_dl.c): linked, libgit2 and what it
 * needs (libssl, libssh2, libhttp-parser, libpcre2...) would be mapped and
 * relocated at every start of sbx, while only `sbx diff` uses it.  Each
 * function sbx calls is defined here with its prototype from <git2.h> (the
 * compiler checks them) and forwards to the symbol resolved on the first
 * call from the library dlopen()ed by its soname.  If it cannot be loaded,
 * every function fails (-1, NULL) and git_error_last() says why.
 */
#include <dlfcn.h>
#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/repository.h>
#include <stdbool.h>
#include <stdio.h>

#include "review_int.h"

static const char *const soname = "libgit2.so.1.5";
static void *handle;

static void *sym(const char *name)
{
	void *h = __atomic_load_n(&handle, __ATOMIC_ACQUIRE);

	if (!h) {
		void *none = NULL;

		h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			return NULL;
		if (!__atomic_compare_exchange_n(&handle, &none, h, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			dlclose(h);
			h = none;
		}
	}
	return dlsym(h, name);
}

#define RESOLVE(name, ret, params)                                                                 \
	typedef ret(*fn_t) params;                                                                 \
	static fn_t fp_;                                                                           \
	fn_t f = __atomic_load_n(&fp_, __ATOMIC_ACQUIRE);                                          \
	if (!f) {                                                                                  \
		f = (fn_t)sym(#name);                                                              \
		if (f)                                                                             \
			__atomic_store_n(&fp_, f, __ATOMIC_RELEASE);                               \
	}

#define FN(ret, name, fail, params, args)                                                          \
	ret name params                                                                            \
	{                                                                                          \
		RESOLVE(name, ret, params)                                                         \
		return f ? f args : (fail);                                                        \
	}

#define VFN(name, params, args)                                                                    \
	void name params                                                                           \
	{                                                                                          \
		RESOLVE(name, void, params)                                                        \
		if (f)                                                                             \
			f args;                                                                    \
	}

FN(int, git_libgit2_init, -1, (void), ())
FN(int, git_repository_new, -1, (git_repository * *out), (out))
VFN(git_repository_free, (git_repository * r), (r))
FN(int, git_repository_set_odb, -1, (git_repository * r, git_odb *odb), (r, odb))
FN(int, git_odb_new, -1, (git_odb * *out), (out))
VFN(git_odb_free, (git_odb * odb), (odb))
FN(int, git_odb_add_backend, -1, (git_odb * odb, git_odb_backend *b, int prio), (odb, b, prio))
FN(int, git_mempack_new, -1, (git_odb_backend * *out), (out))
FN(int, git_blob_create_from_buffer, -1,
   (git_oid * id, git_repository *r, const void *buf, size_t len), (id, r, buf, len))
FN(int, git_index_new, -1, (git_index * *out), (out))
VFN(git_index_free, (git_index * i), (i))
FN(int, git_index_add, -1, (git_index * i, const git_index_entry *e), (i, e))
FN(int, git_index_write_tree_to, -1, (git_oid * out, git_index *i, git_repository *r), (out, i, r))
FN(int, git_tree_lookup, -1, (git_tree * *out, git_repository *r, const git_oid *id), (out, r, id))
VFN(git_tree_free, (git_tree * t), (t))
FN(int, git_diff_options_init, -1, (git_diff_options * o, unsigned int v), (o, v))
FN(int, git_diff_tree_to_tree, -1,
   (git_diff * *d, git_repository *r, git_tree *a, git_tree *b, const git_diff_options *o),
   (d, r, a, b, o))
VFN(git_diff_free, (git_diff * d), (d))
FN(int, git_diff_print, -1,
   (git_diff * d, git_diff_format_t fmt, git_diff_line_cb cb, void *payload), (d, fmt, cb, payload))
FN(int, git_diff_get_stats, -1, (git_diff_stats * *out, git_diff *d), (out, d))
VFN(git_diff_stats_free, (git_diff_stats * s), (s))
FN(int, git_diff_stats_to_buf, -1,
   (git_buf * out, const git_diff_stats *s, git_diff_stats_format_t fmt, size_t width),
   (out, s, fmt, width))
VFN(git_buf_dispose, (git_buf * b), (b))

FN(const git_error *, git_error_last, NULL, (void), ())

const char *sbx_git_error(void)
{
	const git_error *e;

	if (!sym("git_error_last"))
		return "libgit2 cannot be loaded (apt-get install libgit2-1.5)";
	e = git_error_last();
	return e && e->message ? e->message : "unknown error";
}
