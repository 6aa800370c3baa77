/* SPDX-License-Identifier: MIT */
/* lib/state/report.c - the self-contained HTML report of a sandbox (see report.h). */
#include "report.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <string.h>
#include <sys/stat.h>

#include "changes.h"
#include "log.h"
#include "record_text.h"

static const char css[] =
    "body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d232a;background:#f6f7f9}"
    "header{background:#1d232a;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}"
    "header .st{display:inline-block;margin-left:12px;padding:2px 10px;border-radius:10px;"
    "background:#3a4552;font-size:13px}main{padding:8px 24px 40px;max-width:1200px}"
    "details{background:#fff;border:1px solid #d8dde3;border-radius:6px;margin:12px 0}"
    "summary{cursor:pointer;padding:10px 14px;font-weight:600;font-size:15px}"
    ".body{padding:0 14px 12px}table{border-collapse:collapse;width:100%}"
    "td,th{text-align:left;padding:3px 8px;border-bottom:1px solid #eef0f3;vertical-align:top}"
    "td:last-child{overflow-wrap:anywhere}"
    "th{background:#f0f2f5}td.k{width:190px;color:#56606b}"
    "pre{background:#0f1419;color:#e6e6e6;padding:10px;overflow:auto;max-height:520px;"
    "white-space:pre-wrap;word-break:break-all}.A{color:#17803d}.C{color:#a66a00}"
    ".D{color:#c2261d}.deny{color:#c2261d;font-weight:600}.allow{color:#17803d}"
    ".bar{background:#4a7dbd;height:12px;display:inline-block}.warn{color:#c2261d;font-weight:600}"
    "input{padding:4px 8px;margin:6px 0;width:320px}code{font-family:ui-monospace,monospace}";

/*
 * The report's one script: the changes filter and expand/collapse all,
 * wired up here (no inline event handlers); it marks <html data-ready=1>
 * once it ran (the tests look for it).  The Content-Security-Policy
 * allows exactly this script by its SHA-256 (no 'unsafe-inline'), so a
 * jail-chosen name that ever got past the escaping could not run script.
 */
static const char js[] =
    "document.addEventListener('DOMContentLoaded',function(){"
    "var i=document.getElementById('sbx-filter');"
    "if(i)i.addEventListener('input',function(){var q=i.value.toLowerCase();"
    "document.querySelectorAll('#changes tbody tr').forEach(function(r){"
    "r.style.display=r.textContent.toLowerCase().indexOf(q)<0?'none':'';});});"
    "[['sbx-expand',true],['sbx-collapse',false]].forEach(function(b){"
    "var e=document.getElementById(b[0]);if(e)e.addEventListener('click',function(){"
    "document.querySelectorAll('details').forEach(function(d){d.open=b[1];});});});"
    "document.documentElement.setAttribute('data-ready','1');});";

/* "'sha256-BASE64'" of the script for the policy, or "'none'" (and no
 * script) when libcrypto is not there to hash it. */
static char *script_source(void)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	char *b64, *r;
	bool ok = c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) &&
		  EVP_DigestUpdate(c, js, sizeof(js) - 1) && EVP_DigestFinal_ex(c, md, &n) &&
		  n == 32;

	if (c)
		EVP_MD_CTX_free(c);
	if (!ok)
		return NULL;
	b64 = sbx_base64(md, n);
	r = sbx_xasprintf("'sha256-%s'", b64);
	free(b64);
	return r;
}

/* Length of a valid UTF-8 sequence at p (not C0/C1 controls), else 0. */
static size_t utf8_len(const unsigned char *p, size_t left)
{
	size_t n = *p < 0x80		 ? 1
		   : (*p & 0xe0) == 0xc0 ? 2
		   : (*p & 0xf0) == 0xe0 ? 3
		   : (*p & 0xf8) == 0xf0 ? 4
					 : 0;

	if (!n || n > left || (n > 1 && !sbx_utf8_valid((const char *)p, n)))
		return 0;
	if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
		return 0;
	return n;
}

