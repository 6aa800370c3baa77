/* SPDX-License-Identifier: MIT */
/*
 * lib/profile/profile_write.c - write a resolved profile back as INI (`sbx profile
 * show`).  The output reads back through the parser to the same config.
 */
#include "profile_int.h"

#include <ctype.h>
#include <inttypes.h>
#include <string.h>
#include <sys/capability.h>

static bool needs_quotes(const char *val)
{
	static const char when_host[] = " when host";
	size_t n = strlen(val);

	if (n && (val[0] == ' ' || val[0] == '\t' || val[n - 1] == ' ' || val[n - 1] == '\t'))
		return true;
	if (n >= strlen(when_host) && strcmp(val + n - strlen(when_host), when_host) == 0)
		return true;
	for (size_t i = 0; i < n; i++) {
		/* a '~' the reader would take for $HOME/ (profile.c, tilde_here):
		 * at the start, after a '-' there, or after a ':' not written
		 * "\:" (-e PATH=/bin:~/bin is one value, not the home's) */
		bool at = i == 0 || (i == 1 && val[0] == '-') ||
			  (val[i - 1] == ':' && (i < 2 || val[i - 2] != '\\'));

		if ((unsigned char)val[i] < 0x20 || val[i] == 0x7f ||
		    (val[i] == '~' && (val[i + 1] == '/' || !val[i + 1]) && at))
			return true;
	}
	/* bytes that are not UTF-8: the record's JSON holds text only */
	return !sbx_utf8_valid(val, n);
}

char *sbx_profile_value_text(const char *val)
{
	char *out = sbx_xmalloc(4 * strlen(val) + 4), *o = out; /* \xHH each, $'' */

	if (!needs_quotes(val)) {
		for (const char *p = val; *p; p++) {
			if (*p == '$')
				*o++ = '$';
			*o++ = *p;
		}
		*o = '\0';
		return out;
	}
	*o++ = '$';
	*o++ = '\'';
	for (const unsigned char *p = (const unsigned char *)val; *p; p++) {
		const char *named = *p == '\n' ? "n" : *p == '\t' ? "t" : *p == '\r' ? "r" : NULL;
		size_t u = *p >= 0x80 ? sbx_utf8_char_len((const char *)p) : 0;

		if (u) { /* a character as it is */
			memcpy(o, p, u);
			o += u;
			p += u - 1;
		} else if (*p == '\\' || *p == '\'') {
			*o++ = '\\';
			*o++ = (char)*p;
		} else if (named) {
			*o++ = '\\';
			*o++ = named[0];
		} else if (*p < 0x20 || *p >= 0x7f || *p == '#' || *p == ';') {
			o += sprintf(o, "\\x%02x", *p);
		} else {
			*o++ = (char)*p;
		}
	}
	*o++ = '\'';
	*o = '\0';
	return out;
}

/* "key = value", written so that the parser reads the value back. */
static void put(FILE *out, const char *key, const char *val)
{
	_cleanup_free_ char *text = sbx_profile_value_text(val);

	fprintf(out, "%s = %s\n", key, text);
}

void sbx_profile_fmt_size(uint64_t v, char *buf, size_t len)
{
	static const char suffix[] = "tgmk";

	for (int i = 0; i < 4; i++) {
		uint64_t unit = 1ULL << (10 * (4 - i));

		if (v && v % unit == 0) {
			snprintf(buf, len, "%" PRIu64 "%c", v / unit, suffix[i]);
			return;
		}
	}
	snprintf(buf, len, "%" PRIu64, v);
}

static void put_bool(FILE *out, const char *key, bool v)
{
	put(out, key, v ? "yes" : "no");
}

void sbx_profile_write_sandbox(const struct sbx_config *c, FILE *out)
{
	char buf[64];

	put(out, "rootfs", c->rootfs ? c->rootfs : c->rootfs_required ? "required" : "host");
	if (c->hostname)
		put(out, "hostname", c->hostname);
	if (!c->user_set) {
		put(out, "user", "inherit");
	} else if (c->user_root && c->gid == 0) {
		put(out, "user", "root");
	} else {
		snprintf(buf, sizeof(buf), "%u:%u", (unsigned)c->uid, (unsigned)c->gid);
		put(out, "user", buf);
	}
	if (c->workdir)
		put(out, "workdir", c->workdir);
	put(out, "persist", sbx_persist_name(c->persist));
	put(out, "tty",
	    c->tty_mode == SBX_TTY_YES	? "yes"
	    : c->tty_mode == SBX_TTY_NO ? "no"
					: "auto");
	put_bool(out, "writable", c->rootfs_writable);
	if (c->stop_timeout_ms == SBX_UNSET)
		put(out, "stop-timeout", "never");
	else if (c->stop_timeout_ms == 0)
		put(out, "stop-timeout", "0");
	else {
		sbx_duration_text(c->stop_timeout_ms, buf, sizeof(buf));
		put(out, "stop-timeout", buf);
	}
}

