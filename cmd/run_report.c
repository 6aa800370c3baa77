/* SPDX-License-Identifier: MIT */
/*
 * cmd/run_report.c - what `sbx run` says: run-log events (JSON lines to
 * log.jsonl and --log-json, human "sbx:" lines on stderr) and record.json.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cmd.h"
#include "fault.h"
#include "profile.h"
#include "proc.h"
#include "run.h"

/* ---- human lines ---- */

/* "10 s", "1.5 s", "250 ms". */
static const char *duration_text(uint64_t ms)
{
	static char buf[32];

	if (ms % 1000 == 0)
		snprintf(buf, sizeof(buf), "%llu s", (unsigned long long)(ms / 1000));
	else if (ms > 1000)
		snprintf(buf, sizeof(buf), "%.1f s", (double)ms / 1000.0);
	else
		snprintf(buf, sizeof(buf), "%llu ms", (unsigned long long)ms);
	return buf;
}

static const char *jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

static void human_policy(const json_t *ev)
{
	const json_t *u = json_object_get(ev, "user");
	const json_t *fs = json_object_get(ev, "filesystem");

	sbx_errorf("user: %s", jstr(u, "summary"));
	sbx_errorf("network: %s", jstr(json_object_get(ev, "network"), "summary"));
	sbx_errorf("secrets: %s", jstr(ev, "secrets_summary"));
	sbx_errorf("filesystem: %s", jstr(fs, "summary"));
	sbx_errorf("persist: %s", jstr(ev, "persist"));
}

static void human_exit(const json_t *ev)
{
	const json_t *x = json_object_get(ev, "exit");
	const json_t *r = json_object_get(ev, "resources");
	const char *reason = jstr(x, "reason");
	char what[160];
	int sig = (int)json_integer_value(json_object_get(x, "signal"));

	if (!strcmp(reason, "timeout"))
		snprintf(what, sizeof(what), "timed out (time limit), exit 124");
	else if (!strcmp(reason, "oom"))
		snprintf(what, sizeof(what), "killed by the OOM killer (memory limit), exit 137");
	else if (!strcmp(reason, "stopped"))
		snprintf(what, sizeof(what), "killed by sbx (SIGKILL) %s, exit %d",
			 !strcmp(jstr(x, "stop"), "second-signal")
			     ? "on a second signal"
			     : "when it outlived --stop-timeout after the signal",
			 (int)json_integer_value(json_object_get(x, "status")));
	else if (!strcmp(reason, "signaled"))
		snprintf(what, sizeof(what), "killed by signal %d (SIG%s), exit %d", sig,
			 sigabbrev_np(sig) ? sigabbrev_np(sig) : "?",
			 (int)json_integer_value(json_object_get(x, "status")));
	else if (!strcmp(reason, "error"))
		snprintf(what, sizeof(what), "sbx failed, exit 125");
	else if (!strcmp(reason, "not-found"))
		snprintf(what, sizeof(what), "command not found, exit 127");
	else if (!strcmp(reason, "not-executable"))
		snprintf(what, sizeof(what), "command could not be executed, exit 126");
	else
		snprintf(what, sizeof(what), "exit %d",
			 (int)json_integer_value(json_object_get(x, "status")));
	sbx_errorf("%s; wall %.0f ms, cpu %.0f ms, peak memory %.1f MiB", what,
		   json_number_value(json_object_get(r, "wall_ms")),
		   json_number_value(json_object_get(r, "cpu_ms")),
		   (double)json_integer_value(json_object_get(r, "mem_peak")) / 1048576.0);
}

/* The proxy's connections that were no request, closed to make room or
 * refused (netpolicy.h): "" if none. */