void sbx_html_escape(FILE *f, const char *s, size_t len, bool multiline)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + len;

	while (p < e) {
		size_t n = utf8_len(p, (size_t)(e - p));

		if (n > 1) {
			fwrite(p, 1, n, f);
			p += n;
			continue;
		}
		switch (*p) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		case '\n':
			fputs(multiline ? "\n" : "\\n", f);
			break;
		case '\t':
			fputs(multiline ? "\t" : "\\t", f);
			break;
		default:
			if (*p < 0x20 || *p >= 0x7f)
				fprintf(f, "\\x%02x", *p);
			else
				fputc(*p, f);
		}
		p++;
	}
}

static void esc(FILE *f, const char *s)
{
	if (s)
		sbx_html_escape(f, s, strlen(s), false);
	else
		fputs("-", f);
}

/* A JSON value as escaped text (strings bare, others compact JSON). */
static void esc_json(FILE *f, const json_t *v)
{
	char *t;

	if (!v || json_is_null(v)) {
		fputs("-", f);
		return;
	}
	if (json_is_string(v)) {
		sbx_html_escape(f, json_string_value(v), json_string_length(v), false);
		return;
	}
	if (json_is_true(v) || json_is_false(v)) {
		fputs(json_is_true(v) ? "yes" : "no", f);
		return;
	}
	t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER |
			      JSON_REAL_PRECISION(10));
	esc(f, t);
	free(t);
}

static void row(FILE *f, const char *k, const json_t *v)
{
	fputs("<tr><td class=k>", f);
	esc(f, k);
	fputs("</td><td>", f);
	esc_json(f, v);
	fputs("</td></tr>\n", f);
}

/* A row of a value made here (taken). */
static void row_take(FILE *f, const char *k, json_t *v)
{
	row(f, k, v);
	json_decref(v);
}

#define jstr  sbx_json_str
#define jstrv sbx_json_strv

/* A row whose value is prose from lib/state/record_text.c (taken). */
static void row_text(FILE *f, const char *k, char *text)
{
	fputs("<tr><td class=k>", f);
	esc(f, k);
	fputs("</td><td>", f);
	esc(f, text);
	fputs("</td></tr>\n", f);
	free(text);
}

static void open_section(FILE *f, const char *title, bool open)
{
	fprintf(f, "<details%s><summary>", open ? " open" : "");
	esc(f, title);
	fputs("</summary><div class=body>\n", f);
}

static void close_section(FILE *f)
{
	fputs("</div></details>\n", f);
}

static void sec_summary(FILE *f, const struct sbx_record *r, const char *state)
{
	open_section(f, "Summary", true);
	fputs("<table>", f);
	row_take(f, "state", json_string(state));
	row_take(f, "name", jstr(r->name));
	row_take(f, "created", jstr(r->created));
	row_take(f, "ended", jstr(r->ended));
	row_take(f, "command", r->has_command ? jstrv(&r->command) : json_null());
	row_take(f, "workdir", jstr(r->workdir));
	row_take(f, "profile", jstr(r->profile.name));
	row_take(f, "rootfs", jstr(r->rootfs.spec));
	row_text(f, "exit", sbx_rec_exit_text(r));
	row_text(f, "resources", sbx_rec_resources_text(r));
	row_take(f, "kept", r->kept_set ? json_boolean(r->kept) : json_null());
	row_take(f, "why kept", jstr(r->keep_reason));
	fputs("</table>", f);
	close_section(f);
}

static json_t *id_json(bool known, int64_t v)
{
	return known && v >= 0 ? json_integer((json_int_t)v) : json_null();
}

