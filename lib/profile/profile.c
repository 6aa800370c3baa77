/* SPDX-License-Identifier: MIT */
/*
 * lib/profile/profile.c - INI isolation profiles into struct sbx_config.
 *
 * inih does the tokenising; our reader feeds it one line at a time from
 * memory and counts lines, so the handler (which inih calls right after
 * the reader returned the line) knows the line number even though Debian's
 * inih is built without INI_HANDLER_LINENO.  The reader also checks each
 * line's shape, so every syntax error is reported, not only inih's first.
 *
 * A file is read twice: the first pass only finds `extends`, so the parent
 * is applied before the file's own keys wherever `extends` is written.
 * The key table, the setters and the writer live in lib/profile/profile_keys.c.
 */
#include "profile_int.h"

#include <fcntl.h>
#include <ini.h>
#include <linux/limits.h> /* PATH_MAX (lib/limits/limits.h shadows <limits.h>) */
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>

/*
 * Debian's libinih turns the compile-time options into variables; use them
 * when present (weak), else the defaults apply: lines up to 200 bytes.
 */
#pragma weak ini_max_line
#pragma weak ini_allow_multiline
#pragma weak ini_use_stack
#pragma weak ini_initial_alloc
#pragma weak ini_allow_realloc
extern int ini_max_line;
extern bool ini_allow_multiline;
extern bool ini_use_stack;
extern int ini_initial_alloc;
extern bool ini_allow_realloc;

#define MAX_ERRORS 100
#define MAX_DEPTH  16
#define MAX_LINE   4096
#define MAX_FILE   (1 << 20)
/* A written profile (a kept sandbox's record): a value from the command
 * line may be long (-e with a certificate, quoted: up to 4 bytes each). */
#define MAX_WRITTEN_LINE MAX_FILE
#define LINE_SLACK	 24 /* " = " and what the writer may add to a value */
#define WHEN_HOST	 " when host"

/* The extends chain, for cycle detection. */
struct chain {
	const char *id; /* real path, or builtin:NAME */
	const char *display;
	const struct chain *up;
};

/* A non-repeating key already set in this file. */
struct seen {
	char *key; /* "section.name" */
	int line;
};

struct loader {
	struct sbx_config *cfg;
	const struct sbx_profile_vars *vars;
	struct sbx_strv *errors;
	bool written; /* sbx_profile_load_written: no inline comments */
};

struct pfile {
	struct loader *ld;
	const char *origin; /* shown in errors */
	const char *dir;    /* for relative paths; NULL for built-ins */
	const char *pos;    /* reader position */
	int line;
	bool pass1; /* only looking for extends */
	char section[128];
	bool section_ok;
	char *extends;
	int extends_line;
	struct seen *seen;
	size_t n_seen;
	int nnp_line;
};

static int load_ref(struct loader *ld, const char *ref, struct pfile *from, const struct chain *up,
		    int depth);

/* Record one problem: "'file:line': msg" ("'file': msg", or just msg). */
static void __attribute__((format(printf, 4, 5)))
push_err(struct sbx_strv *e, const char *origin, int line, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;

	if (e->n >= MAX_ERRORS)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg)
		return;
	if (origin && line > 0)
		sbx_strv_push_take(e, sbx_xasprintf("'%s:%d': %s", origin, line, msg));
	else if (origin)
		sbx_strv_push_take(e, sbx_xasprintf("'%s': %s", origin, msg));
	else
		sbx_strv_push(e, msg);
	free(msg);
	if (e->n == MAX_ERRORS)
		sbx_strv_push(e, "too many errors, giving up");
}

#define perr(f, line, ...) push_err((f)->ld->errors, (f)->origin, (line), __VA_ARGS__)

static void perr_sbx(struct pfile *f, int line, const struct sbx_err *err)
{
	char buf[SBX_ERR_MSG_MAX + 128];

	perr(f, line, "%s", sbx_err_str(err, buf, sizeof(buf)));
}

/* ------------------------------------------------------------ expansion */