static const char *proxy_unserved(const struct run_ctx *c, char *buf, size_t len)
{
	int max = sbx_proxy_max_connections();
	size_t n = 0;

	buf[0] = '\0';
	if (c->net_idle)
		n += (size_t)snprintf(buf + n, len - n, "; %llu without a request (closed idle)",
				      (unsigned long long)c->net_idle);
	if (c->net_evicted && n < len)
		n += (size_t)snprintf(buf + n, len - n, "; %llu closed to make room (%d at once)",
				      (unsigned long long)c->net_evicted, max);
	if (c->net_refused && n < len)
		snprintf(buf + n, len - n, "; %llu refused (503: %d at once, all busy)",
			 (unsigned long long)c->net_refused, max);
	return buf;
}

void run_human(const json_t *ev, void *data)
{
	struct run_ctx *c = data;
	const char *type = jstr(ev, "event");
	char u[256];

	if (!strcmp(type, "start")) {
		sbx_errorf("sandbox %s (profile %s)", jstr(ev, "id"), jstr(ev, "profile"));
	} else if (!strcmp(type, "policy")) {
		human_policy(ev);
	} else if (!strcmp(type, "limits")) {
		sbx_errorf("limits: %s", jstr(ev, "summary"));
	} else if (!strcmp(type, "phase")) {
		size_t n = strlen(c->phases);

		snprintf(c->phases + n, sizeof(c->phases) - n, "%s%s %.1f ms", n ? ", " : "",
			 jstr(ev, "name"), json_number_value(json_object_get(ev, "ms")));
		if (!strcmp(jstr(ev, "name"), "exec"))
			sbx_errorf("started in %s", c->phases);
	} else if (!strcmp(type, "warning")) {
		sbx_errorf("warning: %s", jstr(ev, "message"));
	} else if (!strcmp(type, "signal")) {
		const char *n = jstr(ev, "name");
		bool stop = !strcmp(n, "INT") || !strcmp(n, "TERM") || !strcmp(n, "HUP") ||
			    !strcmp(n, "QUIT");
		json_t *ms = json_object_get(ev, "stop_timeout_ms");

		if (stop && json_is_integer(ms) && !c->stop_said) {
			c->stop_said = true;
			sbx_errorf(
			    "forwarded SIG%s to the command; the jail is killed if it has not "
			    "ended in %s (--stop-timeout), or at once on a second Ctrl-C or "
			    "SIGTERM",
			    n, duration_text((uint64_t)json_integer_value(ms)));
		} else {
			sbx_errorf("forwarded SIG%s to the command", n);
		}
	} else if (!strcmp(type, "stop-kill")) {
		sbx_errorf("the command had not ended %s after SIG%s: killing the jail (SIGKILL)",
			   duration_text((uint64_t)json_integer_value(
			       json_object_get(ev, "stop_timeout_ms"))),
			   jstr(ev, "name"));
	} else if (!strcmp(type, "second-signal")) {
		sbx_errorf("a second SIG%s: killing the jail now (SIGKILL)", jstr(ev, "name"));
	} else if (!strcmp(type, "timeout")) {
		sbx_errorf("time limit reached: SIGTERM sent, SIGKILL in %d ms",
			   (int)json_integer_value(json_object_get(ev, "grace_ms")));
	} else if (!strcmp(type, "net")) {
		const char *res = jstr(ev, "result");
		json_t *a = json_object_get(ev, "allowed");

		bool failed = json_is_true(a) && !strcmp(res, "failed");

		sbx_errorf("net: %s %s:%d (%s%s)",
			   !json_is_true(a) ? "DENIED"
			   : failed	    ? "FAILED"
					    : "allowed",
			   jstr(ev, "host"), (int)json_integer_value(json_object_get(ev, "port")),
			   failed ? "allowed, but " : "", jstr(ev, "reason"));
	} else if (!strcmp(type, "seccomp")) {
		const char *args = jstr(ev, "args");

		int n = (int)json_integer_value(json_object_get(ev, "count"));

		sbx_errorf("seccomp: blocked %s%s%s%s (%d time%s, errno %s)", jstr(ev, "syscall"),
			   *args ? "(" : "", args, *args ? ")" : "", n, n == 1 ? "" : "s",
			   jstr(ev, "errno"));
	} else if (!strcmp(type, "exit")) {
		human_exit(ev);
		if (c->cfg.net == SBX_NET_PROXY)
			sbx_errorf(
			    "network: %llu connections allowed, %llu failed, %llu denied%s",
			    (unsigned long long)c->net_allowed, (unsigned long long)c->net_failed,
			    (unsigned long long)c->net_denied, proxy_unserved(c, u, sizeof(u)));
	} else if (!strcmp(type, "kept")) {
		sbx_errorf("kept sandbox %s (%s): sbx inspect %s; sbx destroy %s", jstr(ev, "id"),
			   jstr(ev, "reason"), jstr(ev, "id"), jstr(ev, "id"));
	} else if (!strcmp(type, "removed")) {
		sbx_errorf("removed sandbox %s (%s)", jstr(ev, "id"), jstr(ev, "reason"));
	}
}

