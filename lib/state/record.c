/* SPDX-License-Identifier: MIT */
/*
 * lib/state/record.c - struct sbx_record <-> record.json (RECORD.md): the
 * one writer and the one reader of a record's JSON.
 */
#include <errno.h>
#include <string.h>

#include "log.h"
#include "record.h"

void sbx_record_init(struct sbx_record *r)
{
	memset(r, 0, sizeof(*r));
	r->version = SBX_RECORD_VERSION;
	r->policy.user.uid = r->policy.user.gid = -1;
	r->policy.user.host_uid = r->policy.user.host_gid = -1;
	r->exit.code = -1;
	r->policy.disk = -1;
}

static void layers_free(struct sbx_record_filesystem *fs)
{
	for (size_t i = 0; i < fs->n_layers; i++) {
		free(fs->layers[i].target);
		free(fs->layers[i].upper);
		free(fs->layers[i].lower);
	}
	free(fs->layers);
	for (size_t i = 0; i < fs->n_mounts; i++) {
		free(fs->mounts[i].kind);
		free(fs->mounts[i].src);
		free(fs->mounts[i].dst);
		free(fs->mounts[i].read_only);
		sbx_strv_free(&fs->mounts[i].git_named);
	}
	free(fs->mounts);
}

static void policy_free(struct sbx_record_policy *p)
{
	free(p->user.mapping);
	free(p->user.mapping_summary);
	free(p->user.summary);
	free(p->user.sudo_user);
	free(p->network.mode);
	sbx_strv_free(&p->network.allow);
	free(p->network.summary);
	json_decref(p->secrets);
	free(p->secrets_summary);
	free(p->filesystem.writable_layer);
	free(p->filesystem.upper);
	sbx_strv_free(&p->filesystem.shared);
	free(p->filesystem.summary);
	free(p->filesystem.sysfs);
	layers_free(&p->filesystem);
	free(p->persist);
	free(p->persist_summary);
	json_decref(p->limits);
	free(p->seccomp);
}

void sbx_record_free(struct sbx_record *r)
{
	char **strs[] = {&r->id,	  &r->name,	  &r->state,	       &r->created,
			 &r->ended,	  &r->workdir,	  &r->profile.name,    &r->profile.ini,
			 &r->rootfs.spec, &r->rootfs.dir, &r->rootfs.sha256,   &r->exit.reason,
			 &r->exit.stop,	  &r->exit.error, &r->exit.exec_error, &r->keep_reason};

	for (size_t i = 0; i < SBX_ARRAY_SIZE(strs); i++)
		free(*strs[i]);
	sbx_strv_free(&r->command);
	sbx_strv_free(&r->profile.sources);
	free(r->applied.at);
	free(r->proxy_stats.capture_why);
	sbx_strv_free(&r->applied.paths);
	sbx_strv_free(&r->exit.git_changed);
	sbx_strv_free(&r->exit.watch_changed);
	policy_free(&r->policy);
	json_decref(r->cgroup);
	json_decref(r->publish);
	json_decref(r->network_events);
	json_decref(r->seccomp_events);
	sbx_record_init(r);
}

/* ---- writing ---- */

#define str  sbx_json_str
#define strv sbx_json_strv

static json_t *id_or_null(int64_t v)
{
	return v < 0 ? json_null() : json_integer((json_int_t)v);
}

static json_t *ref(json_t *j, json_t *(*empty)(void))
{
	return j ? json_incref(j) : empty();
}

static void set(json_t *o, const char *k, json_t *v)
{
	json_object_set_new(o, k, v);
}

/*
 * A host path: JSON holds text, and a path that is not UTF-8 (a name in
 * Latin-1, "caf\xe9") is kept whole as KEY_hex beside KEY's text (with
 * U+FFFD where it is not UTF-8): diff, apply and exec open the path
 * itself (get_path).
 */
static void set_path(json_t *o, const char *k, const char *p)
{
	set(o, k, str(p));
	if (p && !sbx_utf8_valid(p, strlen(p))) {
		size_t n = strlen(p);
		_cleanup_free_ char *hex = sbx_xmalloc(2 * n + 1);
		_cleanup_free_ char *key = sbx_xasprintf("%s_hex", k);

		sbx_hex_encode(p, n, hex);
		set(o, key, json_string(hex));
	}
}

