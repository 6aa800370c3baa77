/* SPDX-License-Identifier: MIT */
/*
 * lib/run/run_extras.c - what a run serves beside the jail: secrets (env or
 * /run/secrets files, redacted from output.log), the allowlist proxy on a
 * listener made inside the jail's network namespace, the seccomp audit
 * (blocked syscalls answered and recorded through a notify fd), and cgroup
 * v1's OOM event.
 */
#include <errno.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "keyring.h"
#include "run_int.h"

#define CA_DIR	  "/run/sbx"
#define CA_BUNDLE "ca-bundle.pem"

/*
 * The jail's CA bundle is the host's CAs, [network] upstream-ca and the
 * sandbox's CA, a newline between two.  The first two are files that
 * init copies in the kernel from fds opened here (c->ca_files); the CA
 * comes through a pipe from its helper.
 */
static int open_regular(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd >= 0 && fstat(fd, st) < 0) {
		sbx_closep(&fd);
		return -1;
	}
	return fd;
}

/* The host's CA bundle (the first of the usual places), or -1. */
static int host_cas(off_t *size)
{
	static const char *const paths[] = {"/etc/ssl/certs/ca-certificates.crt",
					    "/etc/pki/tls/certs/ca-bundle.crt",
					    "/etc/ssl/cert.pem"};
	struct stat st;

	for (size_t i = 0; i < SBX_ARRAY_SIZE(paths); i++) {
		int fd = open_regular(paths[i], &st);

		if (fd >= 0 && S_ISREG(st.st_mode)) {
			*size = st.st_size;
			return fd;
		}
		if (fd >= 0)
			close(fd);
	}
	return -1;
}

/* The bundle's files; an unusable upstream-ca stops the run, said with the
 * reason before the jail starts. */
static int open_bundle_files(struct sbx_run *c, struct sbx_err *err)
{
	const char *up = c->cfg->upstream_ca;
	off_t host_size = 0;
	struct stat st;

	c->ca_files[0] = host_cas(&host_size);
	if (!up)
		return 0;
	c->ca_files[1] = open_regular(up, &st);
	if (c->ca_files[1] < 0)
		return sbx_err_set(err, errno, "[network] upstream-ca '%s' cannot be read", up);
	if (!S_ISREG(st.st_mode))
		return sbx_err_set(err, 0,
				   "[network] upstream-ca '%s' is not a regular file (give a PEM "
				   "file of CA certificates)",
				   up);
	/* The bundle's tmpfs holds SBX_JAIL_FILES_MAX; the sandbox's CA is
	 * under 1 KiB. */
	if (host_size + st.st_size + 4096 > SBX_JAIL_FILES_MAX)
		return sbx_err_set(err, 0,
				   "[network] upstream-ca '%s' is too large: %lld KiB, and the "
				   "jail's CA bundle holds %d KiB with the host's CAs (%lld KiB)",
				   up, (long long)st.st_size / 1024, SBX_JAIL_FILES_MAX / 1024,
				   (long long)host_size / 1024);
	return 0;
}

/* Every secret the proxy injects: allowed on 443, and proxy mode. */
static int check_injections(struct sbx_run *c, struct sbx_err *err)
{
	struct sbx_allowlist al = {0};
	int r = 0;

	for (size_t i = 0; i < c->secrets.n && r == 0; i++) {
		const struct sbx_secret_value *v = &c->secrets.v[i];

		if (!v->hosts)
			continue;
		if (c->cfg->net != SBX_NET_PROXY)
			return sbx_err_set(err, EINVAL,
					   "secret '%s' is injected by the proxy for %s, but the "
					   "network mode is '%s': use --net proxy",
					   v->name, v->hosts->v[0], sbx_net_mode_name(c->cfg->net));
		if (!al.n && sbx_netpolicy_parse(&al, &c->cfg->allow, err) < 0)
			return -EINVAL;
		for (size_t k = 0; k < v->hosts->n && r == 0; k++) {
			const char *h = v->hosts->v[k];

			if (strncmp(h, "*.", 2) != 0 && !sbx_netpolicy_match(&al, h, 443, 443))
				r = sbx_err_set(err, EINVAL,
						"secret '%s' is injected for '%s', which [network] "
						"allow does not allow on port 443: add --allow %s",
						v->name, h, h);
		}
	}
	sbx_netpolicy_free(&al);
	return r;
}