/* ---- policy answers ---- */

static json_t *user_json(struct run_ctx *c)
{
	const struct sbx_jail_ids *ids = &c->ids;
	char s[400];

	char map[160];
	int n;

	bool root_on_host = ids->host_uid == 0 && !(ids->nested && ids->parent_uid != 0);
	char host[96];

	/* In a container, "the host" is the container; say who that is. */
	if (ids->nested && ids->host_uid == 0)
		snprintf(host, sizeof(host),
			 "uid 0 of the user namespace sbx runs in (%s: uid %u one level up)",
			 root_on_host ? "ROOT" : "not root", ids->parent_uid);
	else
		snprintf(host, sizeof(host), "uid %u on the host (%s)", ids->host_uid,
			 root_on_host ? "ROOT" : "not root");
	if (ids->uid == 0)
		n = snprintf(s, sizeof(s), "root inside, %s", host);
	else
		n = snprintf(s, sizeof(s), "uid %u inside, %s", ids->uid, host);
	/* Which mapping: the other ids of the jail are someone on the host too. */
	if (ids->range)
		snprintf(map, sizeof(map), "ids 0-%u are host %u-%u%s", SBX_JAIL_ID_COUNT - 1,
			 ids->base, ids->base + SBX_JAIL_ID_COUNT - 1,
			 ids->base != SBX_JAIL_HOST_BASE ? " (above every /etc/subuid range)" : "");
	else if (ids->subid)
		snprintf(map, sizeof(map),
			 "its other ids are the subordinate range %u-%u of /etc/subuid (newuidmap)",
			 ids->sub.ustart, ids->sub.ustart + ids->sub.ucount - 1);
	else
		snprintf(map, sizeof(map), "one id mapped");
	if (n > 0 && (size_t)n < sizeof(s))
		snprintf(s + n, sizeof(s) - (size_t)n, "; %s", map);
	return json_pack("{s:i, s:i, s:i, s:i, s:b, s:b, s:s, s:s, s:s}", "uid", (int)ids->uid,
			 "gid", (int)ids->gid, "host_uid", (int)ids->host_uid, "host_gid",
			 (int)ids->host_gid, "root_inside", ids->uid == 0, "root_on_host",
			 root_on_host, "mapping",
			 ids->range   ? "range"
			 : ids->subid ? "subordinate"
				      : "one",
			 "mapping_summary", map, "summary", s);
}

static json_t *network_json(struct run_ctx *c)
{
	static const char *const what[] = {
	    "none (own network namespace: its own lo, up; nothing outside)",
	    "loopback (own network namespace: its own lo, up; nothing outside)",
	    "proxy (only the allowlist proxy)",
	    "HOST NETWORK (the jail shares the host's network)",
	};
	json_t *allow = json_array();

	for (size_t i = 0; i < c->cfg.allow.n; i++)
		json_array_append_new(allow, json_string(c->cfg.allow.v[i]));
	return json_pack("{s:s, s:o, s:n, s:s}", "mode", sbx_net_mode_name(c->cfg.net), "allow",
			 allow, "proxy", "summary", what[c->cfg.net]);
}