static bool tilde_here(const char *in, size_t i)
{
	if (in[i] != '~' || (in[i + 1] != '/' && in[i + 1] != '\0'))
		return false;
	/* At the start (after an optional-mount '-') or after a ':' (DST),
	 * not one written "\:" (part of a path). */
	return i == 0 || (i == 1 && in[0] == '-') ||
	       (in[i - 1] == ':' && (i < 2 || in[i - 2] != '\\'));
}

/* s, with each character of esc (if any) preceded by a backslash. */
static void put_escaped(FILE *ms, const char *s, const char *esc)
{
	for (; *s; s++) {
		if (esc && strchr(esc, *s))
			fputc('\\', ms);
		fputc(*s, ms);
	}
}

/*
 * The caller's user name ($USER), looked up the first time a profile uses
 * it: a passwd lookup (NSS: nsswitch.conf, /etc/passwd, nscd's socket)
 * cost 0.2 ms of every run's start, and the built-in profiles never use it.
 */
static const char *process_user(void)
{
	static char user[256];

	if (!user[0]) {
		struct passwd *pw = sbx_user(getuid());

		if (pw && pw->pw_name)
			snprintf(user, sizeof(user), "%s", pw->pw_name);
		else
			snprintf(user, sizeof(user), "%u", (unsigned)getuid());
	}
	return user;
}

static const char *var_value(const struct sbx_profile_vars *v, const char *name, size_t n,
			     char *uidbuf, size_t len)
{
	if (n == 3 && strncmp(name, "PWD", 3) == 0)
		return v->pwd;
	if (n == 4 && strncmp(name, "HOME", 4) == 0)
		return v->home;
	if (n == 4 && strncmp(name, "USER", 4) == 0)
		return v->user ? v->user : process_user();
	if (n == 3 && strncmp(name, "UID", 3) == 0) {
		snprintf(uidbuf, len, "%u", (unsigned)v->uid);
		return uidbuf;
	}
	return NULL;
}

/*
 * The name of the variable at in + *i (just after a '$'): NAME or {NAME}.
 * Sets *i to its last character; returns its length, 0 if there is none.
 */
static size_t var_name(const char *in, size_t *i, const char **name)
{
	const char *p = in + *i + 1;
	size_t n = 0;

	if (*p == '{') {
		const char *close = strchr(p + 1, '}');

		if (!close)
			return 0;
		*name = p + 1;
		n = (size_t)(close - p - 1);
		*i += n + 2;
		return n;
	}
	while (p[n] == '_' || (p[n] >= 'A' && p[n] <= 'Z') || (p[n] >= 'a' && p[n] <= 'z') ||
	       (n && p[n] >= '0' && p[n] <= '9'))
		n++;
	*name = p;
	*i += n;
	return n;
}

/*
 * A quoted part, $'...' (in + *i is its '$'), as the writer makes it for a
 * value it cannot put on a line as it is (sbx_profile_value_text): each
 * character as it is but \\, \', \n, \t, \r and \xHH (not \x00).  Sets
 * *i to the closing quote.
 */
static int quoted(const char *in, size_t *i, FILE *ms, struct sbx_err *err)
{
	for (size_t j = *i + 2;; j++) {
		char two[3] = {0};
		unsigned char byte;

		switch (in[j]) {
		case '\0':
			return sbx_err_set(err, 0, "$'...' without its closing quote in '%s'", in);
		case '\'':
			*i = j;
			return 0;
		case '\\':
			break;
		default:
			fputc(in[j], ms);
			continue;
		}
		switch (in[++j]) {
		case '\\':
		case '\'':
			fputc(in[j], ms);
			break;
		case 'n':
			fputc('\n', ms);
			break;
		case 't':
			fputc('\t', ms);
			break;
		case 'r':
			fputc('\r', ms);
			break;
		case 'x':
			two[0] = in[j + 1];
			two[1] = two[0] ? in[j + 2] : '\0';
			if (!two[1] || sbx_hex_decode(two, &byte) < 0 || byte == 0)
				return sbx_err_set(err, 0,
						   "bad \\x in $'...' in '%s' (two hex digits, "
						   "not 00)",
						   in);
			fputc(byte, ms);
			j += 2;
			break;
		default:
			return sbx_err_set(err, 0,
					   "bad escape in $'...' in '%s' (\\\\, \\', \\n, \\t, "
					   "\\r or \\xHH)",
					   in);
		}
	}
}

