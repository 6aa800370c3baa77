/* SPDX-License-Identifier: MIT */
/* lib/profile/secrets.c - resolving secrets, injecting them, redacting output. */
#include "secrets.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>

static void wipe_value(struct sbx_secret_value *v)
{
	if (v->value) {
		explicit_bzero(v->value, v->len + 1);
		if (v->locked)
			munlock(v->value, v->len + 1);
		free(v->value);
	}
	free(v->name);
	memset(v, 0, sizeof(*v));
}

void sbx_secrets_free(struct sbx_secrets *s)
{
	for (size_t i = 0; i < s->n; i++)
		wipe_value(&s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

static const char *source_name(enum sbx_secret_source src)
{
	return src == SBX_SECRET_FROM_FILE ? "file" : "env";
}

/* Read the file source into a fresh buffer; ENOENT when missing. */
static int read_file_value(const struct sbx_secret *d, char **out, size_t *len, struct sbx_err *err)
{
	_cleanup_close_ int fd = open(d->ref, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	ssize_t n;
	char *buf;

	if (fd < 0)
		return sbx_err_set(err, errno, "secret '%s': cannot read file:%s", d->name, d->ref);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return sbx_err_set(err, 0, "secret '%s': file:%s is not a regular file", d->name,
				   d->ref);
	if (st.st_size > SBX_SECRET_MAX_LEN)
		return sbx_err_set(err, 0, "secret '%s': file:%s is larger than 1 MiB", d->name,
				   d->ref);
	buf = sbx_xmalloc((size_t)st.st_size + 2);
	n = sbx_read_all(fd, buf, (size_t)st.st_size + 1);
	if (n < 0 || n > st.st_size) {
		explicit_bzero(buf, (size_t)st.st_size + 2);
		free(buf);
		return sbx_err_set(err, n < 0 ? (int)-n : 0, "secret '%s': cannot read file:%s%s",
				   d->name, d->ref, n < 0 ? "" : " (it changed while read)");
	}
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	buf[n] = '\0';
	*out = buf;
	*len = (size_t)n;
	return 0;
}

/* 0 resolved, 1 optional and missing (skipped), -errno error. */
static int resolve_one(const struct sbx_secret *d, struct sbx_secret_value *v, struct sbx_err *err)
{
	char *val = NULL;
	size_t len = 0;

	if (d->source == SBX_SECRET_FROM_ENV) {
		const char *e = getenv(d->ref);

		if (!e && d->optional)
			return 1;
		if (!e)
			return sbx_err_set(err, 0, "secret '%s': env:%s is not set", d->name,
					   d->ref);
		len = strlen(e);
		val = sbx_xstrndup(e, len);
	} else {
		int r = read_file_value(d, &val, &len, err);

		if (r == -ENOENT && d->optional)
			return 1;
		if (r < 0)
			return r;
	}
	v->name = sbx_xstrdup(d->name);
	v->inject = d->inject;
	v->value = val;
	v->len = len;
	v->locked = mlock(val, len + 1) == 0;
	if (len < SBX_SECRET_MIN_LEN)
		return sbx_err_set(err, 0,
				   "secret '%s': the value from %s:%s is %s (values under "
				   "%d bytes cannot be redacted from the output)",
				   d->name, source_name(d->source), d->ref,
				   len ? "too short" : "empty", SBX_SECRET_MIN_LEN);
	if (d->inject_hosts.n) {
		uint8_t rnd[16];

		for (size_t i = 0; i < len; i++)
			if ((unsigned char)val[i] < 0x20 || (unsigned char)val[i] >= 0x7f)
				return sbx_err_set(
				    err, 0,
				    "secret '%s': the value from %s:%s is not one line "
				    "of printable ASCII: the proxy cannot put it into "
				    "an HTTP header",
				    d->name, source_name(d->source), d->ref);
		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
			return sbx_err_set(err, errno, "secret '%s': no random bytes", d->name);
		v->hosts = &d->inject_hosts;
		memcpy(v->placeholder, "sbx-placeholder-", 16);
		for (size_t i = 0; i < sizeof(rnd); i++)
			snprintf(v->placeholder + 16 + 2 * i, 3, "%02x", rnd[i]);
	}
	if (d->inject == SBX_SECRET_AS_ENV && memchr(val, '\0', len))
		return sbx_err_set(err, 0,
				   "secret '%s': the value from %s:%s has a NUL byte "
				   "(inject it as a file)",
				   d->name, source_name(d->source), d->ref);
	return 0;
}

int sbx_secrets_resolve(struct sbx_secrets *s, const struct sbx_config *c, struct sbx_err *err)
{
	s->v = NULL;
	s->n = 0;
	if (c->n_secrets == 0)
		return 0;
	s->v = sbx_xcalloc(c->n_secrets, sizeof(*s->v));
	for (size_t i = 0; i < c->n_secrets; i++) {
		int r = resolve_one(&c->secrets[i], &s->v[s->n], err);

		if (r < 0) {
			wipe_value(&s->v[s->n]);
			sbx_secrets_free(s);
			return r;
		}
		if (r == 0)
			s->n++;
	}
	return 0;
}

void sbx_secrets_env(const struct sbx_secrets *s, struct sbx_strv *env)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct sbx_secret_value *v = &s->v[i];

		if (v->inject != SBX_SECRET_AS_ENV)
			continue;
		size_t nl = strlen(v->name), vl;
		const char *jv = sbx_secret_jail_value(v, &vl);
		char *kv = sbx_xmalloc(nl + 1 + vl + 1);

		memcpy(kv, v->name, nl);
		kv[nl] = '=';
		memcpy(kv + nl + 1, jv, vl);
		kv[nl + 1 + vl] = '\0';
		sbx_strv_push_take(env, kv);
	}
}

void sbx_secrets_wipe_strv(struct sbx_strv *v)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i])
			explicit_bzero(v->v[i], strlen(v->v[i]));
	sbx_strv_free(v);
}