static json_t *user_json(const struct sbx_record_user *u)
{
	json_t *o = json_object();

	set(o, "uid", id_or_null(u->uid));
	set(o, "gid", id_or_null(u->gid));
	set(o, "host_uid", id_or_null(u->host_uid));
	set(o, "host_gid", id_or_null(u->host_gid));
	set(o, "root_inside", json_boolean(u->root_inside));
	set(o, "root_on_host", json_boolean(u->root_on_host));
	set(o, "mapping", str(u->mapping));
	set(o, "mapping_summary", str(u->mapping_summary));
	set(o, "summary", str(u->summary));
	set(o, "sudo_user", str(u->sudo_user));
	return o;
}

static json_t *fs_json(const struct sbx_record_filesystem *fs)
{
	json_t *o = json_object(), *mounts = json_array(), *layers = json_array();

	for (size_t i = 0; i < fs->n_mounts; i++) {
		const struct sbx_record_mount *m = &fs->mounts[i];
		json_t *mj = json_object();

		set(mj, "kind", str(m->kind));
		set_path(mj, "src", m->src);
		set_path(mj, "dst", m->dst);
		if (m->read_only)
			set(mj, "read_only", str(m->read_only));
		else if (m->written_as >= 0)
			set(mj, "written_as", json_integer((json_int_t)m->written_as));
		if (m->git_ro)
			set(mj, "git_read_only", json_true());
		if (m->git_named.n)
			set(mj, "git_named_read_only", strv(&m->git_named));
		json_array_append_new(mounts, mj);
	}
	for (size_t i = 0; i < fs->n_layers; i++) {
		const struct sbx_record_layer *l = &fs->layers[i];
		json_t *lj = json_object();

		set_path(lj, "target", l->target);
		set(lj, "upper", str(l->upper));
		set_path(lj, "lower", l->lower);
		json_array_append_new(layers, lj);
	}
	set(o, "writable_layer", str(fs->writable_layer));
	set(o, "upper", str(fs->upper));
	set(o, "shared", strv(&fs->shared));
	set(o, "mounts", mounts);
	set(o, "summary", str(fs->summary));
	if (fs->has_layers)
		set(o, "layers", layers);
	else
		json_decref(layers);
	set(o, "layers_in_memory", json_boolean(fs->layers_in_memory));
	set(o, "sysfs", str(fs->sysfs));
	return o;
}

json_t *sbx_record_policy_json(const struct sbx_record_policy *p)
{
	json_t *o = json_object(), *net = json_object(), *caps = json_array();

	set(net, "mode", str(p->network.mode));
	set(net, "allow", strv(&p->network.allow));
	set(net, "proxy", json_null());
	set(net, "summary", str(p->network.summary));
	for (int i = 0; i < 64; i++)
		if (p->capabilities & (1ULL << i))
			json_array_append_new(caps, json_integer(i));
	set(o, "user", user_json(&p->user));
	set(o, "network", net);
	set(o, "secrets", ref(p->secrets, json_array));
	set(o, "filesystem", fs_json(&p->filesystem));
	set(o, "persist", str(p->persist));
	set(o, "persist_summary", str(p->persist_summary));
	set(o, "limits", ref(p->limits, json_object));
	set(o, "seccomp", str(p->seccomp));
	set(o, "capabilities", caps);
	set(o, "no_new_privs", json_boolean(p->no_new_privs));
	set(o, "secrets_summary", str(p->secrets_summary));
	return o;
}

static json_t *exit_json(const struct sbx_record_exit *x)
{
	json_t *o = json_object();

	set(o, "status", json_integer(x->status));
	set(o, "reason", str(x->reason));
	set(o, "stop", str(x->stop));
	set(o, "exec_error", str(x->exec_error));
	set(o, "code", x->code < 0 ? json_null() : json_integer(x->code));
	set(o, "signal", x->signal ? json_integer(x->signal) : json_null());
	set(o, "error", str(x->error));
	if (x->git_changed.n)
		set(o, "git_changed", strv(&x->git_changed));
	if (x->watch_changed.n)
		set(o, "watch_changed", strv(&x->watch_changed));
	return o;
}