/* sbx_profile_expand(), with the characters of esc escaped in what a
 * variable puts in (sbx_profile_key_splits_paths). */
static int expand(const char *in, const struct sbx_profile_vars *v, const char *esc, char **out,
		  struct sbx_err *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	FILE *ms = open_memstream(&buf, &len);
	char uidbuf[16];
	int r = 0;

	if (!ms)
		return sbx_err_set(err, errno, "cannot expand '%s'", in);
	for (size_t i = 0; in[i] && r == 0; i++) {
		const char *name = NULL, *val;
		size_t n;

		if (tilde_here(in, i) && v->home) {
			put_escaped(ms, v->home, esc);
		} else if (tilde_here(in, i)) {
			r = sbx_err_set(err, 0, "'~' in '%s' but $HOME is not known", in);
		} else if (in[i] != '$') {
			fputc(in[i], ms);
		} else if (in[i + 1] == '$') {
			fputc('$', ms);
			i++;
		} else if (in[i + 1] == '\'') {
			r = quoted(in, &i, ms, err);
		} else if ((n = var_name(in, &i, &name)) == 0) {
			r = sbx_err_set(err, 0, "stray '$' in '%s' (write $$ for a literal $)", in);
		} else if ((val = var_value(v, name, n, uidbuf, sizeof(uidbuf)))) {
			put_escaped(ms, val, esc);
		} else {
			r = sbx_err_set(
			    err, 0,
			    "unknown variable '$%.*s' (only $PWD, $HOME, $USER and $UID; "
			    "write $$ for a literal $)",
			    (int)n, name);
		}
	}
	fclose(ms);
	if (r == 0)
		*out = steal_pointer(&buf);
	return r;
}

int sbx_profile_expand(const char *in, const struct sbx_profile_vars *v, char **out,
		       struct sbx_err *err)
{
	return expand(in, v, NULL, out, err);
}

/* ------------------------------------------------------------ the reader */