void sbx_profile_write_mounts(const struct sbx_config *c, FILE *out)
{
	for (size_t i = 0; i < c->n_mounts; i++) {
		const struct sbx_mount *m = &c->mounts[i];
		_cleanup_free_ char *v = NULL, *src = NULL, *dst = NULL;
		char sz[32];

		switch (m->kind) {
		case SBX_MNT_TMPFS:
			dst = sbx_profile_path_escape(m->dst);
			sbx_profile_fmt_size(m->size, sz, sizeof(sz));
			v = m->size ? sbx_xasprintf("%s:%s", dst, sz) : sbx_xstrdup(dst);
			break;
		case SBX_MNT_MASK:
			v = sbx_xstrdup(m->dst);
			break;
		default:
			src = sbx_profile_path_escape(m->src);
			dst = sbx_profile_path_escape(m->dst);
			v = strcmp(m->src, m->dst) == 0
				? sbx_xasprintf("%s%s", m->optional ? "-" : "", src)
				: sbx_xasprintf("%s%s:%s", m->optional ? "-" : "", src, dst);
			if (m->host_only) { /* after the value, outside of its quotes */
				_cleanup_free_ char *text = sbx_profile_value_text(v);

				fprintf(out, "%s = %s when host\n", sbx_mount_kind_name(m->kind),
					text);
				continue;
			}
		}
		put(out, sbx_mount_kind_name(m->kind), v);
	}
	put(out, "sysfs", c->sysfs == SBX_SYSFS_NONE ? "none" : "own");
	for (size_t i = 0; i < c->watch.n; i++)
		put(out, "watch", c->watch.v[i]);
	for (size_t i = 0; i < c->n_watch_keys; i++) {
		_cleanup_free_ char *text = sbx_profile_value_text(c->watch_keys[i].path);

		/* the keys before the path, outside of its quotes */
		for (size_t j = 0; j < c->watch_keys[i].keys.n; j++)
			fprintf(out, "watch = [%s] %s\n", c->watch_keys[i].keys.v[j], text);
	}
}

void sbx_profile_write_env(const struct sbx_config *c, FILE *out)
{
	put_bool(out, "clear", c->env_clear);
	for (size_t i = 0; i < c->env_pass.n; i++)
		put(out, "pass", c->env_pass.v[i]);
	for (size_t i = 0; i < c->env_set.n; i++)
		put(out, "set", c->env_set.v[i]);
}

void sbx_profile_write_secrets(const struct sbx_config *c, FILE *out)
{
	for (size_t i = 0; i < c->n_secrets; i++) {
		const struct sbx_secret *s = &c->secrets[i];
		_cleanup_free_ char *hosts = sbx_strv_join(&s->inject_hosts, ",");
		_cleanup_free_ char *v = sbx_xasprintf(
		    "%s:%s%s as %s%s%s", s->source == SBX_SECRET_FROM_ENV ? "env" : "file", s->ref,
		    s->optional ? "?" : "", s->inject == SBX_SECRET_AS_FILE ? "file" : "env",
		    s->inject_hosts.n ? " inject " : "", s->inject_hosts.n ? hosts : "");

		put(out, s->name, v);
	}
}

void sbx_profile_write_network(const struct sbx_config *c, FILE *out)
{
	put(out, "mode", sbx_net_mode_name(c->net));
	for (size_t i = 0; i < c->allow.n; i++)
		put(out, "allow", c->allow.v[i]);
	if (c->upstream_ca)
		put(out, "upstream-ca", c->upstream_ca);
	put_bool(out, "capture", c->capture);
	for (size_t i = 0; i < c->publish.n; i++)
		put(out, "publish", c->publish.v[i]);
}

void sbx_profile_write_limits(const struct sbx_config *c, FILE *out)
{
	static const char *const keys[] = {"memory", "pids", "cpus",	   "time",	   "nofile",
					   "fsize",  "disk", "image-size", "image-entries"};
	struct sbx_config *m = (struct sbx_config *)c;
	char buf[64];

	for (size_t i = 0; i < SBX_ARRAY_SIZE(keys); i++) {
		uint64_t v = *sbx_profile_limit_field(m, keys[i]);

		if (strcmp(keys[i], "disk") == 0 && (v == SBX_UNSET || v == SBX_DISK_NO_CAP))
			snprintf(buf, sizeof(buf), v == SBX_UNSET ? "default" : "unlimited");
		else if (v == SBX_UNSET)
			snprintf(buf, sizeof(buf), "unlimited");
		else if (strcmp(keys[i], "cpus") == 0 && v % 1000)
			snprintf(buf, sizeof(buf), "%" PRIu64 ".%03" PRIu64, v / 1000, v % 1000);
		else if (strcmp(keys[i], "cpus") == 0)
			snprintf(buf, sizeof(buf), "%" PRIu64, v / 1000);
		else if (strcmp(keys[i], "time") == 0)
			sbx_duration_text(v, buf, sizeof(buf));
		else if (strcmp(keys[i], "pids") == 0 || strcmp(keys[i], "nofile") == 0 ||
			 strcmp(keys[i], "image-entries") == 0)
			snprintf(buf, sizeof(buf), "%" PRIu64, v);
		else
			sbx_profile_fmt_size(v, buf, sizeof(buf));
		put(out, keys[i], buf);
	}
}

void sbx_profile_write_security(const struct sbx_config *c, FILE *out)
{
	char buf[1024] = "";
	size_t o = 0;

	put(out, "seccomp", c->seccomp ? c->seccomp : "default");
	for (int v = 0; v < 64; v++) {
		if (!(c->caps_keep & (1ULL << v)))
			continue;
		char *n = cap_to_name(v);

		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s", o ? " " : "", n ? n : "?");
		cap_free(n);
		if (o >= sizeof(buf))
			break;
	}
	for (char *q = buf; *q; q++)
		*q = (char)toupper((unsigned char)*q);
	put(out, "capabilities", o ? buf : "none");
	put_bool(out, "no-new-privs", c->no_new_privs);
}

int sbx_profile_write(const struct sbx_config *c, FILE *out)
{
	const char *section = NULL;

	for (size_t i = 0; i < sbx_profile_n_keys; i++) {
		const struct sbx_profile_key *k = &sbx_profile_keys[i];

		if (!section || strcmp(section, k->section) != 0) {
			section = k->section;
			fprintf(out, "%s[%s]\n", i ? "\n" : "", section);
		}
		if (k->write)
			k->write(c, out);
	}
	return ferror(out) ? -EIO : 0;
}
