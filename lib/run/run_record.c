/* SPDX-License-Identifier: MIT */
/*
 * lib/run/run_record.c - what a run says about itself: its record (struct
 * sbx_record, lib/state/record.h, saved as record.json) and its run-log
 * events (log.jsonl, --log-json, and the caller's human lines).
 */
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "fault.h"
#include "proc.h"
#include "profile.h"
#include "run_int.h"

/* ---- policy answers ---- */

static void user_policy(struct sbx_run *c, struct sbx_record_user *u)
{
	const struct sbx_jail_ids *ids = &c->ids;
	char s[400], map[160], host[96];
	int n;
	bool root_on_host = ids->host_uid == 0 && !(ids->nested && ids->parent_uid != 0);

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
	else if (c->cfg->sudo_user)
		n = snprintf(s, sizeof(s),
			     "uid %u inside, as %s, who ran sudo in a directory of theirs (-u root "
			     "runs as root), %s",
			     ids->uid, c->cfg->sudo_user, host);
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
	u->uid = (int)ids->uid;
	/* sudo's caller was there and the run stayed root's: why */
	u->summary = c->cfg->sudo_declined ? sbx_xasprintf("%s; %s", s, c->cfg->sudo_declined)
					   : sbx_xstrdup(s);
	u->gid = (int)ids->gid;
	u->host_uid = (int)ids->host_uid;
	u->host_gid = (int)ids->host_gid;
	u->root_inside = ids->uid == 0;
	u->root_on_host = root_on_host;
	u->mapping = sbx_xstrdup(ids->range ? "range" : ids->subid ? "subordinate" : "one");
	u->mapping_summary = sbx_xstrdup(map);
	u->sudo_user = c->cfg->sudo_user ? sbx_xstrdup(c->cfg->sudo_user) : NULL;
}

static void network_policy(struct sbx_run *c, struct sbx_record_network *n)
{
	static const char *const what[] = {
	    "none (own network namespace: its own lo, up; nothing outside)",
	    "loopback (own network namespace: its own lo, up; nothing outside)",
	    "proxy (only the allowlist proxy: through the proxy variables, or captured)",
	    "HOST NETWORK (the jail shares the host's network)",
	};

	n->mode = sbx_xstrdup(sbx_net_mode_name(c->cfg->net));
	for (size_t i = 0; i < c->cfg->allow.n; i++)
		sbx_strv_push(&n->allow, c->cfg->allow.v[i]);
	n->summary = sbx_xstrdup(what[c->cfg->net]);
}

static bool secret_present(const struct sbx_run *c, const char *name)
{
	for (size_t i = 0; i < c->secrets.n; i++)
		if (strcmp(c->secrets.v[i].name, name) == 0)
			return true;
	return false;
}