/* The CA helper's certificate to the jail: the bundle's last part. */
struct cert_out {
	int fd;
	int r;
	struct sbx_err *err;
};

static void give_cert(const char *cert, void *data)
{
	struct cert_out *o = data;

	if (sbx_write_all(o->fd, cert, strlen(cert)) < 0)
		o->r = sbx_err_set(o->err, errno, "cannot give the jail its CA bundle");
	sbx_closep(&o->fd); /* the jail's init reads to here */
}

/* The CA helper: make the CA, give the jail its certificate (the bundle's
 * last part) as soon as it exists, and send the supervisor "ok\n" CERT
 * "\0" KEY, or "error\n" MESSAGE. */
static void __attribute__((noreturn)) ca_helper(struct sbx_run *c, int cert_fd, int key_fd)
{
	struct sbx_err e = {0};
	struct cert_out o = {.fd = cert_fd, .err = &e};
	char *cert = NULL, *key = NULL;
	int r;

	r = sbx_tls_ca_make_pem(c->ca_label, give_cert, &o, &cert, &key, &e);
	sbx_closep(&o.fd);
	if (r == 0)
		r = o.r;
	if (r == 0)
		(void)(sbx_write_all(key_fd, "ok\n", 3) < 0 ||
		       sbx_write_all(key_fd, cert, strlen(cert) + 1) < 0 ||
		       sbx_write_all(key_fd, key, strlen(key)) < 0);
	else
		(void)(sbx_write_all(key_fd, "error\n", 6) < 0 ||
		       sbx_write_all(key_fd, e.msg, strlen(e.msg)) < 0);
	if (key)
		explicit_bzero(key, strlen(key));
	_exit(0);
}

/*
 * CAs made ahead of time.  Making one costs a run ~8 ms of its start and
 * ~13 ms of CPU on a 2-CPU VM (OpenSSL loaded, a key pair, a
 * certificate), so the purger of a run that injected a secret, once it
 * finds none left, makes CA_READY_MAX at a time (OpenSSL loaded once for
 * all of them; nice 19, after `sbx run` returned) and leaves them in the
 * user's kernel keyring (lib/util/keyring.h: kernel memory,
 * possessor-only, never on disk) for at most CA_READY_TTL.  A run that
 * injects takes one, once: a CA still serves one sandbox only, its key is
 * in no file and in no memory but sbx's and, while it waits, the
 * kernel's; a run that finds none makes its own at start-up.  Each value:
 * "sbx-ca 1 MADE\n" CERT "\0" KEY, MADE the realtime clock's seconds;
 * one older than CA_READY_TTL (a clock set back or forward) is dropped.
 * Its certificate is valid from an hour before MADE for CA_DAYS
 * (lib/net/tls.c), so at least 29 days from its use.
 */
#define CA_READY_DESC "sbx: a sandbox CA made ahead (1) #%d"
#define CA_READY_MAX  4
#define CA_READY_TTL  (12 * 3600)

static void ca_desc(char *buf, size_t len, int slot)
{
	snprintf(buf, len, CA_READY_DESC, slot);
}

/* Make a CA into the empty slots (in the purger's child). */
static void ca_make_ahead(void)
{
	for (int slot = 0; slot < CA_READY_MAX; slot++) {
		struct sbx_err e = {0};
		unsigned char rnd[6];
		char label[2 * sizeof(rnd) + 1], desc[64];
		char *cert = NULL, *key = NULL, *head, *v;
		size_t h, cl, kl;

		ca_desc(desc, sizeof(desc), slot);
		if (sbx_keyring_has(desc))
			continue;
		if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
			return;
		for (size_t i = 0; i < sizeof(rnd); i++)
			snprintf(label + 2 * i, 3, "%02x", rnd[i]);
		if (sbx_tls_ca_make_pem(label, NULL, NULL, &cert, &key, &e) < 0)
			return;
		head = sbx_xasprintf("sbx-ca 1 %lld\n", (long long)time(NULL));
		h = strlen(head);
		cl = strlen(cert) + 1; /* its NUL between the two */
		kl = strlen(key);
		v = sbx_xmalloc(h + cl + kl);
		memcpy(v, head, h);
		memcpy(v + h, cert, cl);
		memcpy(v + h + cl, key, kl);
		if (sbx_keyring_put(desc, v, h + cl + kl, CA_READY_TTL) < 0)
			slot = CA_READY_MAX; /* no keyring, or the quota is full */
		explicit_bzero(v, h + cl + kl);
		explicit_bzero(key, kl);
		free(v);
		free(key);
		free(cert);
		free(head);
	}
}

