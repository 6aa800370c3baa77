/* SPDX-License-Identifier: MIT */
/* lib/util/util.c - errors, memory, parsing and file helpers. */
#include "util.h"
#include "rmtree.h"

#include <ctype.h>
#include <grp.h>
#include <pwd.h>
#include <sys/auxv.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>

int sbx_err_set(struct sbx_err *err, int errnum, const char *fmt, ...)
{
	if (errnum < 0)
		errnum = -errnum;
	if (err) {
		va_list ap;

		err->errnum = errnum;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return errnum ? -errnum : -EINVAL;
}

int sbx_err_wrap(struct sbx_err *err, const char *fmt, ...)
{
	char ctx[SBX_ERR_MSG_MAX], old[SBX_ERR_MSG_MAX];
	size_t cl;
	va_list ap;

	if (!err)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	cl = strlen(ctx);
	memcpy(err->msg, ctx, cl + 1);
	if (old[0] && cl + 2 < sizeof(err->msg)) {
		memcpy(err->msg + cl, ": ", 3);
		cl += 2;
		size_t ol = strnlen(old, sizeof(err->msg) - cl - 1);
		memcpy(err->msg + cl, old, ol);
		err->msg[cl + ol] = '\0';
	}
	return err->errnum ? -err->errnum : -EINVAL;
}

void sbx_err_clear(struct sbx_err *err)
{
	if (err) {
		err->errnum = 0;
		err->msg[0] = '\0';
	}
}

const char *sbx_err_str(const struct sbx_err *err, char *buf, size_t len)
{
	const char *es;

	if (!err->errnum) {
		snprintf(buf, len, "%s", err->msg);
		return buf;
	}
	es = strerror(err->errnum);
	/* Don't repeat the errno text when the message already ends with it. */
	size_t ml = strlen(err->msg), el = strlen(es);
	if (ml >= el && strcmp(err->msg + ml - el, es) == 0)
		snprintf(buf, len, "%s", err->msg);
	else if (ml)
		snprintf(buf, len, "%s: %s", err->msg, es);
	else
		snprintf(buf, len, "%s", es);
	return buf;
}

static void __attribute__((noreturn)) die_oom(void)
{
	static const char m[] = "sbx: out of memory\n";

	(void)!write(2, m, sizeof(m) - 1);
	abort();
}

void *sbx_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die_oom();
	return p;
}

void *sbx_xcalloc(size_t nmemb, size_t n)
{
	void *p = calloc(nmemb ? nmemb : 1, n ? n : 1);

	if (!p)
		die_oom();
	return p;
}

void *sbx_xrealloc(void *p, size_t n)
{
	void *r = realloc(p, n ? n : 1);

	if (!r)
		die_oom();
	return r;
}

char *sbx_xstrdup(const char *s)
{
	char *r;

	if (!s)
		return NULL;
	r = strdup(s);
	if (!r)
		die_oom();
	return r;
}

char *sbx_xstrndup(const char *s, size_t n)
{
	char *r = strndup(s, n);

	if (!r)
		die_oom();
	return r;
}

char *sbx_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *r;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&r, fmt, ap);
	va_end(ap);
	if (n < 0)
		die_oom();
	return r;
}

void sbx_strv_push_take(struct sbx_strv *s, char *str)
{
	s->v = sbx_xrealloc(s->v, (s->n + 2) * sizeof(char *));
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
}

void sbx_strv_push(struct sbx_strv *s, const char *str)
{
	sbx_strv_push_take(s, sbx_xstrdup(str));
}

void sbx_strv_free(struct sbx_strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

bool sbx_strv_contains(const struct sbx_strv *s, const char *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], str) == 0)
			return true;
	return false;
}

char *sbx_strv_join(const struct sbx_strv *s, const char *sep)
{
	size_t len = 1, sl = strlen(sep);
	char *out, *p;

	for (size_t i = 0; i < s->n; i++)
		len += strlen(s->v[i]) + sl;
	out = p = sbx_xmalloc(len);
	*p = '\0';
	for (size_t i = 0; i < s->n; i++)
		p = stpcpy(i ? stpcpy(p, sep) : p, s->v[i]);
	return out;
}