/* What went in, by name and how; then the optional ones that were absent. */
static void secrets_summary(struct sbx_run *c, char *sum, size_t len)
{
	size_t n = 0, absent = 0;
	struct sbx_strv unset = {0}; /* host variables of the absent ones */
	const char *sudo = getenv("SUDO_UID");
	int w;

	sum[0] = '\0';
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < c->cfg->n_secrets; i++) {
			const struct sbx_secret *s = &c->cfg->secrets[i];
			bool in = secret_present(c, s->name);

			if (in != (pass == 0))
				continue;
			_cleanup_free_ char *hosts = sbx_strv_join(&s->inject_hosts, ", ");

			if (pass == 0 && s->inject_hosts.n)
				w = snprintf(
				    sum + n, len - n,
				    "%s%s (injected by the proxy for %s; the jail's %s holds "
				    "a placeholder)",
				    n ? ", " : "", s->name, hosts,
				    s->inject == SBX_SECRET_AS_FILE ? "file /run/secrets/"
								    : "env var");
			else if (pass == 0)
				w = snprintf(sum + n, len - n, "%s%s (%s)", n ? ", " : "", s->name,
					     s->inject == SBX_SECRET_AS_FILE ? "file /run/secrets/"
									     : "env var");
			else
				w = snprintf(sum + n, len - n, "%s%s",
					     absent++ ? ", " : "; absent (optional): ", s->name);
			if (pass == 1 && s->source == SBX_SECRET_FROM_ENV && s->ref)
				sbx_strv_push(&unset, s->ref);
			if (w > 0 && (size_t)w < len - n)
				n += (size_t)w;
		}
		if (pass == 0 && n == 0)
			n = (size_t)snprintf(sum, len, "none");
		/* sudo resets the environment: say how to pass the variable. */
		if (pass == 1 && unset.n && getuid() == 0 && sudo && *sudo && n < len) {
			_cleanup_free_ char *vars = sbx_strv_join(&unset, ",");

			w = snprintf(sum + n, len - n,
				     " (sudo resets the environment: sudo --preserve-env=%s sbx "
				     "... passes %s)",
				     vars, unset.n > 1 ? "them" : "it");
			if (w > 0 && (size_t)w < len - n)
				n += (size_t)w;
		}
		if (pass == 0 && c->n_inject && n < len)
			n += (size_t)snprintf(
			    sum + n, len - n,
			    "; the proxy's CA for that TLS is this sandbox's own, %s",
			    c->ca_ahead ? "made ahead by an earlier run's purger "
					  "(it waited in the kernel keyring, "
					  "never on disk)"
					: "made at its start");
		n = n < len ? n : len - 1;
	}
	sbx_strv_free(&unset);
}

static void add_layer(struct sbx_record_filesystem *fs, const char *target, char *upper,
		      const char *lower)
{
	fs->layers = sbx_xrealloc(fs->layers, (fs->n_layers + 1) * sizeof(*fs->layers));
	fs->layers[fs->n_layers++] = (struct sbx_record_layer){
	    .target = sbx_xstrdup(target), .upper = upper, .lower = sbx_xstrdup(lower)};
}

/* policy.filesystem.layers: every overlay whose upper is in the sandbox. */
static void layers_policy(struct sbx_run *c, struct sbx_record_filesystem *fs)
{
	const char *pre = c->disk_mounted || c->disk_memory ? "disk/" : "";

	fs->has_layers = true;
	if (c->rootfs_dir && c->cfg->rootfs_writable)
		add_layer(fs, "/", sbx_xasprintf("%supper", pre), c->rootfs_dir);
	for (size_t i = 0; i < c->cfg->n_mounts; i++) {
		const struct sbx_mount *m = &c->cfg->mounts[i];

		if (m->kind == SBX_MNT_OVERLAY)
			add_layer(fs, m->dst, sbx_xasprintf("%soverlays/%zu/upper", pre, i),
				  m->src);
	}
}

static void shared_mount(struct sbx_record_filesystem *fs, const struct sbx_mount *m, uid_t owner,
			 const char *read_only, char *sum, size_t len, size_t *n)
{
	_cleanup_free_ char *as = NULL;
	_cleanup_free_ char *git = NULL;
	/* the summary is text to read: a name's newline or bytes that are not
	 * UTF-8 as \n, \xNN (the mounts keep the path itself) */
	_cleanup_free_ char *src = sbx_escape_controls(m->src);
	char *s;

	if (read_only)
		as = sbx_xasprintf("; read-only: %s", read_only);
	else if (owner != (uid_t)-1)
		as = sbx_xasprintf(", written as its owner uid %u", owner);
	/* sbx_config_protect_git: said with what lets the command write it */
	if (m->git_ro && !read_only) {
		_cleanup_free_ char *named = NULL;

		if (m->git_named.n) {
			_cleanup_free_ char *list = sbx_strv_join(&m->git_named, ", ");

			named = sbx_escape_display(list);
		}
		git = sbx_xasprintf(
		    "; its .git read-only%s%s: git would run its hooks and config on "
		    "the host (--bind %s/.git to let the command write %s)",
		    named ? ", and what git reaches from it: " : "", named ? named : "",
		    strcmp(m->src, "/") == 0 ? "" : src, named ? "them" : "it");
	}
	s = sbx_xasprintf("%s (%s%s%s)", src, m->kind == SBX_MNT_BIND ? "bind rw" : "bind ro",
			  as ? as : "", git ? git : "");
	if (*n < len)
		*n += (size_t)snprintf(sum + *n, len - *n, "; shared: %s", s);
	sbx_strv_push_take(&fs->shared, s);
}