/* Check the shape of one line; false if it must not reach inih. */
static bool check_line(struct pfile *f, char *s)
{
	char *end;

	if (f->line == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
		s += 3;
	s += strspn(s, " \t\r");
	if (!*s || *s == '\n' || *s == ';' || *s == '#')
		return true;
	if (*s == '[') {
		end = strchr(s, ']');
		if (!end) {
			if (!f->pass1)
				perr(f, f->line, "syntax error: '[' without ']'");
			return false;
		}
		snprintf(f->section, sizeof(f->section), "%.*s", (int)(end - s - 1), s + 1);
		f->section_ok = sbx_profile_section_known(f->section);
		if (!f->section_ok && !f->pass1) {
			struct sbx_err e;

			sbx_profile_err_section(f->section, &e);
			perr(f, f->line, "%s", e.msg);
		}
		return true;
	}
	if (!strpbrk(s, "=:")) {
		if (!f->pass1)
			perr(f, f->line, "syntax error: expected 'key = value' or '[section]'");
		return false;
	}
	return true;
}

/*
 * Cut an inline comment: ';' or '#' after a blank, outside of a full-line
 * comment (inih itself only knows ';', and only when built to).
 */
static void strip_comment(char *s)
{
	/* (an empty line: nothing after its NUL is the line's) */
	if (!*s || *s == '#' || *s == ';')
		return;
	for (char *p = s + 1; *p; p++) {
		if ((*p == '#' || *p == ';') && (p[-1] == ' ' || p[-1] == '\t')) {
			*p = '\0';
			break;
		}
	}
}

/*
 * A written profile has no inline comments, but inih cuts a value at a
 * blank and ';' (when built to): its ';' go through inih as HIDDEN_SEMI
 * (a control character no written value holds; a line that has one keeps
 * its ';') and the handler puts them back (unhide_semicolons).
 */
#define HIDDEN_SEMI '\x1e'

static void hide_semicolons(char *s)
{
	if (strchr(s, HIDDEN_SEMI))
		return;
	for (; *s; s++)
		if (*s == ';')
			*s = HIDDEN_SEMI;
}

static void unhide_semicolons(char *s)
{
	for (; (s = strchr(s, HIDDEN_SEMI)); s++)
		*s = ';';
}

/* fgets-like: the next line of the text, leading blanks removed. */
static char *reader(char *str, int num, void *stream)
{
	struct pfile *f = stream;
	const char *p = f->pos, *nl;
	size_t len, max = num > 3 ? (size_t)num - 3 : 0;

	if (!p || !*p)
		return NULL;
	nl = strchr(p, '\n');
	len = nl ? (size_t)(nl - p) : strlen(p);
	f->pos = nl ? nl + 1 : p + len;
	f->line++;
	while (len && (*p == ' ' || *p == '\t')) { /* no multi-line values */
		p++;
		len--;
	}
	if (len > max) {
		if (!f->pass1)
			perr(f, f->line, "line too long (more than %zu bytes)", max);
		snprintf(str, (size_t)num, "#\n");
		return str;
	}
	memcpy(str, p, len);
	str[len] = '\0';
	if (!f->ld->written)
		strip_comment(str);
	else
		hide_semicolons(str);
	strcat(str, "\n");
	if (!check_line(f, str))
		snprintf(str, (size_t)num, "#\n");
	return str;
}

/* ------------------------------------------------------------ the handler */

/* The longest line inih hands over (without "\n\0" and a spare byte). */
static size_t max_content(void)
{
	return (&ini_max_line ? (size_t)MAX_LINE : 200) - 3;
}

/*
 * Would `key = value` still fit on a line when `profile show` writes it
 * ('$' doubled, " as file" and such added)?  Otherwise the output could not
 * be read back.
 */
static bool fits_a_line(const char *key, const char *val)
{
	size_t n = strlen(key) + LINE_SLACK;
	_cleanup_free_ char *text = NULL;

	/* at most 4 bytes a byte and $'' quoted: most values need no look */
	if (n + 4 * strlen(val) + 3 <= max_content())
		return true;
	text = sbx_profile_value_text(val);
	return n + strlen(text) <= max_content();
}

/* A scalar key (or a secret's name) set twice in one file is a mistake. */
static bool seen_before(struct pfile *f, const char *section, const char *name)
{
	char *key = sbx_xasprintf("%s.%s", section, name);

	for (size_t i = 0; i < f->n_seen; i++) {
		if (strcmp(f->seen[i].key, key) == 0) {
			perr(f, f->line, "'%s' in [%s] is already set at line %d", name, section,
			     f->seen[i].line);
			free(key);
			return true;
		}
	}
	f->seen = sbx_xrealloc(f->seen, (f->n_seen + 1) * sizeof(*f->seen));
	f->seen[f->n_seen].key = key;
	f->seen[f->n_seen++].line = f->line;
	return false;
}

static void handle_extends(struct pfile *f, const char *value)
{
	struct sbx_err e;
	char *v = NULL;

	if (f->extends) {
		perr(f, f->line, "'extends' is already set at line %d", f->extends_line);
		return;
	}
	if (sbx_profile_expand(value, f->ld->vars, &v, &e) < 0) {
		perr(f, f->line, "key 'extends': %s", e.msg);
		return;
	}
	if (!*v) {
		perr(f, f->line, "key 'extends': empty value (expected a profile name or file)");
		free(v);
		return;
	}
	f->extends = v;
	f->extends_line = f->line;
}

static int handler(void *user, const char *section, const char *name, const char *value_in)
{
	struct pfile *f = user;
	_cleanup_free_ char *value_own = f->ld->written ? sbx_xstrdup(value_in) : NULL;
	const char *value = value_own ? value_own : value_in;
	struct sbx_profile_setctx sc = {.base_dir = f->dir, .cli = false};
	const struct sbx_profile_key *k;
	_cleanup_free_ char *v = NULL, *keys = NULL;
	struct sbx_err e;
	bool is_extends = strcmp(section, "sandbox") == 0 && strcmp(name, "extends") == 0;

	if (value_own)
		unhide_semicolons(value_own);
	if (!*section) {
		if (!f->pass1)
			perr(f, f->line,
			     "key '%s' is outside any section (start with e.g. [sandbox])", name);
		return 1;
	}
	if (!f->section_ok)
		return 1; /* reported with the section header */
	if (is_extends) { /* applied between the passes */
		if (f->pass1)
			handle_extends(f, value);
		return 1;
	}
	if (f->pass1)
		return 1;
	k = sbx_profile_key_find(section, name);
	if (!k) {
		sbx_profile_err_key(section, name, &e);
		perr(f, f->line, "%s", e.msg);
		return 1;
	}
	if ((!k->repeat || strcmp(k->name, "*") == 0) && seen_before(f, section, name))
		return 1;
	/* " when host" is the profile's own text, never what a variable or a
	 * quoted part puts in ($PWD of a directory named "x when host") */
	if (sbx_profile_key_when_host(k) && strlen(value) > strlen(WHEN_HOST) &&
	    strcmp(value + strlen(value) - strlen(WHEN_HOST), WHEN_HOST) == 0) {
		if (!value_own)
			value = value_own = sbx_xstrdup(value_in);
		value_own[strlen(value_own) - strlen(WHEN_HOST)] = '\0';
		sc.host_only = true;
	}
	/* watch = [KEY ...] PATH: the keys are the profile's text too */
	if (!strcmp(k->section, "filesystem") && !strcmp(k->name, "watch") && value[0] == '[') {
		const char *close = strchr(value, ']');

		if (!close) {
			perr(f, f->line, "key '%s': '[' with no ']' (watch = [KEY ...] PATH)",
			     name);
			return 1;
		}
		sc.keys = keys = sbx_xstrndup(value + 1, (size_t)(close - value - 1));
		value = close + 1 + strspn(close + 1, " \t");
	}
	if (expand(value, f->ld->vars, sbx_profile_key_splits_paths(k) ? ":\\" : NULL, &v, &e) <
	    0) {
		perr(f, f->line, "key '%s': %s", name, e.msg);
		return 1;
	}
	if (!f->ld->written && !fits_a_line(name, v)) {
		perr(f, f->line, "key '%s': value too long (more than %zu bytes after expansion)",
		     name, max_content() - strlen(name) - LINE_SLACK);
		return 1;
	}
	if (sbx_profile_key_apply(f->ld->cfg, k, name, v, &sc, &e) < 0)
		perr_sbx(f, f->line, &e);
	else if (strcmp(name, "no-new-privs") == 0)
		f->nnp_line = f->line;
	return 1;
}

/* ------------------------------------------------------------ loading */

static void set_ini_options(bool written)
{
	/* a long line only in a written profile, in a buffer on the heap */
	bool heap = written && &ini_max_line && &ini_use_stack && &ini_initial_alloc;

	if (&ini_max_line)
		ini_max_line = heap ? MAX_WRITTEN_LINE : MAX_LINE;
	if (&ini_use_stack)
		ini_use_stack = !heap;
	if (&ini_initial_alloc)
		ini_initial_alloc = heap ? MAX_WRITTEN_LINE : 200;
	if (&ini_allow_realloc)
		ini_allow_realloc = false;
	if (&ini_allow_multiline)
		ini_allow_multiline = false;
}

static void run_pass(struct pfile *f, const char *text, bool pass1)
{
	int r;

	f->pass1 = pass1;
	f->pos = text;
	f->line = 0;
	f->section[0] = '\0';
	f->section_ok = false;
	set_ini_options(f->ld->written);
	r = ini_parse_stream(reader, f, handler, f);
	if (!pass1 && r > 0) /* a line inih refused that the reader let through */
		perr(f, r, "syntax error");
	else if (!pass1 && r < 0)
		perr(f, 0, "cannot parse (inih error %d)", r);
}

static int parse_text(struct loader *ld, const char *text, const char *origin, const char *dir,
		      const struct chain *ch, int depth)
{
	struct pfile f = {.ld = ld, .origin = origin, .dir = dir};
	size_t before = ld->errors->n;

	run_pass(&f, text, true);
	if (f.extends)
		load_ref(ld, f.extends, &f, ch, depth + 1);
	sbx_strv_push(&ld->cfg->sources, origin);
	run_pass(&f, text, false);
	if (f.nnp_line && !ld->cfg->no_new_privs && !ld->cfg->caps_keep)
		perr(&f, f.nnp_line, "'no-new-privs = no' is refused unless capabilities are kept");
	for (size_t i = 0; i < f.n_seen; i++)
		free(f.seen[i].key);
	free(f.seen);
	free(f.extends);
	return ld->errors->n > before ? -EINVAL : 0;
}

static bool is_path(const char *s)
{
	size_t n = strlen(s);

	return strchr(s, '/') || (n > 4 && strcmp(s + n - 4, ".ini") == 0);
}

/* "extends cycle: a.ini -> b.ini -> a.ini", or 0 when id is new. */
static int check_cycle(struct pfile *from, const char *id, const char *display,
		       const struct chain *up)
{
	const struct chain *c;
	char *msg;

	for (c = up; c; c = c->up)
		if (strcmp(c->id, id) == 0)
			break;
	if (!c)
		return 0;
	msg = sbx_xstrdup(display);
	for (c = up; c; c = c->up) {
		char *m = sbx_xasprintf("%s -> %s", c->display, msg);

		free(msg);
		msg = m;
	}
	perr(from, from->extends_line, "extends cycle: %s", msg);
	free(msg);
	return -ELOOP;
}

static void read_err(struct loader *ld, struct pfile *from, const char *display, int e)
{
	const char *why = e == EFBIG ? "larger than 1 MiB" : strerror(e);

	if (from)
		perr(from, from->extends_line, "extends: cannot read profile '%s': %s", display,
		     why);
	else
		push_err(ld->errors, NULL, 0, "cannot read profile '%s': %s", display, why);
}

static int load_file(struct loader *ld, const char *path, struct pfile *from,
		     const struct chain *up, int depth)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	_cleanup_free_ char *text = NULL, *dir = NULL;
	char real[PATH_MAX];
	struct stat st;
	size_t len = 0;
	int r;

	if (fd < 0 || fstat(fd, &st) < 0) {
		read_err(ld, from, path, errno);
		return -EINVAL;
	}
	if (!S_ISREG(st.st_mode)) {
		read_err(ld, from, path, S_ISDIR(st.st_mode) ? EISDIR : EINVAL);
		return -EINVAL;
	}
	r = sbx_read_fd_string(fd, MAX_FILE, &text, &len);
	if (r < 0) {
		read_err(ld, from, path, -r);
		return -EINVAL;
	}
	if (strlen(text) != len) {
		push_err(ld->errors, path, 0, "contains a NUL byte (not a text file)");
		return -EINVAL;
	}
	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	if (from && check_cycle(from, real, path, up) < 0)
		return -ELOOP;

	const char *slash = strrchr(path, '/');
	struct chain node = {.id = real, .display = path, .up = up};

	dir = slash == path ? sbx_xstrdup("/")
	      : slash	    ? sbx_xstrndup(path, (size_t)(slash - path))
			    : sbx_xstrdup(".");
	return parse_text(ld, text, path, dir, &node, depth);
}