static void sec_policy(FILE *f, const struct sbx_record *r)
{
	const struct sbx_record_policy *p = &r->policy;
	const struct sbx_record_user *u = &p->user;
	bool user = p->set && p->has_user, set = p->set;
	json_t *caps = json_array();

	open_section(f, "Policy answers", true);
	fputs("<table>", f);
	row_take(f, "uid inside", id_json(user, u->uid));
	row_take(f, "uid on the host", id_json(user, u->host_uid));
	row_take(f, "root inside", user ? json_boolean(u->root_inside) : json_null());
	if (user && u->root_on_host)
		fputs("<tr><td class=k>root on the host</td><td class=warn>YES</td></tr>", f);
	else
		row_take(f, "root on the host", user ? json_false() : json_null());
	row_take(f, "network", jstr(p->network.mode));
	row_take(f, "allowlist", set ? jstrv(&p->network.allow) : json_null());
	row_text(f, "secrets (names)", sbx_rec_secrets_text(r));
	row_text(f, "root", sbx_rec_root_text(r));
	row_take(f, "shared with host", set ? jstrv(&p->filesystem.shared) : json_null());
	row_take(f, "persist", jstr(p->persist_summary ?: p->persist));
	row_text(f, "limits", sbx_rec_limits_text(r));
	row_take(f, "seccomp", jstr(p->seccomp));
	for (int i = 0; i < 64; i++)
		if (p->capabilities & (1ULL << i))
			json_array_append_new(caps, json_integer(i));
	row_take(f, "capabilities", set ? caps : (json_decref(caps), json_null()));
	row_take(f, "no_new_privs", set ? json_boolean(p->no_new_privs) : json_null());
	fputs("</table>", f);
	close_section(f);
}

static void sec_timeline(FILE *f, const struct sbx_record *r, const json_t *events)
{
	const char *names[SBX_RECORD_PHASES];
	double phase[SBX_RECORD_PHASES], max = 1;
	int n = r->timings.set ? SBX_RECORD_PHASES : 0;
	const json_t *ev;
	size_t i;

	open_section(f, "Timeline", true);
	sbx_record_phases(&r->timings, names, phase);
	for (int k = 0; k < n; k++)
		if (phase[k] > max && strcmp(names[k], "total"))
			max = phase[k];
	fputs("<table>", f);
	for (int k = 0; k < n; k++) {
		double ms = phase[k];

		fputs("<tr><td class=k>", f);
		esc(f, names[k]);
		fprintf(f,
			"</td><td><span class=bar style=\"width:%dpx\"></span> %.1f ms</td></tr>\n",
			strcmp(names[k], "total") ? (int)(ms / max * 400) : 0, ms);
	}
	fputs(
	    "</table><h4>Run log</h4><table><tr><th>time</th><th>event</th><th>details</th></tr>\n",
	    f);
	json_array_foreach(events, i, ev)
	{
		char *text = sbx_rec_event_text(ev);

		fputs("<tr><td><code>", f);
		esc_json(f, json_object_get(ev, "ts"));
		fputs("</code></td><td>", f);
		esc_json(f, json_object_get(ev, "event"));
		fputs("</td><td>", f);
		esc(f, text);
		fputs("</td></tr>\n", f);
		free(text);
	}
	fputs("</table>", f);
	close_section(f);
}

static void sec_output(FILE *f, const struct sbx_sandbox *sb)
{
	int fd = openat(sb->dirfd, "output.log", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	char *buf;
	ssize_t n;

	open_section(f, "Output", false);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		fputs("<p>No captured output.</p>", f);
		if (fd >= 0)
			close(fd);
		close_section(f);
		return;
	}
	buf = sbx_xmalloc(SBX_REPORT_OUTPUT_MAX);
	n = sbx_read_all(fd, buf, SBX_REPORT_OUTPUT_MAX);
	close(fd);
	if ((off_t)n < st.st_size)
		fprintf(f,
			"<p class=warn>Showing the first %zd of %lld bytes (sbx inspect --output "
			"has all of it).</p>",
			n, (long long)st.st_size);
	if (sb->rec.resources.output_truncated)
		fputs("<p class=warn>The run truncated its captured output.</p>", f);
	fputs("<pre>", f);
	if (n > 0)
		sbx_html_escape(f, buf, (size_t)n, true);
	fputs("</pre>", f);
	free(buf);
	close_section(f);
}