static json_t *resources_json(const struct sbx_record_resources *r)
{
	const struct sbx_record_disk *k = &r->disk;
	json_t *disk = k->set
			   ? json_pack("{s:I, s:I, s:I, s:I, s:b}", "size", (json_int_t)k->size,
				       "used", (json_int_t)k->used, "inodes", (json_int_t)k->inodes,
				       "inodes_used", (json_int_t)k->inodes_used, "full", k->full)
			   : NULL;

	return json_pack("{s:f, s:f, s:I, s:I, s:I, s:b, s:o*}", "wall_ms", r->wall_ms, "cpu_ms",
			 r->cpu_ms, "mem_peak", (json_int_t)r->mem_peak, "pids_peak",
			 (json_int_t)r->pids_peak, "output_bytes", (json_int_t)r->output_bytes,
			 "output_truncated", r->output_truncated, "disk", disk);
}

static json_t *timings_json(const struct sbx_record_timings *t)
{
	const char *names[SBX_RECORD_PHASES];
	double ms[SBX_RECORD_PHASES];
	json_t *o = json_object();

	sbx_record_phases(t, names, ms);
	for (int i = 0; i < SBX_RECORD_PHASES; i++)
		set(o, names[i], json_real(ms[i]));
	return o;
}

static json_t *proxy_json(const struct sbx_record_proxy *p)
{
	json_t *o = json_pack(
	    "{sI sI sI sI sI sI sI si sI sI sb}", "connections", (json_int_t)p->connections,
	    "allowed", (json_int_t)p->allowed, "failed", (json_int_t)p->failed, "denied",
	    (json_int_t)p->denied, "idle", (json_int_t)p->idle, "evicted", (json_int_t)p->evicted,
	    "refused", (json_int_t)p->refused, "max_connections", p->max_connections, "captured",
	    (json_int_t)p->captured, "dns", (json_int_t)p->dns, "capture", p->capture);

	if (p->capture_why)
		json_object_set_new(o, "capture_why", json_string(p->capture_why));
	return o;
}

json_t *sbx_record_exit_json(const struct sbx_record *r)
{
	return json_pack("{s:o, s:o}", "exit", exit_json(&r->exit), "resources",
			 resources_json(&r->resources));
}

static void set_pid(json_t *o, const char *k, const char *ks, pid_t pid, uint64_t start)
{
	if (pid > 0)
		set(o, k, json_integer(pid));
	if (pid > 0 && start)
		set(o, ks, json_integer((json_int_t)start));
}

json_t *sbx_record_to_json(const struct sbx_record *r)
{
	json_t *o = json_object();

	set(o, "version", json_integer(r->version));
	set(o, "id", str(r->id));
	set(o, "name", str(r->name));
	set(o, "state", str(r->state));
	set(o, "created", str(r->created));
	if (r->ended)
		set(o, "ended", str(r->ended));
	set_pid(o, "supervisor_pid", "supervisor_start", r->supervisor_pid, r->supervisor_start);
	set_pid(o, "init_pid", "init_start", r->init_pid, r->init_start);
	if (r->has_command)
		set(o, "command", strv(&r->command));
	if (r->workdir)
		set_path(o, "workdir", r->workdir);
	if (r->profile.set)
		set(o, "profile",
		    json_pack("{s:o, s:o, s:o}", "name", str(r->profile.name), "sources",
			      strv(&r->profile.sources), "ini", str(r->profile.ini)));
	if (r->rootfs.set)
		set(o, "rootfs",
		    json_pack("{s:o, s:o, s:o, s:b}", "spec", str(r->rootfs.spec), "dir",
			      str(r->rootfs.dir), "sha256", str(r->rootfs.sha256), "cached",
			      r->rootfs.cached));
	if (r->cgroup)
		set(o, "cgroup", json_incref(r->cgroup));
	if (r->detached)
		set(o, "detached", json_true());
	if (r->tty)
		set(o, "tty", json_true());
	if (r->publish)
		set(o, "publish", json_incref(r->publish));
	if (r->policy.set)
		set(o, "policy", sbx_record_policy_json(&r->policy));
	if (r->timings.set)
		set(o, "timings_ms", timings_json(&r->timings));
	if (r->exit.set)
		set(o, "exit", exit_json(&r->exit));
	if (r->resources.set)
		set(o, "resources", resources_json(&r->resources));
	if (r->kept_set) {
		set(o, "kept", json_boolean(r->kept));
		set(o, "keep_reason", str(r->keep_reason ? r->keep_reason : ""));
	}
	if (r->proxy_stats.set)
		set(o, "proxy_stats", proxy_json(&r->proxy_stats));
	if (r->network_events)
		set(o, "network_events", json_incref(r->network_events));
	if (r->seccomp_events)
		set(o, "seccomp_events", json_incref(r->seccomp_events));
	if (r->applied.set)
		set(o, "applied",
		    json_pack("{s:o, s:o}", "at", str(r->applied.at), "paths",
			      strv(&r->applied.paths)));
	return o;
}