static void unknown_builtin(struct loader *ld, struct pfile *from, const char *name)
{
	const char *names[64];
	const char *near;
	size_t n = 0;

	for (size_t i = 0; i < sbx_n_builtin_profiles && n < SBX_ARRAY_SIZE(names); i++)
		names[n++] = sbx_builtin_profiles[i].name;
	near = sbx_closest(name, names, n);
	if (from && near)
		perr(from, from->extends_line,
		     "extends: unknown built-in profile '%s' (did you mean '%s'?)", name, near);
	else if (from)
		perr(from, from->extends_line,
		     "extends: unknown built-in profile '%s' (see 'sbx profile list'; a file needs "
		     "a '/' or .ini)",
		     name);
	else if (near)
		push_err(ld->errors, NULL, 0, "unknown profile '%s' (did you mean '%s'?)", name,
			 near);
	else
		push_err(ld->errors, NULL, 0,
			 "unknown profile '%s' (see 'sbx profile list', or give a file path)",
			 name);
}

static int load_builtin(struct loader *ld, const char *name, struct pfile *from,
			const struct chain *up, int depth)
{
	const char *text = sbx_profile_builtin(name);
	_cleanup_free_ char *id = NULL;

	if (!text) {
		unknown_builtin(ld, from, name);
		return -ENOENT;
	}
	id = sbx_xasprintf("builtin:%s", name);
	if (from && check_cycle(from, id, id, up) < 0)
		return -ELOOP;

	struct chain node = {.id = id, .display = id, .up = up};

	return parse_text(ld, text, id, NULL, &node, depth);
}