static void sec_network(FILE *f, const struct sbx_record *r, const json_t *events)
{
	const json_t *rec = r->network_events, *e;
	size_t i, allowed = 0, failed = 0, denied = 0;

	open_section(f, "Network events", true);
	fputs("<table><tr><th></th><th>host</th><th>port</th><th>address</th><th>reason</th>"
	      "<th>bytes up/down</th></tr>\n",
	      f);
	if (!json_array_size(rec))
		rec = events;
	json_array_foreach(rec, i, e)
	{
		const char *type = json_string_value(json_object_get(e, "event"));
		bool ok = json_is_true(json_object_get(e, "allowed"));
		const char *res = json_string_value(json_object_get(e, "result"));
		bool fail = ok && res && !strcmp(res, "failed");

		if (rec == events && (!type || strcmp(type, "net")))
			continue;
		!ok ? denied++ : fail ? failed++ : allowed++;
		fprintf(f, "<tr><td class=%s>%s</td><td>", ok && !fail ? "allow" : "deny",
			!ok    ? "DENY"
			: fail ? "FAILED"
			       : "ALLOW");
		esc_json(f, json_object_get(e, "host"));
		fputs("</td><td>", f);
		esc_json(f, json_object_get(e, "port"));
		fputs("</td><td>", f);
		esc_json(f, json_object_get(e, "address"));
		fputs("</td><td>", f);
		esc_json(f, json_object_get(e, "reason"));
		fprintf(f, "</td><td>%lld / %lld</td></tr>\n",
			(long long)json_integer_value(json_object_get(e, "bytes_up")),
			(long long)json_integer_value(json_object_get(e, "bytes_down")));
	}
	fprintf(f, "</table><p>%zu allowed, %zu failed (allowed, but not reached), %zu denied.</p>",
		allowed, failed, denied);
	close_section(f);
}

struct chg_ctx {
	FILE *f;
	size_t n;
};

static int chg_row(const struct sbx_change *c, void *data)
{
	struct chg_ctx *x = data;

	if (x->n++ >= SBX_REPORT_CHANGES_MAX)
		return 0;
	fprintf(x->f, "<tr><td class=%c>%c</td><td><code>", c->kind, c->kind);
	esc(x->f, c->path);
	fprintf(x->f, "</code>%s</td><td>%s</td><td>", c->opaque ? " (opaque)" : "",
		sbx_change_type(c));
	if (c->kind != 'D' && S_ISREG(c->st->st_mode))
		fprintf(x->f, "%lld", (long long)c->st->st_size);
	fputs("</td></tr>\n", x->f);
	return 0;
}

/* The patch of the copy-on-write host directories, flagged files first. */
static void sec_review(FILE *f, const struct sbx_report_review *rv)
{
	if (!rv)
		return;
	fputs("<h4>Diff of the copy-on-write host directories (sbx diff)</h4>", f);
	if (rv->flagged && rv->flagged->n) {
		fputs("<p class=warn>Files that run code on the host later:</p><ul class=flagged>",
		      f);
		for (size_t i = 0; i < rv->flagged->n; i++) {
			fputs("<li class=warn>", f);
			esc(f, rv->flagged->v[i]);
			fputs("</li>", f);
		}
		fputs("</ul>", f);
	}
	if (rv->error) {
		fputs("<p class=warn>", f);
		esc(f, rv->error);
		fputs("</p>", f);
	} else if (rv->diff && *rv->diff) {
		fputs("<pre class=diff>", f);
		sbx_html_escape(f, rv->diff, strlen(rv->diff), true);
		fputs("</pre>", f);
	} else {
		fputs("<p>No change to apply.</p>", f);
	}
}