static void fs_policy(struct sbx_run *c, struct sbx_record_filesystem *fs)
{
	char sum[1024];
	size_t n;

	if (!c->rootfs_dir)
		n = (size_t)snprintf(sum, sizeof(sum), "host root read-only");
	else
		n = (size_t)snprintf(sum, sizeof(sum), "image %s, %s", c->cfg->rootfs,
				     c->cfg->rootfs_writable
					 ? "writable layer private to this sandbox"
					 : "read-only");
	fs->mounts = sbx_xcalloc(c->cfg->n_mounts + 1, sizeof(*fs->mounts));
	for (size_t i = 0; i < c->cfg->n_mounts; i++) {
		const struct sbx_mount *m = &c->cfg->mounts[i];
		struct stat st;

		/* An optional source that is not there went in as nothing.  A
		 * read-write one is said: what the command writes at its place
		 * (an agent's login, under a copy-on-write home) is not kept. */
		_cleanup_free_ char *shown = sbx_escape_controls(m->src ? m->src : m->dst);
		_cleanup_free_ char *dst = sbx_escape_controls(m->dst);

		if (m->optional && m->src && stat(m->src, &st) < 0) {
			if (m->kind == SBX_MNT_BIND && n < sizeof(sum))
				n += (size_t)snprintf(
				    sum + n, sizeof(sum) - n,
				    "; not bound: %s is not on the host (what the "
				    "command writes there is not kept: create it on "
				    "the host first to keep it)",
				    shown);
			continue;
		}
		uid_t owner = c->jail.mount_owner ? c->jail.mount_owner[i] : (uid_t)-1;
		const char *ro = c->jail.mount_ro ? c->jail.mount_ro[i] : NULL;

		/* As root, a bind idmapped to its owner: the jail writes as them;
		 * a root-owned one is read-only. */
		fs->mounts[fs->n_mounts++] = (struct sbx_record_mount){
		    .kind = sbx_xstrdup(sbx_mount_kind_name(m->kind)),
		    .src = m->src ? sbx_xstrdup(m->src) : NULL,
		    .dst = sbx_xstrdup(m->dst),
		    .read_only = ro ? sbx_xstrdup(ro) : NULL,
		    .written_as = !ro && owner != (uid_t)-1 ? (int64_t)owner : -1,
		    .git_ro = m->git_ro && !ro,
		};
		if (m->git_ro && !ro)
			for (size_t k = 0; k < m->git_named.n; k++)
				sbx_strv_push(&fs->mounts[fs->n_mounts - 1].git_named,
					      m->git_named.v[k]);
		if (m->kind == SBX_MNT_BIND || m->kind == SBX_MNT_RO_BIND)
			shared_mount(fs, m, owner, ro, sum, sizeof(sum), &n);
		else if (m->kind == SBX_MNT_OVERLAY && n < sizeof(sum))
			n += (size_t)snprintf(sum + n, sizeof(sum) - n, "; %s copy-on-write", dst);
	}
	if (fs->shared.n == 0 && n < sizeof(sum))
		snprintf(sum + n, sizeof(sum) - n, "; nothing shared with the host read-write");
	fs->writable_layer =
	    sbx_xstrdup(c->rootfs_dir && c->cfg->rootfs_writable ? "private" : "none");
	if (c->rootfs_dir && c->cfg->rootfs_writable)
		fs->upper = sbx_xstrdup(c->disk_mounted || c->disk_memory ? "disk/upper" : "upper");
	fs->summary = sbx_xstrdup(sum);
	layers_policy(c, fs);
	fs->layers_in_memory = c->disk_memory;
	fs->sysfs = sbx_xstrdup(c->cfg->sysfs == SBX_SYSFS_NONE ? "none" : "own");
}

