/* SPDX-License-Identifier: MIT */
/*
 * lib/run/run_extras.c - what a run serves beside the jail: secrets (env or
 * /run/secrets files, redacted from output.log), the allowlist proxy on a
 * listener made inside the jail's network namespace, the seccomp audit
 * (blocked syscalls answered and recorded through a notify fd), and cgroup
 * v1's OOM event.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "run_int.h"

/* Environment and files for the jail; extra strings hold secret values. */
int sbx_run_extras_prepare(struct sbx_run *c, struct sbx_strv *extra, struct sbx_err *err)
{
	int r;

	r = sbx_secrets_resolve(&c->secrets, c->cfg, err);
	if (r < 0)
		return r;
	sbx_secrets_env(&c->secrets, extra);
	if (c->cfg->net == SBX_NET_PROXY)
		sbx_proxy_env(SBX_PROXY_DEFAULT_PORT, extra);
	c->files = sbx_xcalloc(c->secrets.n + 1, sizeof(*c->files));
	for (size_t i = 0; i < c->secrets.n; i++) {
		const struct sbx_secret_value *v = &c->secrets.v[i];

		if (v->inject != SBX_SECRET_AS_FILE)
			continue;
		c->files[c->n_files++] = (struct sbx_jail_file){.dir = "/run/secrets",
								.name = v->name,
								.data = v->value,
								.len = v->len,
								.mode = 0400};
	}
	if (c->secrets.n > 0) {
		sbx_redact_init(&c->redact, &c->secrets);
		c->redacting = true;
	}
	return 0;
}

static int write_fd(void *ctx, const void *buf, size_t len)
{
	return sbx_write_all(*(int *)ctx, buf, len);
}

static int redact_log(void *ctx, const void *buf, size_t len)
{
	struct sbx_run *c = ctx;

	return sbx_redact_feed(&c->redact, buf, len, write_fd, &c->output_fd);
}

static int on_proxy(int fd, void *data)
{
	struct sbx_run *c = data;

	sbx_proxy_drain(c->proxy, &c->log);
	return 0;
}

static int on_seccomp(int fd, void *data)
{
	struct sbx_run *c = data;
	struct sbx_err e = {0};
	int r = sbx_seccomp_audit_handle(fd, &c->audit, &e);

	return r < 0 ? -1 : 0;
}

/* cgroup v1 OOM: kill the whole jail, as v2's memory.oom.group does. */
static int on_oom(int fd, void *data)
{
	struct sbx_run *c = data;
	uint64_t n;

	if (read(fd, &n, sizeof(n)) < 0)
		return 0;
	c->oom_seen = true;
	sbx_cgroup_kill(&c->cg);
	sbx_jail_kill(&c->jail);
	return -1;
}

static void watch(struct sbx_jail_io *io, int fd, int (*fn)(int, void *), void *data)
{
	if (fd >= 0 && io->n_watch < SBX_JAIL_MAX_WATCH)
		io->watch[io->n_watch++] = (struct sbx_jail_watch){fd, fn, data};
}

/* After the jail started: serve the proxy listener and the seccomp fd. */
int sbx_run_extras_started(struct sbx_run *c, struct sbx_jail_io *io, struct sbx_err *err)
{
	if (c->redacting) {
		io->log_fn = redact_log;
		io->log_ctx = c;
	}
	if (c->jail.listen_fd >= 0) {
		int r = sbx_proxy_start(&c->proxy, steal_fd(&c->jail.listen_fd), &c->cfg->allow,
					NULL, NULL, err);

		if (r < 0)
			return r;
		watch(io, sbx_proxy_event_fd(c->proxy), on_proxy, c);
	} else if (c->cfg->net == SBX_NET_PROXY) {
		return sbx_err_set(err, ENOTCONN, "the jail gave no proxy listener");
	}
	if (c->auditing)
		watch(io, c->jail.seccomp_fd, on_seccomp, c);
	if (c->cg.version == 1 && c->cfg->memory != SBX_UNSET) {
		struct sbx_err e = {0};

		c->oom_fd = sbx_cgroup_oom_fd(&c->cg, &e);
		watch(io, c->oom_fd, on_oom, c);
	}
	return 0;
}

/* After the run: last proxy events, seccomp events, the redactor's tail. */
void sbx_run_extras_finish(struct sbx_run *c)
{
	struct sbx_run_result *out = c->res_out;
	json_t *net = json_array();
	size_t i;
	json_t *ev;

	if (c->proxy) {
		struct sbx_proxy_stats st;

		sbx_proxy_stop(c->proxy);
		sbx_proxy_drain(c->proxy, &c->log);
		sbx_proxy_get_stats(c->proxy, &st);
		out->proxy = true;
		out->net_allowed = st.allowed;
		out->net_failed = st.failed;
		out->net_denied = st.denied;
		out->net_idle = st.idle;
		out->net_evicted = st.evicted;
		out->net_refused = st.refused;
		c->sb.rec.proxy_stats = (struct sbx_record_proxy){
		    .set = true,
		    .connections = st.connections,
		    .allowed = st.allowed,
		    .failed = st.failed,
		    .denied = st.denied,
		    .idle = st.idle,
		    .evicted = st.evicted,
		    .refused = st.refused,
		    .max_connections = sbx_proxy_max_connections(),
		};
	}
	json_array_foreach(c->log.events, i, ev)
	{
		if (!strcmp(json_string_value(json_object_get(ev, "event")) ?: "", "net"))
			json_array_append(net, ev);
	}
	json_decref(c->sb.rec.network_events);
	c->sb.rec.network_events = net;
	if (c->auditing) {
		for (size_t k = 0; k < c->audit.n; k++)
			sbx_log_event(&c->log, "seccomp",
				      sbx_seccomp_audit_entry_json(&c->audit.entries[k]));
		json_decref(c->sb.rec.seccomp_events);
		c->sb.rec.seccomp_events = sbx_seccomp_audit_json(&c->audit);
	}
	if (c->redacting && c->output_fd >= 0)
		(void)sbx_redact_flush(&c->redact, write_fd, &c->output_fd);
}

void sbx_run_extras_free(struct sbx_run *c)
{
	if (c->proxy)
		sbx_proxy_free(c->proxy);
	c->proxy = NULL;
	if (c->redacting)
		sbx_redact_free(&c->redact);
	c->redacting = false;
	if (c->auditing)
		sbx_seccomp_audit_free(&c->audit);
	c->auditing = false;
	free(c->files);
	c->files = NULL;
	if (c->oom_fd >= 0)
		close(c->oom_fd);
	c->oom_fd = -1;
	sbx_secrets_free(&c->secrets);
}