static void sec_changes(FILE *f, const struct sbx_sandbox *sb, const struct sbx_report_review *rv)
{
	struct chg_ctx x = {f, 0};
	struct sbx_err err = {0};
	size_t n_err = 0;

	open_section(f, "Changes", true);
	fputs("<input id=sbx-filter placeholder=\"filter paths\">"
	      "<table id=changes><thead><tr><th></th><th>path</th><th>type</th><th>size</th></tr>"
	      "</thead><tbody>\n",
	      f);
	int r = sbx_changes_walk_sandbox(sb, chg_row, &x, &n_err, &err);
	fputs("</tbody></table>", f);
	if (r < 0) {
		fputs("<p class=warn>", f);
		esc(f, err.msg);
		fputs("</p>", f);
	}
	if (x.n > SBX_REPORT_CHANGES_MAX)
		fprintf(f, "<p class=warn>%zu more changes not shown (sbx inspect --changes).</p>",
			x.n - SBX_REPORT_CHANGES_MAX);
	fprintf(f, "<p>%zu changes%s.</p>", x.n, n_err ? ", some entries unreadable" : "");
	sec_review(f, rv);
	close_section(f);
}

/* The profile, and record.json as it is on disk. */
static void sec_raw(FILE *f, const struct sbx_sandbox *sb)
{
	char *t = json_dumps(sb->record, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	const char *ini = sb->rec.profile.ini;

	open_section(f, "Resolved profile", false);
	fputs("<pre>", f);
	if (ini)
		sbx_html_escape(f, ini, strlen(ini), true);
	fputs("</pre>", f);
	close_section(f);
	open_section(f, "Record (record.json)", false);
	fputs("<pre>", f);
	if (t)
		sbx_html_escape(f, t, strlen(t), true);
	fputs("</pre>", f);
	close_section(f);
	free(t);
}

int sbx_report_write(const struct sbx_sandbox *sb, const json_t *events, const char *state,
		     const struct sbx_report_review *review, const char *file, struct sbx_err *err)
{
	_cleanup_fclose_ FILE *f = NULL;
	const struct sbx_record *r = &sb->rec;
	char *script;
	int fd;

	if (!sb->record)
		return sbx_err_set(err, ENOENT, "sandbox '%s' has no usable record", sb->id);
	fd = sbx_open_users_file(file, O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || !(f = fdopen(fd, "we"))) {
		int e = fd < 0 ? -fd : errno;

		if (fd >= 0)
			close(fd);
		return sbx_err_set(err, e, "cannot write '%s'", file);
	}
	script = script_source();
	fprintf(f,
		"<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		"style-src 'unsafe-inline'; script-src %s; base-uri 'none'; form-action 'none'\">"
		"<title>sbx sandbox ",
		script ? script : "'none'");
	esc(f, sb->id);
	fprintf(f,
		"</title><style>%s</style>%s%s%s</head><body>\n<header><h1>"
		"sbx sandbox <code>%s</code>",
		css, script ? "<script>" : "", script ? js : "", script ? "</script>" : "", sb->id);
	free(script);
	if (sb->name) {
		fputs(" (", f);
		esc(f, sb->name);
		fputs(")", f);
	}
	fputs("<span class=st>", f);
	esc(f, state);
	fputs("</span></h1></header><main>\n<p><button id=sbx-expand>expand all</button> "
	      "<button id=sbx-collapse>collapse all</button></p>\n",
	      f);
	sec_summary(f, r, state);
	sec_policy(f, r);
	sec_timeline(f, r, events);
	sec_network(f, r, events);
	sec_output(f, sb);
	sec_changes(f, sb, review);
	sec_raw(f, sb);
	fputs("</main></body></html>\n", f);
	if (fflush(f) != 0 || ferror(f))
		return sbx_err_set(err, errno ? errno : EIO, "cannot write '%s'", file);
	return 0;
}
