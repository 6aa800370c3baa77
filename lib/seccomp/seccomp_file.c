/* SPDX-License-Identifier: MIT */
/*
 * lib/seccomp/seccomp_file.c - seccomp policy files (format: lib/seccomp/seccomp_policy.md).
 *
 *	# comment                    (also after a directive)
 *	base default|strict|none     first, at most once; default: base default
 *	default allow|log|kill|errno [ERRNO]
 *	deny SYSCALL [ERRNO|kill]    ERRNO: a name (EPERM) or 1..4095; EPERM
 *	allow SYSCALL
 *	log SYSCALL                  allow, and log it through the kernel audit
 *
 * deny/allow/log replace every earlier rule for that syscall, including the
 * argument filters of the base policy (allow ioctl drops the TIOCSTI rule).
 */
#include "seccomp.h"
#include "seccomp_int.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#define POLICY_FILE_MAX (1 << 20)
#define LINE_WORDS	4

struct parse {
	const char *path;
	unsigned line;
	struct sbx_seccomp_policy *p;
	bool seen_rule; /* base must come first */
	bool seen_base;
	bool seen_default;
	struct sbx_err *err;
};

__attribute__((format(printf, 3, 4))) static int perr(struct parse *ps, int errnum, const char *fmt,
						      ...)
{
	char msg[SBX_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return sbx_err_set(ps->err, errnum, "seccomp policy '%s': line %u: %s", ps->path, ps->line,
			   msg);
}

/* All syscall names of the native arch, for "did you mean". */
static char **syscall_names(size_t *n)
{
	char **v = NULL;
	size_t cnt = 0;

	for (int nr = 0; nr < 1024; nr++) {
		char *s = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);

		if (!s)
			continue;
		v = sbx_xrealloc(v, (cnt + 1) * sizeof(*v));
		v[cnt++] = s;
	}
	*n = cnt;
	return v;
}