bool sbx_secrets_has_files(const struct sbx_secrets *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].inject == SBX_SECRET_AS_FILE)
			return true;
	return false;
}

const char *sbx_secret_jail_value(const struct sbx_secret_value *v, size_t *len)
{
	if (v->hosts) {
		*len = strlen(v->placeholder);
		return v->placeholder;
	}
	*len = v->len;
	return v->value;
}

bool sbx_secrets_has_proxy(const struct sbx_secrets *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].hosts)
			return true;
	return false;
}

static bool resolved_has(const struct sbx_secrets *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].name, name) == 0)
			return true;
	return false;
}

/* A JSON string even for a path that is not UTF-8 (escaped for display). */
static json_t *json_str(const char *s)
{
	json_t *j = json_string(s);

	if (!j) {
		_cleanup_free_ char *e = sbx_escape_display(s);

		j = json_string(e);
	}
	return j;
}

json_t *sbx_secrets_describe(const struct sbx_config *c, const struct sbx_secrets *resolved)
{
	json_t *a = json_array();

	for (size_t i = 0; i < c->n_secrets; i++) {
		const struct sbx_secret *d = &c->secrets[i];
		json_t *o = json_object();
		bool file = d->inject == SBX_SECRET_AS_FILE;

		json_object_set_new(o, "name", json_str(d->name));
		json_object_set_new(o, "source", json_string(source_name(d->source)));
		json_object_set_new(o, "ref", json_str(d->ref));
		json_object_set_new(o, "inject", json_string(file ? "file" : "env"));
		if (file) {
			_cleanup_free_ char *path = sbx_xasprintf("/run/secrets/%s", d->name);

			json_object_set_new(o, "path", json_str(path));
		}
		if (d->inject_hosts.n) {
			json_t *h = json_array();

			for (size_t k = 0; k < d->inject_hosts.n; k++)
				json_array_append_new(h, json_string(d->inject_hosts.v[k]));
			json_object_set_new(o, "proxy_hosts", h);
		}
		json_object_set_new(o, "jail_holds",
				    json_string(d->inject_hosts.n ? "placeholder" : "value"));
		json_object_set_new(o, "optional", json_boolean(d->optional));
		if (resolved)
			json_object_set_new(o, "present",
					    json_boolean(resolved_has(resolved, d->name)));
		json_array_append_new(a, o);
	}
	return a;
}

/* ---- the redactor ---- */