static bool secret_present(const struct run_ctx *c, const char *name)
{
	for (size_t i = 0; i < c->secrets.n; i++)
		if (strcmp(c->secrets.v[i].name, name) == 0)
			return true;
	return false;
}

/* What went in, by name and how; then the optional ones that were absent. */
static void secrets_summary(struct run_ctx *c, char *sum, size_t len)
{
	size_t n = 0, absent = 0;
	int w;

	sum[0] = '\0';
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < c->cfg.n_secrets; i++) {
			const struct sbx_secret *s = &c->cfg.secrets[i];
			bool in = secret_present(c, s->name);

			if (in != (pass == 0))
				continue;
			if (pass == 0)
				w = snprintf(sum + n, len - n, "%s%s (%s)", n ? ", " : "", s->name,
					     s->inject == SBX_SECRET_AS_FILE ? "file /run/secrets/"
									     : "env var");
			else
				w = snprintf(sum + n, len - n, "%s%s",
					     absent++ ? ", " : "; absent (optional): ", s->name);
			if (w > 0 && (size_t)w < len - n)
				n += (size_t)w;
		}
		if (pass == 0 && n == 0)
			n = (size_t)snprintf(sum, len, "none");
	}
}

/* policy.filesystem.layers: every overlay whose upper is in the sandbox. */
static json_t *layers_json(struct run_ctx *c)
{
	const char *pre = c->disk_mounted || c->disk_memory ? "disk/" : "";
	json_t *a = json_array();

	if (c->rootfs_dir && c->cfg.rootfs_writable) {
		char *up = sbx_xasprintf("%supper", pre);

		json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "target", "/", "upper", up,
						   "lower", c->rootfs_dir));
		free(up);
	}
	for (size_t i = 0; i < c->cfg.n_mounts; i++) {
		const struct sbx_mount *m = &c->cfg.mounts[i];
		char *up;

		if (m->kind != SBX_MNT_OVERLAY)
			continue;
		up = sbx_xasprintf("%soverlays/%zu/upper", pre, i);
		json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "target", m->dst, "upper", up,
						   "lower", m->src));
		free(up);
	}
	return a;
}

static json_t *fs_json(struct run_ctx *c)
{
	json_t *shared = json_array();
	json_t *mounts = json_array();
	char sum[1024];
	size_t n;

	if (!c->rootfs_dir)
		n = (size_t)snprintf(sum, sizeof(sum), "host root read-only");
	else
		n = (size_t)snprintf(sum, sizeof(sum), "image %s, %s", c->cfg.rootfs,
				     c->cfg.rootfs_writable
					 ? "writable layer private to this sandbox"
					 : "read-only");
	for (size_t i = 0; i < c->cfg.n_mounts; i++) {
		const struct sbx_mount *m = &c->cfg.mounts[i];
		const char *k = sbx_mount_kind_name(m->kind);
		struct stat st;

		/* An optional source that is not there went in as nothing. */
		if (m->optional && m->src && stat(m->src, &st) < 0)
			continue;
		uid_t owner = c->jail.mount_owner ? c->jail.mount_owner[i] : (uid_t)-1;
		json_t *mj = json_pack("{s:s, s:s?, s:s}", "kind", k, "src", m->src, "dst", m->dst);

		/* As root, a bind idmapped to its owner: the jail writes as them;
		 * a root-owned one is read-only. */
		if (owner == 0)
			json_object_set_new(mj, "read_only", json_string("root owns it"));
		else if (owner != (uid_t)-1)
			json_object_set_new(mj, "written_as", json_integer(owner));
		json_array_append_new(mounts, mj);
		if (m->kind == SBX_MNT_BIND || m->kind == SBX_MNT_RO_BIND) {
			char as[64] = "";
			char *s;

			if (owner == 0)
				snprintf(as, sizeof(as), "; read-only: root owns it");
			else if (owner != (uid_t)-1)
				snprintf(as, sizeof(as), ", written as its owner uid %u", owner);
			s = sbx_xasprintf("%s (%s%s)", m->src,
					  m->kind == SBX_MNT_BIND ? "bind rw" : "bind ro", as);
			json_array_append_new(shared, json_string(s));
			if (n < sizeof(sum))
				n += (size_t)snprintf(sum + n, sizeof(sum) - n, "; shared: %s", s);
			free(s);
		} else if (m->kind == SBX_MNT_OVERLAY && n < sizeof(sum)) {
			n += (size_t)snprintf(sum + n, sizeof(sum) - n, "; %s copy-on-write",
					      m->dst);
		}
	}
	if (json_array_size(shared) == 0 && n < sizeof(sum))
		snprintf(sum + n, sizeof(sum) - n, "; nothing shared with the host read-write");
	return json_pack("{s:s, s:s?, s:o, s:o, s:s, s:o, s:b, s:s}", "writable_layer",
			 c->rootfs_dir && c->cfg.rootfs_writable ? "private" : "none", "upper",
			 c->rootfs_dir && c->cfg.rootfs_writable
			     ? (c->disk_mounted || c->disk_memory ? "disk/upper" : "upper")
			     : NULL,
			 "shared", shared, "mounts", mounts, "summary", sum, "layers",
			 layers_json(c), "layers_in_memory", c->disk_memory, "sysfs",
			 c->cfg.sysfs == SBX_SYSFS_NONE ? "none" : "own");
}