static int resolve_syscall(struct parse *ps, const char *name, int *nr)
{
	char **names;
	size_t n;
	const char *hint;
	int rc;

	*nr = seccomp_syscall_resolve_name(name);
	if (*nr != __NR_SCMP_ERROR)
		return 0;
	names = syscall_names(&n);
	hint = sbx_closest(name, (const char *const *)names, n);
	if (hint)
		rc = perr(ps, EINVAL, "unknown syscall '%s' (did you mean '%s'?)", name, hint);
	else
		rc = perr(ps, EINVAL, "unknown syscall '%s'", name);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

static int parse_errno(struct parse *ps, const char *s, int *out)
{
	const char *names[160];
	size_t n = 0;
	const char *hint;
	char *end;
	unsigned long v;

	if (s[0] >= '0' && s[0] <= '9') {
		errno = 0;
		v = strtoul(s, &end, 10);
		if (errno || *end || v == 0 || v > 4095)
			return perr(ps, EINVAL, "errno '%s' out of range (1..4095)", s);
		*out = (int)v;
		return 0;
	}
	for (int e = 1; e < 160 && n < SBX_ARRAY_SIZE(names); e++) {
		const char *name = strerrorname_np(e);

		if (!name)
			continue;
		if (strcmp(name, s) == 0) {
			*out = e;
			return 0;
		}
		names[n++] = name;
	}
	hint = sbx_closest(s, names, n);
	if (hint)
		return perr(ps, EINVAL, "unknown errno '%s' (did you mean '%s'?)", s, hint);
	return perr(ps, EINVAL, "unknown errno '%s'", s);
}

static int do_base(struct parse *ps, char **w, size_t n)
{
	if (n != 2)
		return perr(ps, EINVAL, "'base' takes one of default, strict, none");
	if (ps->seen_base)
		return perr(ps, EINVAL, "'base' given twice");
	if (ps->seen_rule)
		return perr(ps, EINVAL, "'base' must come before every other directive");
	if (sbx_seccomp_policy_builtin(ps->p, w[1]) < 0)
		return perr(ps, EINVAL,
			    "unknown base policy '%s' (expected default, strict or none)", w[1]);
	ps->seen_base = true;
	return 0;
}

static int do_default(struct parse *ps, char **w, size_t n)
{
	struct sbx_seccomp_policy *p = ps->p;

	if (ps->seen_default)
		return perr(ps, EINVAL, "'default' given twice");
	ps->seen_default = true;
	if (n == 2 && strcmp(w[1], "allow") == 0)
		p->def = SBX_SC_ALLOW;
	else if (n == 2 && strcmp(w[1], "log") == 0)
		p->def = SBX_SC_LOG;
	else if (n == 2 && strcmp(w[1], "kill") == 0)
		p->def = SBX_SC_KILL;
	else if ((n == 2 || n == 3) && strcmp(w[1], "errno") == 0) {
		p->def = SBX_SC_ERRNO;
		p->def_err = SBX_SECCOMP_ERRNO;
		return n == 3 ? parse_errno(ps, w[2], &p->def_err) : 0;
	} else {
		return perr(ps, EINVAL, "'default' takes allow, log, kill or errno [ERRNO]");
	}
	p->def_err = 0;
	return 0;
}

static int do_rule(struct parse *ps, char **w, size_t n)
{
	struct sbx_sc_rule r = {.act = SBX_SC_ALLOW};
	bool deny = strcmp(w[0], "deny") == 0;
	int rc;

	if (n < 2 || n > (deny ? 3u : 2u))
		return perr(ps, EINVAL,
			    deny ? "'deny' takes SYSCALL [ERRNO|kill]" : "'%s' takes one SYSCALL",
			    w[0]);
	rc = resolve_syscall(ps, w[1], &r.nr);
	if (rc < 0)
		return rc;
	if (deny) {
		r.act = SBX_SC_ERRNO;
		r.err = SBX_SECCOMP_ERRNO;
		if (n == 3 && strcmp(w[2], "kill") == 0)
			r.act = SBX_SC_KILL, r.err = 0;
		else if (n == 3 && (rc = parse_errno(ps, w[2], &r.err)) < 0)
			return rc;
	} else if (strcmp(w[0], "log") == 0) {
		r.act = SBX_SC_LOG;
	}
	sbx_seccomp_policy_drop(ps->p, r.nr);
	sbx_seccomp_policy_add(ps->p, &r);
	return 0;
}

static const struct {
	const char *word;
	int (*fn)(struct parse *, char **, size_t);
} directives[] = {
    {"allow", do_rule}, {"base", do_base}, {"default", do_default},
    {"deny", do_rule},	{"log", do_rule},
};

static int parse_line(struct parse *ps, char *line)
{
	char *w[LINE_WORDS + 1], *save = NULL, *hash = strchr(line, '#');
	const char *names[SBX_ARRAY_SIZE(directives)];
	const char *hint;
	size_t n = 0;

	if (hash)
		*hash = '\0';
	for (char *t = strtok_r(line, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
		if (n == LINE_WORDS)
			return perr(ps, EINVAL, "too many words");
		w[n++] = t;
	}
	if (n == 0)
		return 0;
	for (size_t i = 0; i < SBX_ARRAY_SIZE(directives); i++) {
		names[i] = directives[i].word;
		if (strcmp(w[0], directives[i].word) != 0)
			continue;
		if (directives[i].fn != do_base)
			ps->seen_rule = true;
		return directives[i].fn(ps, w, n);
	}
	hint = sbx_closest(w[0], names, SBX_ARRAY_SIZE(names));
	if (hint)
		return perr(ps, EINVAL, "unknown directive '%s' (did you mean '%s'?)", w[0], hint);
	return perr(ps, EINVAL, "unknown directive '%s'", w[0]);
}

static int read_policy(const char *path, char **buf, size_t *len, struct sbx_err *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	int rc;

	if (fd < 0)
		return sbx_err_set(err, errno, "cannot open seccomp policy '%s'", path);
	if (fstat(fd, &st) < 0)
		return sbx_err_set(err, errno, "cannot stat seccomp policy '%s'", path);
	if (!S_ISREG(st.st_mode))
		return sbx_err_set(err, 0, "seccomp policy '%s' is not a regular file", path);
	rc = sbx_read_fd_string(fd, POLICY_FILE_MAX, buf, len);
	if (rc == -EFBIG)
		return sbx_err_set(err, EFBIG, "seccomp policy '%s' is larger than 1 MiB", path);
	if (rc < 0)
		return sbx_err_set(err, -rc, "cannot read seccomp policy '%s'", path);
	if (memchr(*buf, '\0', *len)) {
		free(*buf);
		*buf = NULL;
		return sbx_err_set(err, 0, "seccomp policy '%s' contains a NUL byte", path);
	}
	return 0;
}

int sbx_seccomp_policy_parse_text(const char *name, char *text, struct sbx_seccomp_policy *p,
				  struct sbx_err *err)
{
	struct parse ps = {.path = name, .p = p, .err = err};
	char *line, *next;
	int rc;

	/* Without a base line the text amends the default policy; a base
	 * line (only before any other directive) replaces it. */
	sbx_seccomp_policy_builtin(p, "default");
	for (line = text; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		ps.line++;
		rc = parse_line(&ps, line);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int sbx_seccomp_policy_parse_file(const char *path, struct sbx_seccomp_policy *p,
				  struct sbx_err *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int rc;

	rc = read_policy(path, &buf, &len, err);
	if (rc < 0)
		return rc;
	return sbx_seccomp_policy_parse_text(path, buf, p, err);
}