/* ---- reading ---- */

struct rd {
	struct sbx_err *err;
	int r;
	char where[64];
};

static const json_t *field(struct rd *d, const json_t *o, const char *k, json_type type)
{
	const json_t *v = json_object_get(o, k);

	if (!v || json_is_null(v))
		return NULL;
	if (json_typeof(v) == type || (type == JSON_REAL && json_is_number(v)) ||
	    (type == JSON_TRUE && json_is_boolean(v)))
		return v;
	if (d->r == 0)
		d->r = sbx_err_set(d->err, EINVAL, "record.json: %s%s%s has the wrong type",
				   d->where, d->where[0] ? "." : "", k);
	return NULL;
}

static char *get_str(struct rd *d, const json_t *o, const char *k)
{
	const json_t *v = field(d, o, k, JSON_STRING);

	return v ? sbx_xstrndup(json_string_value(v), json_string_length(v)) : NULL;
}

/* A host path set_path() wrote: KEY_hex when there is one. */
static char *get_path(struct rd *d, const json_t *o, const char *k)
{
	_cleanup_free_ char *key = sbx_xasprintf("%s_hex", k);
	const json_t *h = json_is_object(o) ? json_object_get(o, key) : NULL;
	const char *x = json_is_string(h) ? json_string_value(h) : NULL;
	char *p = x ? sbx_xcalloc(strlen(x) / 2 + 1, 1) : NULL;

	/* lowercase only, and no NUL in it: not a path otherwise */
	if (!x || strspn(x, "0123456789abcdef") != strlen(x) ||
	    sbx_hex_decode(x, (unsigned char *)p) < 0 || strlen(p) != strlen(x) / 2) {
		free(p);
		return get_str(d, o, k);
	}
	return p;
}

static int64_t get_int(struct rd *d, const json_t *o, const char *k, int64_t dflt)
{
	const json_t *v = field(d, o, k, JSON_INTEGER);

	return v ? (int64_t)json_integer_value(v) : dflt;
}

static double get_num(struct rd *d, const json_t *o, const char *k)
{
	const json_t *v = field(d, o, k, JSON_REAL);

	return v ? json_number_value(v) : 0;
}

static bool get_bool(struct rd *d, const json_t *o, const char *k)
{
	const json_t *v = field(d, o, k, JSON_TRUE);

	return v && json_is_true(v);
}

static const json_t *get_obj(struct rd *d, const json_t *o, const char *k)
{
	return field(d, o, k, JSON_OBJECT);
}

static void get_strv(struct rd *d, const json_t *o, const char *k, struct sbx_strv *out)
{
	const json_t *a = field(d, o, k, JSON_ARRAY), *v;
	size_t i;

	json_array_foreach(a, i, v)
	{
		if (json_is_string(v))
			sbx_strv_push(out, json_string_value(v));
		else if (d->r == 0)
			d->r =
			    sbx_err_set(d->err, EINVAL, "record.json: %s.%s[%zu] is not a string",
					d->where, k, i);
	}
}

static json_t *get_ref(struct rd *d, const json_t *o, const char *k, json_type type)
{
	const json_t *v = field(d, o, k, type);

	return v ? json_deep_copy(v) : NULL;
}

static void within(struct rd *d, const char *where)
{
	snprintf(d->where, sizeof(d->where), "%s", where);
}

