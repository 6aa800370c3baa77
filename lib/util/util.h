/* SPDX-License-Identifier: MIT */
/* lib/util/util.h - errors, cleanup attributes and small helpers shared by sbx. */
#ifndef SBX_UTIL_H
#define SBX_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * Errors.  A fallible lib/ function returns 0 (or a non-negative value) on
 * success and -errno on failure, and fills the caller-owned struct sbx_err.
 * Callers add context on the way up with sbx_err_wrap(); only cmd/ prints,
 * as "sbx: <msg>" (plus ": <strerror>" when errnum is set and the message
 * does not already say it).
 */
#define SBX_ERR_MSG_MAX 1024

struct sbx_err {
	int errnum;		   /* positive errno, or 0 for "no errno" */
	char msg[SBX_ERR_MSG_MAX]; /* lowercase, subject quoted, no full stop */
};

/* Set err (may be NULL) and return -errnum (or -EINVAL when errnum is 0). */
int sbx_err_set(struct sbx_err *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefix the existing message with context: "ctx: old"; returns -errnum. */
int sbx_err_wrap(struct sbx_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reset to no error. */
void sbx_err_clear(struct sbx_err *err);
/* Render "msg: strerror(errnum)" into buf (cmd/ uses this to print). */
const char *sbx_err_str(const struct sbx_err *err, char *buf, size_t len);

/*
 * Memory.  Allocation failure aborts (as bubblewrap's die_oom does): every
 * other error is returned, but there is no useful way to report ENOMEM from
 * deep inside a jail set-up, and half-handled ENOMEM paths are where bugs
 * live.
 */
void *sbx_xmalloc(size_t n);
void *sbx_xcalloc(size_t nmemb, size_t n);
void *sbx_xrealloc(void *p, size_t n);
char *sbx_xstrdup(const char *s);
char *sbx_xstrndup(const char *s, size_t n);
char *sbx_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Cleanup attributes, as in crun and bubblewrap.  Always initialise. */
static inline void sbx_freep(void *p)
{
	free(*(void **)p);
}
/* Close *fd if open and mark it closed (-1). */
static inline void sbx_fd_close(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
		*fd = -1;
	}
}
static inline void sbx_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}
static inline void sbx_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _cleanup_(f)	 __attribute__((cleanup(f)))
#define _cleanup_free_	 _cleanup_(sbx_freep)
#define _cleanup_close_	 _cleanup_(sbx_closep)
#define _cleanup_fclose_ _cleanup_(sbx_fclosep)

static inline void *sbx_steal_ptr(void *pp)
{
	void **p = pp;
	void *r = *p;
	*p = NULL;
	return r;
}
#define steal_pointer(pp) sbx_steal_ptr(pp)
static inline int sbx_steal_fd(int *fd)
{
	int r = *fd;
	*fd = -1;
	return r;
}
#define steal_fd(fdp) sbx_steal_fd(fdp)

#define SBX_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A growable NULL-terminated string vector. */
struct sbx_strv {
	char **v; /* always NULL-terminated when n > 0 or v != NULL */
	size_t n;
};
void sbx_strv_push(struct sbx_strv *s, const char *str); /* copies */
void sbx_strv_push_take(struct sbx_strv *s, char *str);	 /* takes */
void sbx_strv_free(struct sbx_strv *s);
bool sbx_strv_contains(const struct sbx_strv *s, const char *str);
/* The strings joined by sep (a new string; "" for none). */
char *sbx_strv_join(const struct sbx_strv *s, const char *sep);

/* Parsing of profile/CLI values.  Return 0 or -EINVAL (err names value). */
int sbx_parse_size(const char *s, uint64_t *out, struct sbx_err *err); /* 512k 64m 4G, bytes */
/* 1536 -> "1.5 KiB" (into buf). */
const char *sbx_size_text(double bytes, char *buf, size_t len);
int sbx_parse_duration(const char *s, uint64_t *ms,
		       struct sbx_err *err); /* 90s 30m 2h 500ms, plain = s */
/* Has the directory NAME below DIR ("." for DIR itself) an entry besides
 * "." and ".."?  One getdents64 for an empty one; false when it cannot be
 * opened (not followed if a symlink) or read. */
bool sbx_dir_has_entry(int dir, const char *name);
/*
 * Open a file the caller named on the command line for writing (flags:
 * O_TRUNC or O_APPEND, O_CLOEXEC...; O_CREAT is implied).  Run as root
 * through sudo ($SUDO_UID a user's, $SUDO_GID), a file this call made in
 * a directory that user owns becomes theirs, as it would be without sudo
 * (a report or tarball in the developer's project).  A file that was
 * there keeps its owner.  An fd, or -errno.
 */
int sbx_open_users_file(const char *path, int flags, mode_t mode);
/* $NAME as a uid or gid (decimal, below (id_t)-1), else -1. */
int64_t sbx_env_id(const char *name);
/*
 * The user with uid, and the group with gid, or NULL (getpwuid() and
 * getgrgid()'s static storage and meaning).  A dynamically linked sbx asks
 * glibc's NSS, every source of nsswitch.conf.  The static one reads
 * /etc/passwd and /etc/group alone: glibc's NSS modules other than "files"
 * are shared objects it would dlopen() into a static binary, where
 * libnss_systemd (Debian's "passwd: files systemd") crashed the first
 * lookup of an id the files do not list (a CI container's arbitrary uid).
 * An id listed only by another source (LDAP, systemd-homed) is then just
 * a number to the static sbx.  sbx_user_in()/sbx_group_in(): the same
 * from a given file, for the tests.
 */