/* Whether a CA made ahead waits in any slot. */
static bool ca_any_ready(void)
{
	char desc[64];

	for (int slot = 0; slot < CA_READY_MAX; slot++) {
		ca_desc(desc, sizeof(desc), slot);
		if (sbx_keyring_has(desc))
			return true;
	}
	return false;
}

/* The purger's work after a run that injected: the next runs' CAs, once
 * none is left, made in a child of the purger (OpenSSL fails to start in
 * the purger itself, which took over sbx's memory and runs on the thread
 * pointer of sbx's thread, gone). */
static void ca_refill(const char *state_dir, const uint64_t args[2])
{
	pid_t pid;
	int st;

	(void)state_dir;
	(void)args;
	if (ca_any_ready())
		return;
	pid = fork();
	if (pid == 0) {
		ca_make_ahead();
		_exit(0);
	}
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

/* One value taken from the keyring, if it is a CA made ahead within
 * CA_READY_TTL: c->ca, and its certificate in a pipe for the jail. */
static bool ca_use(struct sbx_run *c, const char *v, size_t len)
{
	long long made = 0, now = (long long)time(NULL);
	int off = 0, p[2];
	const char *cert, *key;
	bool ok;

	ok = sscanf(v, "sbx-ca 1 %lld\n%n", &made, &off) == 1 && off > 0 && made <= now + 60 &&
	     now - made < CA_READY_TTL;
	cert = v + off;
	key = ok ? cert + strlen(cert) + 1 : v;
	ok = ok && key < v + len && strncmp(cert, "-----BEGIN CERTIFICATE-----", 27) == 0 &&
	     strstr(key, "PRIVATE KEY-----") && pipe2(p, O_CLOEXEC) == 0;
	if (!ok)
		return false;
	/* A certificate is far smaller than a pipe's buffer. */
	ok = sbx_write_all(p[1], cert, strlen(cert)) == 0 &&
	     sbx_tls_ca_from_pem(&c->ca, cert, key, c->cfg->upstream_ca, &c->ca_err) == 0;
	close(p[1]);
	if (ok)
		c->ca_pipe[0] = p[0];
	else
		close(p[0]);
	return ok;
}

/* The CA an earlier run's purger made, if one waits (one too old, or not
 * sbx's, is taken and dropped).  False: make one. */
static bool ca_ready(struct sbx_run *c)
{
	char desc[64], *v;
	size_t len;
	bool ok = false;

	for (int slot = 0; slot < CA_READY_MAX && !ok; slot++) {
		ca_desc(desc, sizeof(desc), slot);
		if (sbx_keyring_take(desc, &v, &len) != 1)
			continue;
		ok = ca_use(c, v, len);
		explicit_bzero(v, len);
		free(v);
	}
	return ok;
}

/*
 * A run that injects a secret (or trusts an upstream-ca) gives the jail a
 * CA bundle.  Unless a CA made ahead waits (ca_ready), loading OpenSSL and
 * making the CA's key pair take several
 * milliseconds, so a short-lived child does it while the state directory,
 * the image, the layers and the jail's mounts are set up (a child, not a
 * thread: the jail is cloned meanwhile, and a clone of a process whose
 * other thread holds a lock inherits that lock held forever).  Its
 * certificate reaches the jail through a pipe that init reads last, before
 * the pivot, after the bundle's files; the CA's key comes back to this
 * process through another pipe, once the jail runs, and lives only in its
 * memory.  OpenSSL itself is loaded here only by the first connection that
 * needs it.  A run that only trusts an upstream-ca forks no helper.
 */
void sbx_run_extras_begin(struct sbx_run *c)
{
	bool inject = false;
	int key[2];

	for (size_t i = 0; i < c->cfg->n_secrets; i++)
		inject |= c->cfg->secrets[i].inject_hosts.n > 0;
	if (c->cfg->net != SBX_NET_PROXY || (!inject && !c->cfg->upstream_ca))
		return;
	c->ca_bundle = true;
	c->ca_rc = open_bundle_files(c, &c->ca_err);
	if (c->ca_rc < 0 || !inject)
		return;
	(void)sbx_state_idle_add(&c->st, ca_refill, 0, 0);
	c->ca_ahead = ca_ready(c);
	if (c->ca_ahead)
		return;
	if (pipe2(c->ca_pipe, O_CLOEXEC) < 0 || pipe2(key, O_CLOEXEC) < 0) {
		c->ca_rc = sbx_err_set(&c->ca_err, errno, "cannot make a pipe for the CA bundle");
		return;
	}
	snprintf(c->ca_label, sizeof(c->ca_label), "%s", c->sb.id);
	c->ca_pid = fork();
	if (c->ca_pid == 0) {
		close(key[0]);
		close(c->ca_pipe[0]);
		ca_helper(c, c->ca_pipe[1], key[1]);
	}
	close(key[1]);
	sbx_closep(&c->ca_pipe[1]);
	c->ca_key_fd = key[0];
	if (c->ca_pid < 0)
		c->ca_rc = sbx_err_set(&c->ca_err, errno, "cannot start the CA helper");
}

/* Once the jail has read its bundle: the CA from the helper, or why not. */
static int join_ca(struct sbx_run *c, struct sbx_err *err)
{
	_cleanup_free_ char *msg = NULL;
	size_t len = 0;
	int st;

	sbx_closep(&c->ca_pipe[0]);
	sbx_closep(&c->ca_files[0]);
	sbx_closep(&c->ca_files[1]);
	if (c->ca_rc == 0 && c->ca_key_fd < 0)
		return 0; /* no CA (none, or only the bundle's files) */
	if (c->ca_rc == 0 && c->ca_key_fd >= 0 &&
	    sbx_read_fd_string(c->ca_key_fd, 1 << 20, &msg, &len) < 0)
		c->ca_rc = sbx_err_set(&c->ca_err, errno, "cannot read the CA from its helper");
	sbx_closep(&c->ca_key_fd);
	if (c->ca_pid > 0)
		while (waitpid(c->ca_pid, &st, 0) < 0 && errno == EINTR)
			;
	c->ca_pid = 0;
	if (c->ca_rc == 0 && msg && strncmp(msg, "ok\n", 3) == 0) {
		const char *cert = msg + 3;

		if (strlen(cert) + 4 < len)
			c->ca_rc = sbx_tls_ca_from_pem(&c->ca, cert, cert + strlen(cert) + 1,
						       c->cfg->upstream_ca, &c->ca_err);
	} else if (c->ca_rc == 0) {
		c->ca_rc = sbx_err_set(&c->ca_err, 0, "%s",
				       msg && strncmp(msg, "error\n", 6) == 0
					   ? msg + 6
					   : "the CA helper ended without a CA");
	}
	if (msg)
		explicit_bzero(msg, len);
	if (c->ca_rc < 0)
		*err = c->ca_err;
	return c->ca_rc;
}

/* The jail's bundle file (from the CA helper's pipe) and its variables. */
static int prepare_tls(struct sbx_run *c, struct sbx_strv *extra, struct sbx_err *err)
{
	static const char *const vars[] = {"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS",
					   "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
					   "GIT_SSL_CAINFO"};
	struct sbx_jail_file *f;

	if (c->ca_rc < 0) {
		*err = c->ca_err;
		return c->ca_rc;
	}
	if (!c->ca_bundle)
		return 0;
	f = &c->files[c->n_files++];
	*f = (struct sbx_jail_file){.dir = CA_DIR, .name = CA_BUNDLE, .mode = 0444};
	for (size_t i = 0; i < SBX_ARRAY_SIZE(c->ca_files); i++)
		if (c->ca_files[i] >= 0)
			f->fds[f->n_fds++] = c->ca_files[i];
	if (c->ca_pipe[0] >= 0)
		f->fds[f->n_fds++] = c->ca_pipe[0];
	for (size_t i = 0; i < SBX_ARRAY_SIZE(vars); i++)
		sbx_strv_push_take(extra, sbx_xasprintf("%s=" CA_DIR "/" CA_BUNDLE, vars[i]));
	return 0;
}

/* Environment and files for the jail; extra strings hold secret values. */
int sbx_run_extras_prepare(struct sbx_run *c, struct sbx_strv *extra, struct sbx_err *err)
{
	int r;

	r = sbx_secrets_resolve(&c->secrets, c->cfg, err);
	if (r == 0)
		r = check_injections(c, err);
	if (r < 0)
		return r;
	sbx_secrets_env(&c->secrets, extra);
	if (c->cfg->net == SBX_NET_PROXY)
		sbx_proxy_env(SBX_PROXY_DEFAULT_PORT, extra);
	c->files = sbx_xcalloc(c->secrets.n + 2, sizeof(*c->files));
	c->inject = sbx_xcalloc(c->secrets.n + 1, sizeof(*c->inject));
	for (size_t i = 0; i < c->secrets.n; i++) {
		const struct sbx_secret_value *v = &c->secrets.v[i];
		size_t len;
		const char *data = sbx_secret_jail_value(v, &len);

		if (v->hosts)
			c->inject[c->n_inject++] =
			    (struct sbx_proxy_inject){.name = v->name,
						      .value = v->value,
						      .len = v->len,
						      .placeholder = v->placeholder,
						      .hosts = v->hosts};
		if (v->inject != SBX_SECRET_AS_FILE)
			continue;
		c->files[c->n_files++] = (struct sbx_jail_file){
		    .dir = "/run/secrets", .name = v->name, .data = data, .len = len, .mode = 0400};
	}
	if (c->secrets.n > 0) {
		sbx_redact_init(&c->redact, &c->secrets);
		c->redacting = true;
	}
	return prepare_tls(c, extra, err);
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

/* The proxy on the jail's sockets: TCP listeners, then the DNS ones. */
static int start_proxy(struct sbx_run *c, struct sbx_err *err)
{
	int tcp[4], udp[4];
	struct sbx_proxy_opts o = {.listen_fds = tcp,
				   .allow = &c->cfg->allow,
				   .dns_fds = udp,
				   .inject = c->inject,
				   .n_inject = c->n_inject,
				   .ca = c->ca};

	tcp[o.n_listen++] = steal_fd(&c->jail.listen_fd);
	for (size_t i = 0; i < SBX_ARRAY_SIZE(c->jail.capture_fds); i++) {
		int fd = steal_fd(&c->jail.capture_fds[i]), type = 0;
		socklen_t tl = sizeof(type);

		if (fd < 0)
			continue;
		getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl);
		if (type == SOCK_DGRAM)
			udp[o.n_dns++] = fd;
		else
			tcp[o.n_listen++] = fd;
	}
	sbx_log_event(&c->log, "capture",
		      json_pack("{s:b, s:s}", "on", c->jail.capture_on, "summary",
				c->jail.capture_on
				    ? "every TCP connection and DNS query from the jail is "
				      "captured in its network namespace (nftables) and decided "
				      "by the allowlist; no other UDP, no ICMP"
				    : c->jail.capture_why));
	return sbx_proxy_start_opts(&c->proxy, &o, err);
}

/* After the jail started: serve the proxy listener and the seccomp fd. */
int sbx_run_extras_started(struct sbx_run *c, struct sbx_jail_io *io, struct sbx_err *err)
{
	if (c->redacting) {
		io->log_fn = redact_log;
		io->log_ctx = c;
	}
	if (c->jail.listen_fd >= 0) {
		int r = join_ca(c, err);

		if (r == 0)
			r = start_proxy(c, err);

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
		    .captured = st.captured,
		    .dns = st.dns,
		    .capture = c->jail.capture_on,
		    .capture_why = c->jail.capture_on ? NULL : sbx_xstrdup(c->jail.capture_why),
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
	sbx_closep(&c->ca_pipe[0]); /* a helper still writing gets EPIPE */
	sbx_closep(&c->ca_pipe[1]);
	sbx_closep(&c->ca_files[0]);
	sbx_closep(&c->ca_files[1]);
	sbx_closep(&c->ca_key_fd);
	if (c->ca_pid > 0)
		waitpid(c->ca_pid, NULL, 0);
	c->ca_pid = 0;
	free(c->inject);
	c->inject = NULL;
	c->n_inject = 0;
	sbx_tls_ca_free(c->ca);
	c->ca = NULL;
	if (c->oom_fd >= 0)
		close(c->oom_fd);
	c->oom_fd = -1;
	sbx_secrets_free(&c->secrets);
}