static void read_fs(struct rd *d, const json_t *o, struct sbx_record_filesystem *fs)
{
	const json_t *a, *v;
	size_t i;

	within(d, "policy.filesystem");
	fs->writable_layer = get_str(d, o, "writable_layer");
	fs->upper = get_str(d, o, "upper");
	get_strv(d, o, "shared", &fs->shared);
	fs->summary = get_str(d, o, "summary");
	fs->layers_in_memory = get_bool(d, o, "layers_in_memory");
	fs->sysfs = get_str(d, o, "sysfs");
	a = field(d, o, "mounts", JSON_ARRAY);
	fs->mounts = sbx_xcalloc(json_array_size(a) + 1, sizeof(*fs->mounts));
	json_array_foreach(a, i, v)
	{
		struct sbx_record_mount *m = &fs->mounts[fs->n_mounts++];

		m->kind = get_str(d, v, "kind");
		m->src = get_path(d, v, "src");
		m->dst = get_path(d, v, "dst");
		m->read_only = get_str(d, v, "read_only");
		m->written_as = get_int(d, v, "written_as", -1);
		m->git_ro = get_bool(d, v, "git_read_only");
		get_strv(d, v, "git_named_read_only", &m->git_named);
	}
	a = field(d, o, "layers", JSON_ARRAY);
	fs->has_layers = a != NULL;
	fs->layers = sbx_xcalloc(json_array_size(a) + 1, sizeof(*fs->layers));
	json_array_foreach(a, i, v)
	{
		struct sbx_record_layer *l = &fs->layers[fs->n_layers++];

		l->target = get_path(d, v, "target");
		l->upper = get_str(d, v, "upper");
		l->lower = get_path(d, v, "lower");
	}
}

static void read_policy(struct rd *d, const json_t *o, struct sbx_record_policy *p)
{
	const json_t *u = get_obj(d, o, "user"), *n = get_obj(d, o, "network"), *a, *v;
	size_t i;

	p->set = true;
	p->persist = get_str(d, o, "persist");
	p->persist_summary = get_str(d, o, "persist_summary");
	p->seccomp = get_str(d, o, "seccomp");
	p->no_new_privs = get_bool(d, o, "no_new_privs");
	p->secrets_summary = get_str(d, o, "secrets_summary");
	p->secrets = get_ref(d, o, "secrets", JSON_ARRAY);
	p->limits = get_ref(d, o, "limits", JSON_OBJECT);
	within(d, "policy.limits.disk");
	p->disk = get_int(d, json_object_get(p->limits, "disk"), "value", -1);
	a = field(d, o, "capabilities", JSON_ARRAY);
	json_array_foreach(a, i, v) if (json_is_integer(v) && json_integer_value(v) >= 0 &&
					json_integer_value(v) < 64) p->capabilities |=
	    1ULL << json_integer_value(v);
	within(d, "policy.user");
	p->has_user = u != NULL;
	p->user.uid = get_int(d, u, "uid", -1);
	p->user.gid = get_int(d, u, "gid", -1);
	p->user.host_uid = get_int(d, u, "host_uid", -1);
	p->user.host_gid = get_int(d, u, "host_gid", -1);
	p->user.root_inside = get_bool(d, u, "root_inside");
	p->user.root_on_host = get_bool(d, u, "root_on_host");
	p->user.mapping = get_str(d, u, "mapping");
	p->user.mapping_summary = get_str(d, u, "mapping_summary");
	p->user.summary = get_str(d, u, "summary");
	p->user.sudo_user = get_str(d, u, "sudo_user");
	within(d, "policy.network");
	p->network.mode = get_str(d, n, "mode");
	get_strv(d, n, "allow", &p->network.allow);
	p->network.summary = get_str(d, n, "summary");
	within(d, "policy");
	read_fs(d, get_obj(d, o, "filesystem"), &p->filesystem);
}

static void read_exit(struct rd *d, const json_t *o, struct sbx_record_exit *x)
{
	within(d, "exit");
	x->set = true;
	x->status = (int)get_int(d, o, "status", 0);
	x->reason = get_str(d, o, "reason");
	x->stop = get_str(d, o, "stop");
	x->code = (int)get_int(d, o, "code", -1);
	x->signal = (int)get_int(d, o, "signal", 0);
	x->error = get_str(d, o, "error");
	x->exec_error = get_str(d, o, "exec_error");
	get_strv(d, o, "git_changed", &x->git_changed);
	get_strv(d, o, "watch_changed", &x->watch_changed);
}

static void read_resources(struct rd *d, const json_t *o, struct sbx_record_resources *r)
{
	within(d, "resources");
	r->set = true;
	r->wall_ms = get_num(d, o, "wall_ms");
	r->cpu_ms = get_num(d, o, "cpu_ms");
	r->mem_peak = (uint64_t)get_int(d, o, "mem_peak", 0);
	r->pids_peak = (uint64_t)get_int(d, o, "pids_peak", 0);
	r->output_bytes = (uint64_t)get_int(d, o, "output_bytes", 0);
	r->output_truncated = get_bool(d, o, "output_truncated");
	o = get_obj(d, o, "disk");
	if (o) {
		within(d, "resources.disk");
		r->disk.set = true;
		r->disk.size = (uint64_t)get_int(d, o, "size", 0);
		r->disk.used = (uint64_t)get_int(d, o, "used", 0);
		r->disk.inodes = (uint64_t)get_int(d, o, "inodes", 0);
		r->disk.inodes_used = (uint64_t)get_int(d, o, "inodes_used", 0);
		r->disk.full = get_bool(d, o, "full");
	}
}