static int load_ref(struct loader *ld, const char *ref, struct pfile *from, const struct chain *up,
		    int depth)
{
	_cleanup_free_ char *path = NULL;

	if (depth > MAX_DEPTH) {
		perr(from, from->extends_line, "extends: nested more than %d deep", MAX_DEPTH);
		return -ELOOP;
	}
	if (!is_path(ref))
		return load_builtin(ld, ref, from, up, depth);
	if (!from->dir) {
		perr(from, from->extends_line,
		     "extends: '%s' is a file, but '%s' can only extend built-in profiles", ref,
		     from->origin);
		return -EINVAL;
	}
	if (ref[0] == '/' || strcmp(from->dir, ".") == 0)
		path = sbx_xstrdup(ref);
	else
		path = sbx_xasprintf("%s/%s", from->dir, ref);
	return load_file(ld, path, from, up, depth);
}

/* ------------------------------------------------------------ public API */

static const struct sbx_profile_vars *vars_or_process(const struct sbx_profile_vars *vars,
						      struct sbx_profile_vars *buf)
{
	if (vars)
		return vars;
	sbx_profile_vars_from_process(buf);
	return buf;
}

static bool nnp_conflict(const struct sbx_config *cfg)
{
	return !cfg->no_new_privs && !cfg->caps_keep;
}