static json_t *caps_json(const struct sbx_config *cfg)
{
	json_t *a = json_array();

	for (int i = 0; i < 64; i++)
		if (cfg->caps_keep & (1ULL << i))
			json_array_append_new(a, json_integer(i));
	return a;
}

void run_log_policy(struct run_ctx *c)
{
	char sec[512], lim[512];
	json_t *p;

	p = json_pack("{s:o, s:o, s:o, s:o, s:s, s:o, s:s, s:o, s:b}", "user", user_json(c),
		      "network", network_json(c), "secrets",
		      sbx_secrets_describe(&c->cfg, &c->secrets), "filesystem", fs_json(c),
		      "persist", sbx_persist_name(c->cfg.persist), "limits",
		      sbx_limits_json(&c->cfg, &c->cg), "seccomp", c->cfg.seccomp, "capabilities",
		      caps_json(&c->cfg), "no_new_privs", c->cfg.no_new_privs);
	secrets_summary(c, sec, sizeof(sec));
	json_object_set(c->sb.record, "policy", p);
	json_object_set_new(p, "secrets_summary", json_string(sec));
	sbx_log_event(&c->log, "policy", p);
	sbx_limits_describe(&c->cfg, &c->cg, lim, sizeof(lim));
	sbx_log_event(&c->log, "limits", json_pack("{s:s}", "summary", lim));
	if (c->cg.why[0])
		sbx_log_event(&c->log, "warning", json_pack("{s:s}", "message", c->cg.why));
	if (c->layer_note)
		sbx_log_event(&c->log, "warning", json_pack("{s:s}", "message", c->layer_note));
}

/* ---- record ---- */

static json_t *argv_json(char **argv)
{
	json_t *a = json_array();

	for (size_t i = 0; argv[i]; i++)
		json_array_append_new(a, sbx_json_string_lossy(argv[i], strlen(argv[i])));
	return a;
}

static json_t *profile_json(struct run_ctx *c)
{
	json_t *src = json_array();
	char *ini = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&ini, &len);

	if (f) {
		sbx_profile_write(&c->cfg, f);
		fclose(f);
	}
	for (size_t i = 0; i < c->cfg.sources.n; i++)
		json_array_append_new(src, json_string(c->cfg.sources.v[i]));
	json_t *p = json_pack("{s:s?, s:o, s:o}", "name", c->cfg.profile_name, "sources", src,
			      "ini", ini ? sbx_json_string_lossy(ini, len) : json_null());
	free(ini);
	return p;
}