/* What happens to the sandbox at the end: --rm and --keep decide over the
 * profile's persist (decide_keep), and the run log says so. */
static void persist_policy(const struct sbx_run *c, struct sbx_record_policy *p)
{
	const char *prof = sbx_persist_name(c->cfg->persist);
	const char *by = c->opt->rm ? "--rm" : c->opt->keep ? "--keep" : NULL;
	const char *eff = c->opt->rm ? "never" : c->opt->keep ? "always" : prof;

	p->persist = sbx_xstrdup(eff);
	if (!by)
		p->persist_summary = sbx_xstrdup(eff);
	else if (strcmp(eff, prof))
		p->persist_summary =
		    sbx_xasprintf("%s (%s, over the profile's persist = %s)", eff, by, prof);
	else
		p->persist_summary = sbx_xasprintf("%s (%s)", eff, by);
}

void sbx_run_log_policy(struct sbx_run *c)
{
	struct sbx_record_policy *p = &c->sb.rec.policy;
	char sec[1024], lim[512];

	p->set = true;
	user_policy(c, &p->user);
	network_policy(c, &p->network);
	p->secrets = sbx_secrets_describe(c->cfg, &c->secrets);
	fs_policy(c, &p->filesystem);
	persist_policy(c, p);
	p->limits = sbx_limits_json(c->cfg, &c->cg);
	p->seccomp = sbx_xstrdup(c->cfg->seccomp);
	p->capabilities = c->cfg->caps_keep;
	p->no_new_privs = c->cfg->no_new_privs;
	secrets_summary(c, sec, sizeof(sec));
	p->secrets_summary = sbx_xstrdup(sec);
	sbx_log_event(&c->log, "policy", sbx_record_policy_json(p));
	sbx_limits_describe(c->cfg, &c->cg, lim, sizeof(lim));
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

static void profile_record(struct sbx_run *c)
{
	char *ini = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&ini, &len);

	if (f) {
		sbx_profile_write(c->cfg, f);
		fclose(f);
	}
	c->sb.rec.profile.set = true;
	c->sb.rec.profile.name = c->cfg->profile_name ? sbx_xstrdup(c->cfg->profile_name) : NULL;
	for (size_t i = 0; i < c->cfg->sources.n; i++)
		sbx_strv_push(&c->sb.rec.profile.sources, c->cfg->sources.v[i]);
	c->sb.rec.profile.ini = ini ? sbx_xstrndup(ini, len) : NULL;
	free(ini);
}

void sbx_run_record_start(struct sbx_run *c)
{
	struct sbx_record *r = &c->sb.rec;
	uint64_t start;

	free(r->state);
	r->state = sbx_xstrdup("running");
	r->supervisor_pid = getpid();
	if (sbx_proc_starttime(getpid(), &start) == 0)
		r->supervisor_start = start;
	r->has_command = true;
	for (size_t i = 0; c->opt->argv[i]; i++)
		sbx_strv_push(&r->command, c->opt->argv[i]);
	r->workdir = sbx_xstrdup(c->cfg->workdir ? c->cfg->workdir : c->cwd ? c->cwd : "/");
	profile_record(c);
	r->rootfs.set = true;
	r->rootfs.spec = sbx_xstrdup(c->cfg->rootfs ? c->cfg->rootfs : "host");
	r->rootfs.dir = c->rootfs_dir ? sbx_xstrdup(c->rootfs_dir) : NULL;
	r->rootfs.sha256 = c->img.sha256[0] ? sbx_xstrdup(c->img.sha256) : NULL;
	r->rootfs.cached = c->img.cached;
	r->cgroup = sbx_cgroup_json(&c->cg);
	r->network_events = json_array();
	r->seccomp_events = json_array();
	sbx_log_event(&c->log, "start",
		      json_pack("{s:s, s:s?, s:o, s:s?, s:{s:s, s:s?, s:b}}", "id", c->sb.id,
				"name", r->name, "command", argv_json(c->opt->argv), "profile",
				c->cfg->profile_name, "rootfs", "spec", r->rootfs.spec, "sha256",
				r->rootfs.sha256, "cached", r->rootfs.cached));
}