int sbx_profile_load_all(struct sbx_config *cfg, const char *name_or_path,
			 const struct sbx_profile_vars *vars, struct sbx_strv *errors)
{
	struct sbx_profile_vars pv;
	struct loader ld = {.cfg = cfg, .vars = vars_or_process(vars, &pv), .errors = errors};
	size_t before = errors->n;
	struct stat st;

	free(cfg->profile_name);
	cfg->profile_name = sbx_xstrdup(name_or_path);
	if (!*name_or_path)
		push_err(errors, NULL, 0, "empty profile name");
	else if (is_path(name_or_path) ||
		 (!sbx_profile_builtin(name_or_path) && stat(name_or_path, &st) == 0))
		load_file(&ld, name_or_path, NULL, NULL, 0);
	else
		load_builtin(&ld, name_or_path, NULL, NULL, 0);
	if (errors->n == before && nnp_conflict(cfg))
		push_err(errors, name_or_path, 0,
			 "'no-new-privs = no' is refused unless capabilities are kept");
	return errors->n > before ? -EINVAL : 0;
}

static int first_error(struct sbx_strv *errs, struct sbx_err *err)
{
	int r;

	if (errs->n > 1)
		r = sbx_err_set(err, 0, "%s (and %zu more: see 'sbx profile check')", errs->v[0],
				errs->n - 1);
	else
		r = sbx_err_set(err, 0, "%s", errs->n ? errs->v[0] : "bad profile");
	sbx_strv_free(errs);
	return r;
}

int sbx_profile_load(struct sbx_config *cfg, const char *name_or_path,
		     const struct sbx_profile_vars *vars, struct sbx_err *err)
{
	struct sbx_strv errs = {0};

	if (sbx_profile_load_all(cfg, name_or_path, vars, &errs) < 0)
		return first_error(&errs, err);
	sbx_strv_free(&errs);
	return 0;
}

