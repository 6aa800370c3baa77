/* SPDX-License-Identifier: MIT */
/*
 * lib/util/gitconfig.c - git's config syntax, read as git reads it.
 *
 * sbx reads a repository's config (and .gitmodules) to find what git on
 * the host would run or read from a directory the jail can write:
 * core.hooksPath, include.path and includeIf.*.path, a submodule's path.
 * Neither INI reader fits: inih takes an indented line as the previous
 * value's continuation (git indents every variable), and libgit2 1.5 does
 * not say which file an entry came from and would be loaded on a run's
 * start.  This follows git's own parser (config.c): a character at a
 * time, CRLF as LF, a header then variables on the same line, values
 * unquoted and unescaped, trailing blanks trimmed, a comment ending a
 * value outside quotes.  Where git would refuse the file (and so run
 * nothing from it), reading stops.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gitconfig.h"
#include "util.h"

struct cur {
	const char *p, *end;
	bool eof;
};

/* The next character, "\r\n" as '\n', and '\n' at the end (eof set). */
static int next(struct cur *c)
{
	int ch;

	if (c->p >= c->end) {
		c->eof = true;
		return '\n';
	}
	ch = (unsigned char)*c->p++;
	if (ch == '\r' && c->p < c->end && *c->p == '\n')
		ch = (unsigned char)*c->p++;
	return ch;
}

/* A growing string. */
struct str {
	char *s;
	size_t n, cap;
};

static void put(struct str *s, int ch)
{
	if (s->n + 2 > s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->s = sbx_xrealloc(s->s, s->cap);
	}
	s->s[s->n++] = (char)ch;
	s->s[s->n] = '\0';
}

static void reset(struct str *s)
{
	put(s, 'x');
	s->n = 0;
	s->s[0] = '\0';
}

static const char *text(struct str *s)
{
	return s->n ? s->s : "";
}

static bool keychar(int ch)
{
	return isalnum(ch) || ch == '-';
}

/* "a.b" in sec: sec "a", and "b" + tail at the start of sub (git's
 * [a.B] and [a.b "C"] are section a, subsection "b" and "b.C"). */
static void split_dot(struct str *sec, struct str *sub, const char *tail)
{
	char *dot = strchr(sec->s, '.');

	if (!dot)
		return;
	for (const char *q = dot + 1; *q; q++)
		put(sub, *q);
	for (const char *q = tail; *q; q++)
		put(sub, *q);
	*dot = '\0';
	sec->n = (size_t)(dot - sec->s);
}

/* After "[": the section (lower case) and subsection; false: refused. */
static bool header(struct cur *c, struct str *sec, struct str *sub, bool *has_sub)
{
	int ch;

	reset(sec);
	reset(sub);
	*has_sub = false;
	for (;;) {
		ch = next(c);
		if (c->eof)
			return false;
		if (ch == ']')
			break;
		if (isspace(ch)) {
			while (isspace(ch) && ch != '\n')
				ch = next(c);
			if (ch != '"' || !sec->n)
				return false;
			*has_sub = true;
			split_dot(sec, sub, ".");
			for (;;) {
				ch = next(c);
				if (ch == '\n')
					return false;
				if (ch == '"')
					break;
				if (ch == '\\' && (ch = next(c)) == '\n')
					return false;
				put(sub, ch);
			}
			return next(c) == ']';
		}
		if (!keychar(ch) && ch != '.')
			return false;
		put(sec, tolower(ch));
	}
	if (!sec->n)
		return false;
	/* the old [section.subsection], lower case as a whole */
	*has_sub = strchr(sec->s, '.') != NULL;
	split_dot(sec, sub, "");
	return true;
}

/* After '=': the value; false: refused (an open quote, an unknown escape). */
static bool value(struct cur *c, struct str *v)
{
	bool quote = false, comment = false;
	size_t trim = 0;

	reset(v);
	for (;;) {
		int ch = next(c);

		if (ch == '\n') {
			if (quote)
				return false;
			if (trim) {
				v->n = trim;
				v->s[trim] = '\0';
			}
			return true;
		}
		if (comment)
			continue;
		if (isspace(ch) && !quote) {
			if (!trim)
				trim = v->n;
			if (v->n)
				put(v, ch);
			continue;
		}
		if (!quote && (ch == ';' || ch == '#')) {
			comment = true;
			continue;
		}
		trim = 0;
		if (ch == '\\') {
			ch = next(c);
			switch (ch) {
			case '\n': /* a continuation line (at the end: nothing) */
				continue;
			case 't':
				ch = '\t';
				break;
			case 'b':
				ch = '\b';
				break;
			case 'n':
				ch = '\n';
				break;
			case '\\':
			case '"':
				break;
			default:
				return false;
			}
			put(v, ch);
			continue;
		}
		if (ch == '"') {
			quote = !quote;
			continue;
		}
		put(v, ch);
	}
}