/*
 * The running record is saved (tmp file, fsync, rename, fsync dir) by a
 * thread while the jail starts and runs: the disk's latency is not added
 * to the start-up.  The thread saves its own JSON of the record;
 * sbx_run_record_join() waits for it before the record is saved again.
 */
static void *save_thread(void *arg)
{
	struct sbx_run *c = arg;

	c->saver_rc = sbx_sandbox_save(&c->saver_sb, &c->saver_err);
	sbx_fault_point("after-record");
	return NULL;
}

void sbx_run_record_save_async(struct sbx_run *c)
{
	c->saver_sb = c->sb;
	sbx_record_init(&c->saver_sb.rec); /* the thread uses dirfd, id and record */
	c->saver_sb.record = sbx_record_to_json(&c->sb.rec);
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

void sbx_run_record_join(struct sbx_run *c)
{
	if (c->saving) {
		pthread_join(c->saver, NULL);
		c->saving = false;
		json_decref(c->saver_sb.record);
		c->saver_sb.record = NULL;
	}
	if (c->saver_rc < 0) {
		sbx_run_say_err(c, &c->saver_err);
		c->saver_rc = 0;
	}
}

static void phase(struct sbx_run *c, double *slot, const char *name, double ms)
{
	*slot = ms;
	sbx_log_event(&c->log, "phase", json_pack("{s:s, s:f}", "name", name, "ms", ms));
}

void sbx_run_log_timings(struct sbx_run *c)
{
	const struct sbx_jail *j = &c->jail;
	struct sbx_record_timings *t = &c->sb.rec.timings;

	t->set = true;
	phase(c, &t->image, "image", c->t_image);
	phase(c, &t->disk, "disk", c->t_disk + j->t_layer_wait);
	phase(c, &t->namespaces, "namespaces", j->t_namespaces);
	phase(c, &t->mounts, "mounts", j->t_mounts);
	phase(c, &t->seccomp, "seccomp", j->t_seccomp);
	phase(c, &t->exec, "exec", j->t_exec);
	t->total = c->t_image + t->disk + j->t_namespaces + j->t_mounts + j->t_seccomp + j->t_exec;
}

void sbx_run_log_warn(struct sbx_run *c, const char *msg)
{
	sbx_log_event(&c->log, "warning", json_pack("{s:s}", "message", msg));
}

void sbx_run_log_warnings(struct sbx_run *c)
{
	for (size_t off = 0; off < c->jail.warnings_len;) {
		const char *w = c->jail.warnings + off;

		sbx_run_log_warn(c, w);
		off += strlen(w) + 1;
	}
}

void sbx_run_event_cb(const char *what, int value, void *data)
{
	struct sbx_run *c = data;

	if (!strcmp(what, "signal") || !strcmp(what, "signal-group") ||
	    !strcmp(what, "second-signal") || !strcmp(what, "stop-kill"))
		sbx_log_event(
		    &c->log, strcmp(what, "signal-group") ? what : "signal",
		    json_pack("{s:i, s:s, s:o, s:s?}", "signal", value, "name",
			      sigabbrev_np(value) ? sigabbrev_np(value) : "?", "stop_timeout_ms",
			      c->cfg->stop_timeout_ms == SBX_UNSET
				  ? json_null()
				  : json_integer((json_int_t)c->cfg->stop_timeout_ms),
			      "to", strcmp(what, "signal-group") ? NULL : "process group"));
	else if (!strcmp(what, "suspend") || !strcmp(what, "suspend-key"))
		sbx_log_event(&c->log, "suspend",
			      json_pack("{s:s, s:i, s:s}", "by",
					strcmp(what, "suspend") ? "terminal" : "command", "signal",
					value, "name",
					sigabbrev_np(value) ? sigabbrev_np(value) : "?"));
	else if (!strcmp(what, "continue"))
		sbx_log_event(&c->log, "continue", NULL);
	else if (!strcmp(what, "timeout"))
		sbx_log_event(&c->log, "timeout", json_pack("{s:i}", "grace_ms", 2000));
	else if (!strcmp(what, "stop-request"))
		sbx_log_event(&c->log, "stop",
			      json_pack("{s:s, s:i, s:s, s:i}", "by", "sbx stop", "signal", SIGTERM,
					"name", "TERM", "grace_ms", value));
	else
		sbx_log_event(&c->log, what, json_pack("{s:i}", "signal", value));
}

static void exit_record(struct sbx_run *c, struct sbx_record_exit *x)
{
	const struct sbx_jail_result *r = &c->res;
	bool sig = r->have_status && WIFSIGNALED(r->status);

	x->set = true;
	x->status = c->exit_code;
	x->reason = sbx_xstrdup(c->reason);
	if (r->stop_requested)
		x->stop = sbx_xstrdup(r->stopped == SBX_STOP_GRACE ? "sbx-stop-kill" : "sbx-stop");
	else
		x->stop = r->stopped == SBX_STOP_GRACE	  ? sbx_xstrdup("stop-timeout")
			  : r->stopped == SBX_STOP_SECOND ? sbx_xstrdup("second-signal")
							  : NULL;
	x->exec_error = c->exec_error ? sbx_xstrdup(c->exec_error) : NULL;
	x->code = r->have_status && WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1;
	if (sig)
		x->signal = WTERMSIG(r->status);
	else if (!strcmp(c->reason, "oom") ||
		 (!r->have_status && !c->error && strcmp(c->reason, "timeout")))
		x->signal = SIGKILL;
	x->error = c->error ? sbx_xstrdup(c->error) : NULL;
	sbx_strv_free(&x->git_changed);
	sbx_strv_free(&x->watch_changed);
	sbx_later_git_changed(&c->later, c->cfg, &x->git_changed);
	sbx_later_watch_changed(&c->later, c->cfg, &x->watch_changed);
}

static void resources_record(struct sbx_run *c, struct sbx_record_resources *res)
{
	uint64_t cpu = c->usage.cpu_usec ? c->usage.cpu_usec : c->res.cpu_usec;
	uint64_t mem = c->usage.mem_peak ? c->usage.mem_peak : c->res.maxrss;

	*res = (struct sbx_record_resources){
	    .set = true,
	    .wall_ms = c->res.wall_ms,
	    .cpu_ms = (double)cpu / 1000.0,
	    .mem_peak = mem,
	    .pids_peak = c->usage.pids_peak,
	    .output_bytes = c->res.output_bytes,
	    .output_truncated = c->res.output_truncated,
	    .disk = {.set = c->disk_usage.set,
		     .size = c->disk_usage.size,
		     .used = c->disk_usage.used,
		     .inodes = c->disk_usage.inodes,
		     .inodes_used = c->disk_usage.inodes_used,
		     .full = c->disk_usage.full || c->disk_usage.full_inodes},
	};
}

void sbx_run_record_finish(struct sbx_run *c)
{
	struct sbx_record *r = &c->sb.rec;
	char ts[40];
	struct sbx_err e = {0};

	if (c->error)
		sbx_log_event(&c->log, "error", json_pack("{s:s}", "message", c->error));
	free(r->state);
	r->state = sbx_xstrdup("exited");
	free(r->ended);
	r->ended = sbx_xstrdup(sbx_rfc3339_now(ts, sizeof(ts)));
	exit_record(c, &r->exit);
	resources_record(c, &r->resources);
	r->kept_set = true;
	r->kept = c->kept;
	r->keep_reason = sbx_xstrdup(c->keep_reason ? c->keep_reason : "");
	sbx_log_event(&c->log, "exit", sbx_record_exit_json(r));
	sbx_log_event(&c->log, c->kept ? "kept" : "removed",
		      json_pack("{s:s, s:s, s:o*}", "id", c->sb.id, "reason", r->keep_reason,
				c->kept ? "changed" : "discarded", c->written));
	c->written = NULL; /* the event took it */
	if (c->kept && sbx_sandbox_save_record(&c->sb, &e) < 0)
		sbx_run_say_err(c, &e);
}