static int load_string(struct sbx_config *cfg, const char *text, const char *origin,
		       const struct sbx_profile_vars *vars, bool written, struct sbx_err *err)
{
	struct sbx_profile_vars pv;
	struct sbx_strv errs = {0};
	struct loader ld = {
	    .cfg = cfg, .vars = vars_or_process(vars, &pv), .errors = &errs, .written = written};
	struct chain node = {.id = origin, .display = origin, .up = NULL};

	if (!cfg->profile_name)
		cfg->profile_name = sbx_xstrdup(origin);
	parse_text(&ld, text, origin, NULL, &node, 0);
	if (errs.n)
		return first_error(&errs, err);
	return 0;
}

int sbx_profile_load_string(struct sbx_config *cfg, const char *text, const char *origin,
			    const struct sbx_profile_vars *vars, struct sbx_err *err)
{
	return load_string(cfg, text, origin, vars, false, err);
}

int sbx_profile_load_written(struct sbx_config *cfg, const char *text, const char *origin,
			     const struct sbx_profile_vars *vars, struct sbx_err *err)
{
	return load_string(cfg, text, origin, vars, true, err);
}

int sbx_profile_set(struct sbx_config *cfg, const char *section, const char *key, const char *value,
		    struct sbx_err *err)
{
	const struct sbx_profile_setctx sc = {.base_dir = NULL, .cli = true};
	const struct sbx_profile_key *k;

	if (!sbx_profile_section_known(section))
		return sbx_profile_err_section(section, err);
	k = sbx_profile_key_find(section, key);
	if (!k)
		return sbx_profile_err_key(section, key, err);
	return sbx_profile_key_apply(cfg, k, key, value ? value : "", &sc, err);
}

int sbx_profile_finish(const struct sbx_config *cfg, struct sbx_err *err)
{
	if (cfg->rootfs_required && !cfg->rootfs)
		return sbx_err_set(err, 0,
				   "profile '%s' needs a rootfs image and uses no host paths: give "
				   "one with --rootfs TARBALL|DIR",
				   cfg->profile_name ? cfg->profile_name : "?");
	if (nnp_conflict(cfg))
		return sbx_err_set(err, 0,
				   "'no-new-privs = no' is refused unless capabilities are kept");
	return 0;
}

const char *sbx_profile_builtin(const char *name)
{
	for (size_t i = 0; i < sbx_n_builtin_profiles; i++)
		if (strcmp(sbx_builtin_profiles[i].name, name) == 0)
			return sbx_builtin_profiles[i].text;
	return NULL;
}

const char *sbx_profile_summary(const char *text, char *buf, size_t len)
{
	const char *p = text, *end, *colon;

	buf[0] = '\0';
	while (*p == '\n')
		p++;
	if (*p != '#')
		return buf;
	p += strspn(p, "# \t");
	end = strchrnul(p, '\n');
	/* "# NAME: summary": drop the name. */
	colon = memchr(p, ':', (size_t)(end - p));
	if (colon && colon[1] == ' ' && !memchr(p, ' ', (size_t)(colon - p)))
		p = colon + 2;
	snprintf(buf, len, "%.*s", (int)(end - p), p);
	return buf;
}

bool sbx_profile_vars_for_sudo_caller(const struct sbx_config *c, struct sbx_profile_vars *v,
				      struct sbx_sudo_caller *who, char **declined)
{
	bool acts;

	*declined = sbx_config_sudo_caller_check(c, v->pwd, who, &acts);
	if (!acts)
		return false;
	v->home = who->home;
	v->user = who->name;
	v->uid = who->uid;
	return true;
}

void sbx_profile_vars_from_process(struct sbx_profile_vars *v)
{
	static char pwd[PATH_MAX], home[PATH_MAX];
	const char *h = getenv("HOME");

	if (!getcwd(pwd, sizeof(pwd)))
		snprintf(pwd, sizeof(pwd), "/");
	if (h && h[0] == '/') {
		snprintf(home, sizeof(home), "%s", h);
	} else {
		struct passwd *pw = sbx_user(getuid());

		snprintf(home, sizeof(home), "%s", pw && pw->pw_dir ? pw->pw_dir : "/");
	}
	v->pwd = pwd;
	v->home = home;
	v->user = NULL; /* process_user(), when a profile uses $USER */
	v->uid = getuid();
}