static void read_timings(struct rd *d, const json_t *o, struct sbx_record_timings *t)
{
	double *slot[SBX_RECORD_PHASES] = {&t->image,	&t->disk, &t->namespaces, &t->mounts,
					   &t->seccomp, &t->exec, &t->total};
	const char *names[SBX_RECORD_PHASES];
	double ms[SBX_RECORD_PHASES];

	within(d, "timings_ms");
	t->set = true;
	sbx_record_phases(t, names, ms);
	for (int i = 0; i < SBX_RECORD_PHASES; i++)
		*slot[i] = get_num(d, o, names[i]);
}

static void read_proxy(struct rd *d, const json_t *o, struct sbx_record_proxy *p)
{
	within(d, "proxy_stats");
	p->set = true;
	p->connections = (uint64_t)get_int(d, o, "connections", 0);
	p->allowed = (uint64_t)get_int(d, o, "allowed", 0);
	p->failed = (uint64_t)get_int(d, o, "failed", 0);
	p->denied = (uint64_t)get_int(d, o, "denied", 0);
	p->idle = (uint64_t)get_int(d, o, "idle", 0);
	p->evicted = (uint64_t)get_int(d, o, "evicted", 0);
	p->refused = (uint64_t)get_int(d, o, "refused", 0);
	p->max_connections = (int)get_int(d, o, "max_connections", 0);
	p->captured = (uint64_t)get_int(d, o, "captured", 0);
	p->dns = (uint64_t)get_int(d, o, "dns", 0);
	p->capture = get_bool(d, o, "capture");
	p->capture_why = get_str(d, o, "capture_why");
}

static void read_top(struct rd *d, const json_t *j, struct sbx_record *r)
{
	const json_t *o;

	r->id = get_str(d, j, "id");
	r->name = get_str(d, j, "name");
	r->state = get_str(d, j, "state");
	r->created = get_str(d, j, "created");
	r->ended = get_str(d, j, "ended");
	r->supervisor_pid = (pid_t)get_int(d, j, "supervisor_pid", 0);
	r->supervisor_start = (uint64_t)get_int(d, j, "supervisor_start", 0);
	r->init_pid = (pid_t)get_int(d, j, "init_pid", 0);
	r->init_start = (uint64_t)get_int(d, j, "init_start", 0);
	r->has_command = field(d, j, "command", JSON_ARRAY) != NULL;
	get_strv(d, j, "command", &r->command);
	r->workdir = get_path(d, j, "workdir");
	r->kept_set = field(d, j, "kept", JSON_TRUE) != NULL;
	r->kept = get_bool(d, j, "kept");
	r->keep_reason = get_str(d, j, "keep_reason");
	r->cgroup = get_ref(d, j, "cgroup", JSON_OBJECT);
	r->detached = get_bool(d, j, "detached");
	r->tty = get_bool(d, j, "tty");
	r->publish = get_ref(d, j, "publish", JSON_ARRAY);
	r->network_events = get_ref(d, j, "network_events", JSON_ARRAY);
	r->seccomp_events = get_ref(d, j, "seccomp_events", JSON_ARRAY);
	if ((o = get_obj(d, j, "profile"))) {
		within(d, "profile");
		r->profile.set = true;
		r->profile.name = get_str(d, o, "name");
		get_strv(d, o, "sources", &r->profile.sources);
		r->profile.ini = get_str(d, o, "ini");
	}
	within(d, "");
	if ((o = get_obj(d, j, "rootfs"))) {
		within(d, "rootfs");
		r->rootfs.set = true;
		r->rootfs.spec = get_str(d, o, "spec");
		r->rootfs.dir = get_str(d, o, "dir");
		r->rootfs.sha256 = get_str(d, o, "sha256");
		r->rootfs.cached = get_bool(d, o, "cached");
	}
}