void run_record_start(struct run_ctx *c)
{
	json_t *r = c->sb.record;
	uint64_t start;

	json_object_set_new(r, "state", json_string("running"));
	json_object_set_new(r, "supervisor_pid", json_integer(getpid()));
	if (sbx_proc_starttime(getpid(), &start) == 0)
		json_object_set_new(r, "supervisor_start", json_integer((json_int_t)start));
	json_object_set_new(r, "command", argv_json(c->args.argv));
	json_object_set_new(r, "workdir",
			    c->cfg.workdir ? json_string(c->cfg.workdir)
					   : sbx_json_string_lossy(c->cwd ? c->cwd : "/",
								   strlen(c->cwd ? c->cwd : "/")));
	json_object_set_new(r, "profile", profile_json(c));
	json_object_set_new(r, "rootfs",
			    json_pack("{s:s, s:s?, s:s?, s:b}", "spec",
				      c->cfg.rootfs ? c->cfg.rootfs : "host", "dir", c->rootfs_dir,
				      "sha256", c->img.sha256[0] ? c->img.sha256 : NULL, "cached",
				      c->img.cached));
	json_object_set_new(r, "cgroup", sbx_cgroup_json(&c->cg));
	json_object_set_new(r, "network_events", json_array());
	json_object_set_new(r, "seccomp_events", json_array());
	sbx_log_event(&c->log, "start",
		      json_pack("{s:s, s:o, s:s?}", "id", c->sb.id, "command",
				argv_json(c->args.argv), "profile", c->cfg.profile_name));
}

/*
 * The running record is saved (tmp file, fsync, rename, fsync) by a thread
 * while the jail starts and runs: the disk's latency is not added to the
 * start-up.  The thread works on a copy; run_record_join() waits for it
 * before the record is touched again.
 */
static void *save_thread(void *arg)
{
	struct run_ctx *c = arg;

	c->saver_rc = sbx_sandbox_save(&c->saver_sb, &c->saver_err);
	sbx_fault_point("after-record");
	return NULL;
}

void run_record_save_async(struct run_ctx *c)
{
	c->saver_sb = c->sb;
	c->saver_sb.record = json_deep_copy(c->sb.record);
	c->saver_sb.name = NULL;
	c->saver_sb.dir = NULL;
	if (pthread_create(&c->saver, NULL, save_thread, c) == 0) {
		c->saving = true;
		return;
	}
	c->saver_rc = sbx_sandbox_save(&c->saver_sb, &c->saver_err);
	json_decref(c->saver_sb.record);
	c->saver_sb.record = NULL;
}

void run_record_join(struct run_ctx *c)
{
	if (c->saving) {
		pthread_join(c->saver, NULL);
		c->saving = false;
		json_decref(c->saver_sb.record);
		c->saver_sb.record = NULL;
	}
	if (c->saver_rc < 0) {
		sbx_print_err(&c->saver_err);
		c->saver_rc = 0;
	}
}

static void phase(struct run_ctx *c, json_t *t, const char *name, double ms)
{
	json_object_set_new(t, name, json_real(ms));
	sbx_log_event(&c->log, "phase", json_pack("{s:s, s:f}", "name", name, "ms", ms));
}

void run_log_timings(struct run_ctx *c)
{
	const struct sbx_jail *j = &c->jail;
	json_t *t = json_object();

	phase(c, t, "image", c->t_image);
	phase(c, t, "disk", c->t_disk);
	phase(c, t, "namespaces", j->t_namespaces);
	phase(c, t, "mounts", j->t_mounts);
	phase(c, t, "seccomp", j->t_seccomp);
	phase(c, t, "exec", j->t_exec);
	json_object_set_new(t, "total",
			    json_real(c->t_image + c->t_disk + j->t_namespaces + j->t_mounts +
				      j->t_seccomp + j->t_exec));
	json_object_set_new(c->sb.record, "timings_ms", t);
}

void run_log_warn(struct run_ctx *c, const char *msg)
{
	sbx_log_event(&c->log, "warning", json_pack("{s:s}", "message", msg));
}

void run_log_warnings(struct run_ctx *c)
{
	for (size_t off = 0; off < c->jail.warnings_len;) {
		const char *w = c->jail.warnings + off;

		run_log_warn(c, w);
		off += strlen(w) + 1;
	}
}