int sbx_parse_u64(const char *s, uint64_t *out, struct sbx_err *err)
{
	char *end = NULL;
	unsigned long long v;

	if (!s || !*s || !isdigit((unsigned char)*s))
		return sbx_err_set(err, 0, "'%s' is not a number", s ? s : "");
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return sbx_err_set(err, 0, "'%s' is not a number", s);
	*out = v;
	return 0;
}

int sbx_parse_size(const char *s, uint64_t *out, struct sbx_err *err)
{
	char *end = NULL;
	unsigned long long v;
	uint64_t mul = 1;

	if (!s || !isdigit((unsigned char)*s))
		goto bad;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		goto bad;
	switch (*end) {
	case '\0':
		mul = 1;
		break;
	case 'k':
	case 'K':
		mul = 1ULL << 10;
		end++;
		break;
	case 'm':
	case 'M':
		mul = 1ULL << 20;
		end++;
		break;
	case 'g':
	case 'G':
		mul = 1ULL << 30;
		end++;
		break;
	case 't':
	case 'T':
		mul = 1ULL << 40;
		end++;
		break;
	default:
		goto bad;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		goto bad;
	if (v && mul > UINT64_MAX / v)
		goto bad;
	*out = v * mul;
	return 0;
bad:
	return sbx_err_set(err, 0,
			   "bad size '%s' (expected a number with an optional k, m, g or t suffix, "
			   "e.g. 512k, 64m, 4G)",
			   s ? s : "");
}

int sbx_parse_duration(const char *s, uint64_t *ms, struct sbx_err *err)
{
	char *end = NULL;
	unsigned long long v;
	uint64_t mul;

	if (!s || !isdigit((unsigned char)*s))
		goto bad;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		goto bad;
	if (strcmp(end, "ms") == 0)
		mul = 1;
	else if (*end == '\0' || strcmp(end, "s") == 0)
		mul = 1000;
	else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		mul = 60 * 1000;
	else if (strcmp(end, "h") == 0)
		mul = 3600 * 1000;
	else if (strcmp(end, "d") == 0)
		mul = 86400 * 1000;
	else
		goto bad;
	if (v && mul > UINT64_MAX / v)
		goto bad;
	*ms = v * mul;
	return 0;
bad:
	return sbx_err_set(err, 0,
			   "bad duration '%s' (expected a number with a unit: 500ms, 90s, 30m, 2h)",
			   s ? s : "");
}

int sbx_parse_bool(const char *s, bool *out, struct sbx_err *err)
{
	static const char *const yes[] = {"yes", "true", "1", "on"};
	static const char *const no[] = {"no", "false", "0", "off"};

	for (size_t i = 0; i < SBX_ARRAY_SIZE(yes); i++) {
		if (s && strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (s && strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return sbx_err_set(err, 0, "bad boolean '%s' (expected yes or no)", s ? s : "");
}

size_t sbx_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *row = sbx_xcalloc(lb + 1, sizeof(size_t));
	size_t r;

	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t cost =
			    tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			size_t best = prev + cost;

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	r = row[lb];
	free(row);
	return r;
}

const char *sbx_closest(const char *word, const char *const *cand, size_t n)
{
	const char *best = NULL;
	size_t bestd = SIZE_MAX, limit = strlen(word) / 3 + 1;

	if (limit < 2)
		limit = 2;
	for (size_t i = 0; i < n; i++) {
		size_t d = sbx_edit_distance(word, cand[i]);

		if (d < bestd) {
			bestd = d;
			best = cand[i];
		}
	}
	/* A prefix of a candidate (e.g. "ex" for "exec") is also a hint. */
	if (best && bestd > limit) {
		for (size_t i = 0; i < n; i++)
			if (*word && strncmp(cand[i], word, strlen(word)) == 0)
				return cand[i];
		return NULL;
	}
	return best;
}

uint64_t sbx_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

double sbx_ms_since(uint64_t start_ns)
{
	return (double)(sbx_now_ns() - start_ns) / 1e6;
}

const char *sbx_rfc3339_now(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	char tmp[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(tmp, sizeof(tmp), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03ldZ", tmp, ts.tv_nsec / 1000000L);
	return buf;
}

double sbx_rfc3339_parse(const char *t)
{
	struct tm tm = {0};
	const char *rest;
	double frac = 0;

	if (!t || !(rest = strptime(t, "%Y-%m-%dT%H:%M:%S", &tm)))
		return -1;
	if (*rest == '.')
		frac = strtod(rest, NULL);
	return (double)timegm(&tm) + frac;
}

int sbx_write_done(int fd, const void *buf, size_t len, size_t *done)
{
	const char *p = buf;

	*done = 0;
	while (*done < len) {
		ssize_t n = write(fd, p + *done, len - *done);

		if (n >= 0) {
			*done += (size_t)n;
		} else if (errno == EAGAIN) {
			struct pollfd q = {.fd = fd, .events = POLLOUT};

			(void)poll(&q, 1, -1);
		} else if (errno != EINTR) {
			return -errno;
		}
	}
	return 0;
}

int sbx_write_all(int fd, const void *buf, size_t len)
{
	size_t done;

	return sbx_write_done(fd, buf, len, &done);
}

ssize_t sbx_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

int sbx_read_fd_string(int fd, size_t max, char **out, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = sbx_xmalloc(cap + 1);

	for (;;) {
		ssize_t r;

		if (n == cap) {
			if (cap >= max) {
				free(buf);
				return -EFBIG;
			}
			cap *= 2;
			if (cap > max)
				cap = max;
			buf = sbx_xrealloc(buf, cap + 1);
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(buf);
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

int sbx_write_file(const char *path, const char *data, size_t len)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	return sbx_write_all(fd, data, len);
}

DIR *sbx_opendir_at(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (fd >= 0 && !d) {
		int e = errno;

		close(fd);
		errno = e;
	}
	return d;
}

bool sbx_fd_is_named(int fd, int dirfd, const char *name)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && fstatat(dirfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	       a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

int sbx_mkdir_p(const char *path, mode_t mode)
{
	_cleanup_free_ char *p = sbx_xstrdup(path);

	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(p, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* sbx_rm_rf_at() lives in lib/util/rmtree.c. */

bool sbx_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + len;

	while (p < e) {
		size_t n;
		uint32_t cp;

		if (*p < 0x80) {
			p++;
			continue;
		} else if ((*p & 0xe0) == 0xc0) {
			n = 1;
			cp = *p & 0x1f;
		} else if ((*p & 0xf0) == 0xe0) {
			n = 2;
			cp = *p & 0x0f;
		} else if ((*p & 0xf8) == 0xf0) {
			n = 3;
			cp = *p & 0x07;
		} else {
			return false;
		}
		if ((size_t)(e - p) <= n)
			return false;
		for (size_t i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i] & 0x3f);
		}
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		p += n + 1;
	}
	return true;
}

size_t sbx_utf8_char_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = *p < 0x80		 ? 1
		   : (*p & 0xe0) == 0xc0 ? 2
		   : (*p & 0xf0) == 0xe0 ? 3
		   : (*p & 0xf8) == 0xf0 ? 4
					 : 0;

	return n && strnlen(s, n) == n && sbx_utf8_valid(s, n) ? n : 0;
}

void sbx_hex_encode(const void *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *p = b;

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int sbx_hex_decode(const char *hex, unsigned char *out)
{
	size_t n = strlen(hex);

	if (n % 2)
		return -1;
	for (size_t i = 0; i < n; i += 2) {
		int hi = hex_value(hex[i]), lo = hex_value(hex[i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i / 2] = (unsigned char)(hi * 16 + lo);
	}
	return 0;
}

static char *escape(const char *s, bool backslash)
{
	size_t len = strlen(s), cap = len * 4 + 1, o = 0;
	char *out = sbx_xmalloc(cap);
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = 0;

		/* Pass through valid multibyte UTF-8 sequences. */
		if (*p >= 0x80) {
			n = sbx_utf8_char_len((const char *)p);
			if (n) {
				/* Reject C1 controls (U+0080..U+009F). */
				if (!(n == 2 && p[0] == 0xc2 && p[1] < 0xa0)) {
					memcpy(out + o, p, n);
					o += n;
					p += n;
					continue;
				}
			}
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", *p++);
			continue;
		}
		switch (*p) {
		case '\n':
			memcpy(out + o, "\\n", 2);
			o += 2;
			break;
		case '\t':
			memcpy(out + o, "\\t", 2);
			o += 2;
			break;
		case '\r':
			memcpy(out + o, "\\r", 2);
			o += 2;
			break;
		case '\\':
			memcpy(out + o, "\\\\", 2);
			o += backslash ? 2 : 1;
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				o += (size_t)snprintf(out + o, cap - o, "\\x%02x", *p);
			else
				out[o++] = (char)*p;
		}
		p++;
	}
	out[o] = '\0';
	return out;
}

char *sbx_escape_display(const char *s)
{
	return escape(s, true);
}

char *sbx_escape_controls(const char *s)
{
	return escape(s, false);
}

void sbx_mountinfo_unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

const char *sbx_size_text(double b, char *buf, size_t len)
{
	static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	size_t i = 0;

	while (b >= 1024 && i + 1 < SBX_ARRAY_SIZE(u)) {
		b /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%.0f B", b);
	else
		snprintf(buf, len, "%.1f %s", b, u[i]);
	return buf;
}

int64_t sbx_env_id(const char *name)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	return errno || *end || v >= (uid_t)-1 ? -1 : (int64_t)v;
}

int sbx_open_users_file(const char *path, int flags, mode_t mode)
{
	int64_t uid = sbx_env_id("SUDO_UID"), gid = sbx_env_id("SUDO_GID");
	_cleanup_free_ char *dir = NULL;
	struct stat st;
	char *slash;
	int fd = open(path, flags | O_CREAT | O_EXCL | O_NOCTTY, mode);

	if (fd < 0 && errno == EEXIST)
		return (fd = open(path, (flags & ~O_CREAT) | O_NOCTTY)) < 0 ? -errno : fd;
	if (fd < 0)
		return -errno;
	if (getuid() != 0 || uid <= 0)
		return fd;
	dir = sbx_xstrdup(path);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	/* on the fd of the file this call made: never one a symlink names */
	if (stat(slash ? dir : ".", &st) == 0 && st.st_uid == (uid_t)uid &&
	    fchown(fd, (uid_t)uid, gid >= 0 ? (gid_t)gid : (gid_t)-1) < 0) {
		/* stays root's: the file is written all the same */
	}
	return fd;
}

bool sbx_dir_has_entry(int dir, const char *name)
{
	_cleanup_close_ int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char buf[512];
	ssize_t n;

	while (fd >= 0 && (n = getdents64(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			const struct dirent64 *d = (const struct dirent64 *)(buf + off);

			if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
				return true;
			off += d->d_reclen;
		}
	}
	return false;
}

struct passwd *sbx_user_in(const char *file, uid_t uid)
{
	FILE *f = fopen(file, "re");
	struct passwd *pw = NULL;

	if (!f)
		return NULL;
	while ((pw = fgetpwent(f)) && pw->pw_uid != uid)
		;
	fclose(f);
	return pw;
}

struct group *sbx_group_in(const char *file, gid_t gid)
{
	FILE *f = fopen(file, "re");
	struct group *gr = NULL;

	if (!f)
		return NULL;
	while ((gr = fgetgrent(f)) && gr->gr_gid != gid)
		;
	fclose(f);
	return gr;
}

/* Started without a program interpreter (ld.so): linked statically. */
static bool linked_static(void)
{
	return getauxval(AT_BASE) == 0;
}

struct passwd *sbx_user(uid_t uid)
{
	return linked_static() ? sbx_user_in("/etc/passwd", uid) : getpwuid(uid);
}

struct group *sbx_group(gid_t gid)
{
	return linked_static() ? sbx_group_in("/etc/group", gid) : getgrgid(gid);
}

const char *sbx_duration_text(uint64_t ms, char *buf, size_t len)
{
	static const struct {
		uint64_t ms;
		const char *unit;
	} u[] = {{86400000, "d"}, {3600000, "h"}, {60000, "m"}, {1000, "s"}};

	for (size_t i = 0; i < SBX_ARRAY_SIZE(u); i++) {
		if (ms && ms % u[i].ms == 0) {
			snprintf(buf, len, "%" PRIu64 "%s", ms / u[i].ms, u[i].unit);
			return buf;
		}
	}
	snprintf(buf, len, "%" PRIu64 "ms", ms);
	return buf;
}

int sbx_send_fds(int sock, const void *buf, size_t len, const int *fds, size_t nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 64)];
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (nfds > 64)
		return -E2BIG;
	if (nfds > 0) {
		struct cmsghdr *cm;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	for (;;) {
		if (sendmsg(sock, &mh, MSG_NOSIGNAL) >= 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

/*
 * Without openat2 (valgrind, kernel < 5.6): the path one component at a
 * time, none a symlink (O_NOFOLLOW; the last one as flags say), none "."
 * or ".." (EXDEV, where openat2 would take a ".." that stays beneath).
 */
static int open_walk(int dirfd, const char *path, int flags)
{
	_cleanup_free_ char *copy = sbx_xstrdup(path);
	char *save = NULL, *c = strtok_r(copy, "/", &save);
	int cur = dirfd;

	if (path[0] == '/' || !c) {
		errno = EXDEV;
		return -1;
	}
	for (; c; c = strtok_r(NULL, "/", &save)) {
		bool last = !save || !*save;
		int fd = -1, e = EXDEV;

		if (strcmp(c, ".") && strcmp(c, "..")) {
			fd = openat(cur, c,
				    (last ? flags : O_PATH | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC);
			e = errno; /* a symlink: ELOOP or ENOTDIR */
		}
		if (cur != dirfd)
			close(cur);
		if (fd < 0 || last) {
			errno = fd < 0 ? e : 0;
			return fd;
		}
		cur = fd;
	}
	errno = EINVAL;
	return -1;
}

int sbx_open_beneath(int dirfd, const char *path, int flags)
{
	static _Atomic bool no_openat2;
	struct open_how how = {
	    .flags = (uint64_t)flags | O_CLOEXEC,
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd;

	if (!no_openat2) {
		fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
		if (fd >= 0 || errno != ENOSYS)
			return fd;
		no_openat2 = true;
	}
	return open_walk(dirfd, path, flags);
}

char *sbx_path_clean(const char *in, enum sbx_dotdot dd)
{
	char *r = sbx_xmalloc(strlen(in) + 2);
	size_t o = 0;

	for (const char *p = in; *p;) {
		const char *e;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchrnul(p, '/');
		n = (size_t)(e - p);
		if (n == 2 && p[0] == '.' && p[1] == '.' && dd != SBX_DOTDOT_KEEP) {
			if (dd == SBX_DOTDOT_REFUSE) {
				free(r);
				return NULL;
			}
			while (o > 0 && r[o - 1] != '/')
				o--;
			o -= o > 0;
		} else if (!(n == 1 && p[0] == '.')) {
			r[o++] = '/';
			memcpy(r + o, p, n);
			o += n;
		}
		p = e;
	}
	if (o == 0)
		r[o++] = '/';
	r[o] = '\0';
	return r;
}

bool sbx_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}