int sbx_record_from_json(const json_t *j, struct sbx_record *r, struct sbx_err *err)
{
	struct rd d = {.err = err};
	const json_t *o;

	sbx_record_init(r);
	if (!json_is_object(j))
		return sbx_err_set(err, EINVAL, "record.json is not a JSON object");
	if (json_object_get(j, "version") &&
	    json_integer_value(json_object_get(j, "version")) != SBX_RECORD_VERSION)
		return sbx_err_set(err, EINVAL, "record.json has no version %d (sbx %s reads that)",
				   SBX_RECORD_VERSION, SBX_VERSION);
	read_top(&d, j, r);
	within(&d, "");
	if ((o = get_obj(&d, j, "policy")))
		read_policy(&d, o, &r->policy);
	within(&d, "");
	if ((o = get_obj(&d, j, "timings_ms")))
		read_timings(&d, o, &r->timings);
	within(&d, "");
	if ((o = get_obj(&d, j, "exit")))
		read_exit(&d, o, &r->exit);
	within(&d, "");
	if ((o = get_obj(&d, j, "resources")))
		read_resources(&d, o, &r->resources);
	within(&d, "");
	if ((o = get_obj(&d, j, "proxy_stats")))
		read_proxy(&d, o, &r->proxy_stats);
	within(&d, "");
	if ((o = get_obj(&d, j, "applied"))) {
		within(&d, "applied");
		r->applied.set = true;
		r->applied.at = get_str(&d, o, "at");
		get_strv(&d, o, "paths", &r->applied.paths);
	}
	return d.r;
}

void sbx_record_enter(const struct sbx_record *r, struct sbx_enter_record *out)
{
	const struct sbx_record_user *u = &r->policy.user;

	*out = (struct sbx_enter_record){
	    .init_pid = r->init_pid,
	    .supervisor_pid = r->supervisor_pid,
	    .init_start = r->init_start,
	    .supervisor_start = r->supervisor_start,
	    .has_user = r->policy.set && r->policy.has_user,
	    .uid = u->uid,
	    .host_uid = u->host_uid,
	};
}

void sbx_record_phases(const struct sbx_record_timings *t, const char *names[SBX_RECORD_PHASES],
		       double ms[SBX_RECORD_PHASES])
{
	static const char *const n[SBX_RECORD_PHASES] = {"image",   "disk", "namespaces", "mounts",
							 "seccomp", "exec", "total"};
	const double v[SBX_RECORD_PHASES] = {t->image,	 t->disk, t->namespaces, t->mounts,
					     t->seccomp, t->exec, t->total};

	for (int i = 0; i < SBX_RECORD_PHASES; i++) {
		names[i] = n[i];
		ms[i] = v[i];
	}
}

/* A JSON string at text[*i] (its opening quote): *i to its closing quote,
 * false if it does not end within n.  Its raw characters go to out (len
 * bytes) when they fit and hold no escape; else out is "". */
static bool peek_string(const char *text, size_t n, size_t *i, char *out, size_t len)
{
	size_t k = 0;
	bool fits = true;

	for ((*i)++; *i < n; (*i)++) {
		char ch = text[*i];

		if (ch == '"') {
			out[fits ? k : 0] = '\0';
			return true;
		}
		if (ch == '\\') {
			fits = false;
			(*i)++;
		} else if (fits && k + 1 < len) {
			out[k++] = ch;
		} else {
			fits = false;
		}
	}
	return false;
}

static size_t peek_space(const char *text, size_t n, size_t i)
{
	while (i < n && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r'))
		i++;
	return i;
}

bool sbx_record_state_peek(const char *text, size_t n, char *state, size_t len)
{
	int depth = 0;
	char word[8];

	if (len == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = text[i];
		size_t j;

		if (ch == '{' || ch == '[') {
			depth++;
			continue;
		}
		if (ch == '}' || ch == ']') {
			if (--depth <= 0)
				return false;
			continue;
		}
		if (ch != '"')
			continue;
		if (!peek_string(text, n, &i, word, sizeof(word)))
			return false;
		/* a key of the top-level object, "state": its string value */
		j = peek_space(text, n, i + 1);
		if (depth != 1 || j >= n || text[j] != ':' || strcmp(word, "state") != 0)
			continue;
		j = peek_space(text, n, j + 1);
		return j < n && text[j] == '"' && peek_string(text, n, &j, state, len) && state[0];
	}
	return false;
}