enum sbx_gitconfig_path sbx_gitconfig_path_kind(const char *section, const char *sub,
						const char *name)
{
	if (!strcmp(section, "core") && !sub && !strcmp(name, "hookspath"))
		return SBX_GITCONFIG_HOOKS;
	if (!strcmp(name, "path") &&
	    ((!strcmp(section, "include") && !sub) || (!strcmp(section, "includeif") && sub)))
		return SBX_GITCONFIG_INCLUDE;
	return SBX_GITCONFIG_OTHER;
}

size_t sbx_gitconfig_parse(const char *buf, size_t len, sbx_gitconfig_fn fn, void *user)
{
	struct cur c = {buf, buf + len, false};
	struct str sec = {0}, sub = {0}, name = {0}, val = {0};
	bool has_sub = false, comment = false;
	size_t n = 0;

	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		c.p += 3;
	for (;;) {
		int ch = next(&c);

		if (c.eof)
			break;
		if (ch == '\n') {
			comment = false;
			continue;
		}
		if (comment || isspace(ch))
			continue;
		if (ch == '#' || ch == ';') {
			comment = true;
			continue;
		}
		if (ch == '[') {
			if (!header(&c, &sec, &sub, &has_sub))
				break;
			continue;
		}
		/* before any header: a name of no section, as git reads it */
		if (!isalpha(ch))
			break;
		reset(&name);
		put(&name, tolower(ch));
		for (;;) {
			ch = next(&c);
			if (c.eof || !keychar(ch))
				break;
			put(&name, tolower(ch));
		}
		while (ch == ' ' || ch == '\t')
			ch = next(&c);
		bool has_value = ch != '\n';

		if (has_value && (ch != '=' || !value(&c, &val)))
			break;
		n++;
		if (!fn(user, text(&sec), has_sub ? text(&sub) : NULL, text(&name),
			has_value ? text(&val) : NULL))
			break;
	}
	free(sec.s);
	free(sub.s);
	free(name.s);
	free(val.s);
	return n;
}

int sbx_gitconfig_parse_fd(int fd, sbx_gitconfig_fn fn, void *user)
{
	struct stat st;
	size_t cap;
	ssize_t len;
	char *buf;

	if (fd < 0)
		return -EBADF;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	cap = st.st_size < SBX_GITCONFIG_MAX ? (size_t)st.st_size : SBX_GITCONFIG_MAX;
	buf = sbx_xmalloc(cap + 1);
	len = sbx_read_all(fd, buf, cap);
	close(fd);
	if (len >= 0)
		(void)sbx_gitconfig_parse(buf, (size_t)len, fn, user);
	free(buf);
	return len < 0 ? (int)len : 0;
}

/* The first line of path (at most len - 1 bytes), with no "\r\n" (git
 * trims only those from a .git file and a commondir). */
static int first_line(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	ssize_t n;
	char *e;

	if (fd < 0)
		return -errno;
	n = sbx_read_all(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	e = buf + strcspn(buf, "\r\n");
	*e = '\0';
	return 0;
}

/* path as git takes it: absolute, or relative to base */
static char *against(const char *base, const char *path)
{
	return path[0] == '/' ? sbx_xstrdup(path) : sbx_xasprintf("%s/%s", base, path);
}

int sbx_git_file_configs(const char *top, struct sbx_strv *out)
{
	char line[4096];
	_cleanup_free_ char *gitfile = sbx_xasprintf("%s/.git", strcmp(top, "/") ? top : "");
	_cleanup_free_ char *dir = NULL, *commonfile = NULL, *common = NULL;
	int r = first_line(gitfile, line, sizeof(line));

	if (r < 0)
		return r;
	if (strncmp(line, "gitdir: ", 8) != 0 || !line[8])
		return -EINVAL;
	dir = against(top, line + 8);
	commonfile = sbx_xasprintf("%s/commondir", dir);
	if (first_line(commonfile, line, sizeof(line)) == 0 && line[0])
		common = against(dir, line);
	sbx_strv_push_take(out, sbx_xasprintf("%s/config", common ? common : dir));
	sbx_strv_push_take(out, sbx_xasprintf("%s/config.worktree", dir));
	return 0;
}