static int cmp_len_desc(const void *a, const void *b)
{
	const struct sbx_redact_pat *x = a, *y = b;

	return x->len < y->len ? 1 : x->len > y->len ? -1 : 0;
}

void sbx_redact_init(struct sbx_redact *r, const struct sbx_secrets *s)
{
	memset(r, 0, sizeof(*r));
	if (!s || s->n == 0)
		return;
	r->p = sbx_xcalloc(s->n, sizeof(*r->p));
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].len == 0)
			continue;
		r->p[r->n].value = s->v[i].value;
		r->p[r->n].len = s->v[i].len;
		r->p[r->n].label = sbx_xasprintf("[secret %s]", s->v[i].name);
		r->first[(unsigned char)s->v[i].value[0]] = 1;
		if (s->v[i].len > r->max_len)
			r->max_len = s->v[i].len;
		r->n++;
	}
	qsort(r->p, r->n, sizeof(*r->p), cmp_len_desc);
	r->hold = sbx_xmalloc(r->max_len ? r->max_len : 1);
}

/* The longest value starting at d[i] and lying within d[0..total). */
static const struct sbx_redact_pat *match_at(const struct sbx_redact *r, const char *d, size_t i,
					     size_t total)
{
	if (!r->first[(unsigned char)d[i]])
		return NULL;
	for (size_t k = 0; k < r->n; k++) {
		const struct sbx_redact_pat *p = &r->p[k];

		if (i + p->len <= total && memcmp(d + i, p->value, p->len) == 0)
			return p;
	}
	return NULL;
}

/*
 * Redact d[0..total): positions up to `decide` (exclusive) are final; the
 * rest (from where scanning stopped) is returned in *rest.
 */
static int redact_span(struct sbx_redact *r, const char *d, size_t total, size_t decide,
		       size_t *rest, sbx_redact_write_fn fn, void *ctx)
{
	size_t i = 0, start = 0;
	int e;

	while (i < decide) {
		const struct sbx_redact_pat *p = match_at(r, d, i, total);

		if (!p) {
			i++;
			continue;
		}
		if (i > start && (e = fn(ctx, d + start, i - start)) < 0)
			return e;
		if ((e = fn(ctx, p->label, strlen(p->label))) < 0)
			return e;
		r->replaced++;
		i += p->len;
		start = i;
	}
	if (i > start && (e = fn(ctx, d + start, i - start)) < 0)
		return e;
	*rest = i;
	return 0;
}

int sbx_redact_feed(struct sbx_redact *r, const void *buf, size_t len, sbx_redact_write_fn fn,
		    void *ctx)
{
	size_t total, decide, rest = 0;
	char *d;
	int e;

	if (r->n == 0)
		return len ? fn(ctx, buf, len) : 0;
	total = r->hold_len + len;
	if (total < r->max_len) { /* nothing can be decided yet */
		memcpy(r->hold + r->hold_len, buf, len);
		r->hold_len = total;
		return 0;
	}
	d = sbx_xmalloc(total);
	memcpy(d, r->hold, r->hold_len);
	memcpy(d + r->hold_len, buf, len);
	decide = total - r->max_len + 1;
	e = redact_span(r, d, total, decide, &rest, fn, ctx);
	if (e == 0) {
		r->hold_len = total - rest; /* < max_len */
		memcpy(r->hold, d + rest, r->hold_len);
	}
	explicit_bzero(d, total);
	free(d);
	return e;
}

int sbx_redact_flush(struct sbx_redact *r, sbx_redact_write_fn fn, void *ctx)
{
	size_t rest = 0;
	int e;

	if (r->hold_len == 0)
		return 0;
	e = redact_span(r, r->hold, r->hold_len, r->hold_len, &rest, fn, ctx);
	explicit_bzero(r->hold, r->hold_len);
	r->hold_len = 0;
	return e;
}

void sbx_redact_free(struct sbx_redact *r)
{
	if (r->hold) {
		explicit_bzero(r->hold, r->max_len ? r->max_len : 1);
		free(r->hold);
	}
	for (size_t i = 0; i < r->n; i++)
		free(r->p[i].label);
	free(r->p);
	memset(r, 0, sizeof(*r));
}