struct passwd;
struct group;
struct passwd *sbx_user(uid_t uid);
struct group *sbx_group(gid_t gid);
struct passwd *sbx_user_in(const char *file, uid_t uid);
struct group *sbx_group_in(const char *file, gid_t gid);
/* The inverse: 90000 -> "90s", 7200000 -> "2h", 1500 -> "1500ms" (into buf). */
const char *sbx_duration_text(uint64_t ms, char *buf, size_t len);
int sbx_parse_u64(const char *s, uint64_t *out, struct sbx_err *err);
int sbx_parse_bool(const char *s, bool *out,
		   struct sbx_err *err); /* yes/no true/false 1/0 on/off */

/* Levenshtein distance, for "did you mean" suggestions. */
size_t sbx_edit_distance(const char *a, const char *b);
/* Closest candidate within a sensible distance, or NULL. */
const char *sbx_closest(const char *word, const char *const *candidates, size_t n);

/* Monotonic clock in nanoseconds / milliseconds (double). */
uint64_t sbx_now_ns(void);
double sbx_ms_since(uint64_t start_ns);
/* Wall clock as RFC 3339 UTC with milliseconds into buf (>= 32 bytes). */
const char *sbx_rfc3339_now(char *buf, size_t len);
/* A time as sbx_rfc3339_now writes it, in seconds since the epoch (with
 * its fraction); -1 when t is NULL or not one. */
double sbx_rfc3339_parse(const char *t);

/* I/O that retries on EINTR and short counts, and waits out EAGAIN (an fd
 * another process left non-blocking: a caller's stdout).  0 or -errno;
 * sbx_write_done says how much was written before an error. */
int sbx_write_all(int fd, const void *buf, size_t len);
int sbx_write_done(int fd, const void *buf, size_t len, size_t *done);
ssize_t sbx_read_all(int fd, void *buf, size_t len); /* bytes read or -errno */
/* One message buf[0..len) on a Unix socket with fds (SCM_RIGHTS, at most
 * 64), retried on EINTR, never SIGPIPE: 0 or -errno. */
int sbx_send_fds(int sock, const void *buf, size_t len, const int *fds, size_t nfds);
/* Read a whole (small) file by fd into a NUL-terminated buffer. */
int sbx_read_fd_string(int fd, size_t max, char **out, size_t *len);
/* Write a small string to a path (e.g. /proc/PID/uid_map). */
int sbx_write_file(const char *path, const char *data, size_t len);

/* Make a directory path (like mkdir -p) with mode; 0 or -errno. */
int sbx_mkdir_p(const char *path, mode_t mode);
/* The directory NAME in DIRFD (no symlink followed) for readdir, or NULL
 * (errno set). */
DIR *sbx_opendir_at(int dirfd, const char *name);
/* Is NAME in DIRFD (no symlink followed) still the file fd is?  What a
 * lock taken on an open file needs before it means anything: another
 * process may have renamed or unlinked that name meanwhile. */
bool sbx_fd_is_named(int fd, int dirfd, const char *name);

/* Escape a string for a single-line terminal display: control characters
 * and invalid UTF-8 become \n, \xNN...  Returns a malloc'd string. */
char *sbx_escape_display(const char *s);
/* The same, but a backslash stays one: for a line that may already hold
 * escaped text (sbx's own stderr lines). */
char *sbx_escape_controls(const char *s);

/* Valid UTF-8? (for JSON: invalid names are escaped before output) */
bool sbx_utf8_valid(const char *s, size_t len);
/* How long the UTF-8 character at s is (1-4), 0 if none starts there (or
 * at its NUL). */
size_t sbx_utf8_char_len(const char *s);
/* n bytes as 2n lowercase hex digits and a NUL (out holds 2n + 1). */
void sbx_hex_encode(const void *b, size_t n, char *out);
/* The bytes of hex (an even count of hex digits) into out (strlen(hex) / 2
 * bytes); -1 if it is not that. */
int sbx_hex_decode(const char *hex, unsigned char *out);

/* Decode mountinfo's octal escapes (\040 space, \011 tab, \012 nl, \134
 * backslash) in place. */
void sbx_mountinfo_unescape(char *s);
/*
 * openat2(dirfd, path, flags | O_CLOEXEC) with RESOLVE_BENEATH,
 * RESOLVE_NO_SYMLINKS and RESOLVE_NO_MAGICLINKS: never a symlink, never out
 * of dirfd.  Without openat2 (valgrind, kernel < 5.6) the same one
 * component at a time, a "." or ".." refused (EXDEV).  An fd, or -1 with
 * errno set.
 */
int sbx_open_beneath(int dirfd, const char *path, int flags);

/* What sbx_path_clean does with a ".." component. */
enum sbx_dotdot {
	SBX_DOTDOT_KEEP,     /* left as it is (the kernel resolves it) */
	SBX_DOTDOT_COLLAPSE, /* taken back with the component before ("/.." is "/") */
	SBX_DOTDOT_REFUSE,   /* the path is refused: NULL */
};
/* An absolute path, lexically: no "//", "/./" or trailing "/"; ".." as dd
 * says.  Malloc'd, or NULL (SBX_DOTDOT_REFUSE and a ".."). */
char *sbx_path_clean(const char *in, enum sbx_dotdot dd);
/* Is path (absolute, normalised) dir itself or below it ("/" holds all)? */
bool sbx_path_under(const char *path, const char *dir);

/* Exit statuses (README.md "Exit status", sbx(1) EXIT STATUS). */
enum {
	SBX_EXIT_OK = 0,
	SBX_EXIT_FAIL = 1,  /* other subcommands: failure */
	SBX_EXIT_USAGE = 2, /* other subcommands: usage error */
	SBX_EXIT_TIMEOUT = 124,
	SBX_EXIT_SBX = 125, /* run/exec: sbx itself failed */
	SBX_EXIT_NOEXEC = 126,
	SBX_EXIT_NOTFOUND = 127,
};

#endif