void run_event_cb(const char *what, int value, void *data)
{
	struct run_ctx *c = data;

	if (!strcmp(what, "signal") || !strcmp(what, "second-signal") || !strcmp(what, "stop-kill"))
		sbx_log_event(&c->log, what,
			      json_pack("{s:i, s:s, s:o}", "signal", value, "name",
					sigabbrev_np(value) ? sigabbrev_np(value) : "?",
					"stop_timeout_ms",
					c->cfg.stop_timeout_ms == SBX_UNSET
					    ? json_null()
					    : json_integer((json_int_t)c->cfg.stop_timeout_ms)));
	else if (!strcmp(what, "timeout"))
		sbx_log_event(&c->log, "timeout", json_pack("{s:i}", "grace_ms", 2000));
	else
		sbx_log_event(&c->log, what, json_pack("{s:i}", "signal", value));
}

static json_t *exit_json(struct run_ctx *c)
{
	const struct sbx_jail_result *r = &c->res;
	bool sig = r->have_status && WIFSIGNALED(r->status);

	return json_pack(
	    "{s:i, s:s, s:s?, s:o, s:o, s:o, s:o}", "status", c->exit_code, "reason", c->reason,
	    "stop",
	    r->stopped == SBX_STOP_GRACE    ? "stop-timeout"
	    : r->stopped == SBX_STOP_SECOND ? "second-signal"
					    : NULL,
	    "exec_error", c->exec_error ? json_string(c->exec_error) : json_null(), "code",
	    r->have_status && WIFEXITED(r->status) ? json_integer(WEXITSTATUS(r->status))
						   : json_null(),
	    "signal",
	    sig ? json_integer(WTERMSIG(r->status))
		: (!strcmp(c->reason, "oom") ||
			   (!r->have_status && !c->error && strcmp(c->reason, "timeout"))
		       ? json_integer(SIGKILL)
		       : json_null()),
	    "error", c->error ? json_string(c->error) : json_null());
}

static json_t *resources_json(struct run_ctx *c)
{
	uint64_t cpu = c->usage.cpu_usec ? c->usage.cpu_usec : c->res.cpu_usec;
	uint64_t mem = c->usage.mem_peak ? c->usage.mem_peak : c->res.maxrss;

	return json_pack("{s:f, s:f, s:I, s:I, s:I, s:b}", "wall_ms", c->res.wall_ms, "cpu_ms",
			 (double)cpu / 1000.0, "mem_peak", (json_int_t)mem, "pids_peak",
			 (json_int_t)c->usage.pids_peak, "output_bytes",
			 (json_int_t)c->res.output_bytes, "output_truncated",
			 c->res.output_truncated);
}

void run_record_finish(struct run_ctx *c)
{
	json_t *r = c->sb.record;
	char ts[40];
	struct sbx_err e = {0};
	json_t *x = exit_json(c);
	json_t *res = resources_json(c);

	if (c->error)
		sbx_log_event(&c->log, "error", json_pack("{s:s}", "message", c->error));
	json_object_set_new(r, "state", json_string("exited"));
	json_object_set_new(r, "ended", json_string(sbx_rfc3339_now(ts, sizeof(ts))));
	json_object_set(r, "exit", x);
	json_object_set(r, "resources", res);
	json_object_set_new(r, "kept", json_boolean(c->kept));
	json_object_set_new(r, "keep_reason", json_string(c->keep_reason ? c->keep_reason : ""));
	sbx_log_event(&c->log, "exit", json_pack("{s:o, s:o}", "exit", x, "resources", res));
	sbx_log_event(&c->log, c->kept ? "kept" : "removed",
		      json_pack("{s:s, s:s}", "id", c->sb.id, "reason",
				c->keep_reason ? c->keep_reason : ""));
	if (c->kept && sbx_sandbox_save(&c->sb, &e) < 0)
		sbx_print_err(&e);
}
