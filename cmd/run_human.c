/* SPDX-License-Identifier: MIT */
/*
 * cmd/run_human.c - the run log as `sbx run` prints it: each event the run
 * logs (lib/run/run.h) as "sbx: ..." lines on stderr (none with -q).
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "proxy.h"
#include "run_cli.h"

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

/* "the image's root, /p and /q": the directories of a kept or removed
 * event's list of written views ("/" is the image's root), those that are
 * "/" (root) or the others; NULL when there are none. */
static char *written_text(const json_t *dirs, bool root)
{
	size_t n = 0, k = 0, i;
	char *text = NULL;
	const json_t *d;

	json_array_foreach(dirs, i, d)
	{
		const char *p = json_string_value(d);

		n += p && (strcmp(p, "/") == 0) == root;
	}
	json_array_foreach(dirs, i, d)
	{
		const char *p = json_string_value(d);
		char *t;

		if (!p || (strcmp(p, "/") == 0) != root)
			continue;
		t = sbx_xasprintf("%s%s%s", text ? text : "",
				  k == 0       ? ""
				  : k + 1 == n ? " and "
					       : ", ",
				  root ? "the image's root" : p);
		free(text);
		text = t;
		k++;
	}
	return text;
}

/* "discarded its changes to the image's root and /p (copy-on-write)":
 * what the command wrote that went with a sandbox removed by its profile
 * (or sbx stop), not by --rm. */
static void human_discarded(const json_t *dirs)
{
	char *root = written_text(dirs, true), *cow = written_text(dirs, false);

	if (root || cow)
		sbx_errorf("discarded its changes to %s%s%s%s; --keep keeps a run's changes for "
			   "'sbx diff' and 'sbx apply'",
			   root ? root : "", root && cow ? " and " : "", cow ? cow : "",
			   cow ? " (copy-on-write)" : "");
	free(root);
	free(cow);
}

/* Where a kept sandbox's changes are and what reviews them: sbx diff and
 * apply for the copy-on-write host directories, sbx export for the
 * image's root (no host directory to apply it to). */
static void human_changed(const json_t *ev)
{
	const json_t *dirs = json_object_get(ev, "changed");
	char *root = written_text(dirs, true), *cow = written_text(dirs, false);
	const char *id = jstr(ev, "id");

	if (cow)
		sbx_errorf(
		    "its changes to %s (copy-on-write): 'sbx diff %s' shows them, 'sbx apply "
		    "%s' writes them",
		    cow, id, id);
	if (root)
		sbx_errorf("its changes to %s: 'sbx export %s -o FILE' writes them as a tarball",
			   root, id);
	free(root);
	free(cow);
}

static void human_policy(const json_t *ev)
{
	const json_t *u = json_object_get(ev, "user");
	const json_t *fs = json_object_get(ev, "filesystem");
	const char *persist = jstr(ev, "persist_summary");

	sbx_errorf("user: %s", jstr(u, "summary"));
	sbx_errorf("network: %s", jstr(json_object_get(ev, "network"), "summary"));
	sbx_errorf("secrets: %s", jstr(ev, "secrets_summary"));
	sbx_errorf("filesystem: %s", jstr(fs, "summary"));
	sbx_errorf("persist: %s", *persist ? persist : jstr(ev, "persist"));
}

/* The writable layers' cap was reached (resources.disk): the command's
 * "No space left on device" came from [limits] disk, not the host's. */
static void human_disk_full(const json_t *d)
{
	json_int_t inodes = json_integer_value(json_object_get(d, "inodes"));

	if (!json_is_true(json_object_get(d, "full")))
		return;
	if (inodes > 0 && json_integer_value(json_object_get(d, "inodes_used")) >= inodes)
		sbx_errorf(
		    "disk: its writable layer was full at the end: all %lld inodes used; "
		    "creating files may have failed with 'No space left on device' ([limits] "
		    "disk sets its size)",
		    (long long)inodes);
	else
		sbx_errorf(
		    "disk: its writable layer was full at the end: %.1f MiB of %.1f MiB used; "
		    "writes may have failed with 'No space left on device' ([limits] disk sets "
		    "its size)",
		    (double)json_integer_value(json_object_get(d, "used")) / 1048576.0,
		    (double)json_integer_value(json_object_get(d, "size")) / 1048576.0);
}

/* A .git made or changed during the run in a read-write bind (exit.
 * git_changed, lib/run/run_later.c): what git would run on the host. */
static void human_git_changed(const json_t *x)
{
	const json_t *a = json_object_get(x, "git_changed"), *v;
	size_t i;

	json_array_foreach(a, i, v)
	{
		const char *g = json_string_value(v);
		size_t n = g ? strlen(g) : 0;
		int dir = n > 5 ? (int)(n - 5) : 0;

		if (!g)
			continue;
		sbx_errorf("warning: git repository made or changed during the run: %s (git runs "
			   "its hooks and what its config names when used in %.*s, and editors "
			   "run git status on their own): look at them first: ls -la %s/hooks "
			   "(or the directory its core.hooksPath names); "
			   "git -C %.*s config --local --list",
			   g, dir, g, g, dir, g);
	}
}

/* A [filesystem] watch path changed during the run (exit.watch_changed) */
static void human_watch_changed(const json_t *x)
{
	const json_t *a = json_object_get(x, "watch_changed"), *v;
	size_t i;

	json_array_foreach(a, i, v)
	{
		if (json_is_string(v))
			sbx_errorf(
			    "warning: changed during the run: %s (a file the profile watches: "
			    "its program runs what it names, or follows what it says, when it "
			    "next starts, outside sbx too): look at it first",
			    json_string_value(v));
	}
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
	else if (!strcmp(reason, "stopped") && !strcmp(jstr(x, "stop"), "sbx-stop"))
		snprintf(what, sizeof(what), "stopped by 'sbx stop' (SIGTERM), exit %d",
			 (int)json_integer_value(json_object_get(x, "status")));
	else if (!strcmp(reason, "stopped") && !strcmp(jstr(x, "stop"), "sbx-stop-kill"))
		snprintf(
		    what, sizeof(what),
		    "killed by sbx (SIGKILL) when it outlived 'sbx stop''s grace time, exit %d",
		    (int)json_integer_value(json_object_get(x, "status")));
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
	human_disk_full(json_object_get(r, "disk"));
	human_git_changed(x);
	human_watch_changed(x);
}

/* The proxy's connections that were no request, closed to make room or
 * refused (netpolicy.h): "" if none. */
static const char *proxy_unserved(const struct sbx_run_result *c, char *buf, size_t len)
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

/*
 * While the command has the caller's terminal (its pty, the terminal raw),
 * a line of sbx's would land in the middle of what it draws (an agent's
 * full-screen interface).  The lines one per event (connections, blocked
 * calls, a published port's refusals) are then held, identical ones
 * counted, and said once the command has ended, before its exit line.
 * At most HELD_MAX different lines: the rest are counted (--log-json has
 * every event).
 */
#define HELD_MAX 256

static void hold(struct run_ctx *c, char *text)
{
	struct run_held *h = &c->held;

	for (size_t i = 0; i < h->n; i++) {
		if (!strcmp(h->lines[i], text)) {
			h->count[i]++;
			free(text);
			return;
		}
	}
	if (h->n == HELD_MAX) {
		h->dropped++;
		free(text);
		return;
	}
	h->lines = sbx_xrealloc(h->lines, (h->n + 1) * sizeof(*h->lines));
	h->count = sbx_xrealloc(h->count, (h->n + 1) * sizeof(*h->count));
	h->lines[h->n] = text;
	h->count[h->n++] = 1;
}

/* One line of an event: said now, or held while the command has the terminal. */
static void __attribute__((format(printf, 2, 3)))
event_line(struct run_ctx *c, const char *fmt, ...)
{
	char *text = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (r < 0)
		return;
	if (c->holding) {
		hold(c, text);
		return;
	}
	sbx_errorf("%s", text);
	free(text);
}

void run_human_held(struct run_ctx *c)
{
	struct run_held *h = &c->held;

	c->holding = false;
	if (h->n)
		sbx_errorf("while the command had the terminal:");
	for (size_t i = 0; i < h->n; i++) {
		if (h->count[i] > 1)
			sbx_errorf("%s (%zu times)", h->lines[i], h->count[i]);
		else
			sbx_errorf("%s", h->lines[i]);
		free(h->lines[i]);
	}
	if (h->dropped)
		sbx_errorf("... and %zu other lines (--log-json FILE has every event)", h->dropped);
	free(h->lines);
	free(h->count);
	memset(h, 0, sizeof(*h));
}

/* A signal sbx forwarded; the stop timeout explained the first time. */
static void human_signal(struct run_ctx *c, const json_t *ev)
{
	const char *n = jstr(ev, "name");
	bool stop =
	    !strcmp(n, "INT") || !strcmp(n, "TERM") || !strcmp(n, "HUP") || !strcmp(n, "QUIT");
	json_t *ms = json_object_get(ev, "stop_timeout_ms");
	const char *to = json_is_string(json_object_get(ev, "to"))
			     ? " (from the terminal) to the command's process group"
			     : " to the command";

	if (stop && json_is_integer(ms) && !c->stop_said) {
		c->stop_said = true;
		sbx_errorf("forwarded SIG%s%s; the jail is killed if it has not "
			   "ended in %s (--stop-timeout), or at once on a second Ctrl-C or "
			   "SIGTERM",
			   n, to, duration_text((uint64_t)json_integer_value(ms)));
	} else {
		sbx_errorf("forwarded SIG%s%s", n, to);
	}
}

static void human_net(struct run_ctx *c, const json_t *ev)
{
	const char *res = jstr(ev, "result"), *via = jstr(ev, "via");
	json_t *a = json_object_get(ev, "allowed"), *inj = json_object_get(ev, "injected");
	bool failed = json_is_true(a) && !strcmp(res, "failed");
	const char *verdict = !json_is_true(a) ? "DENIED" : failed ? "FAILED" : "allowed";
	char extra[256] = "";

	if (!strcmp(via, "dns")) {
		event_line(c, "net: dns %s %s %s (%s%s, %s)", jstr(ev, "query"), jstr(ev, "host"),
			   verdict, failed ? "allowed, but " : "", jstr(ev, "reason"),
			   jstr(ev, "rcode"));
		return;
	}
	if (json_array_size(inj)) {
		size_t i, n = 0;
		json_t *v;

		n += (size_t)snprintf(extra, sizeof(extra), "; TLS terminated, injected ");
		json_array_foreach(inj, i, v) n +=
		    (size_t)snprintf(extra + n, n < sizeof(extra) ? sizeof(extra) - n : 0, "%s%s",
				     i ? ", " : "", json_string_value(v));
	} else if (!strcmp(jstr(ev, "tls"), "terminated")) {
		snprintf(extra, sizeof(extra), "; TLS terminated, nothing injected");
	}
	event_line(c, "net: %s %s:%d (%s%s%s)%s", verdict, jstr(ev, "host"),
		   (int)json_integer_value(json_object_get(ev, "port")),
		   failed ? "allowed, but " : "", jstr(ev, "reason"), extra,
		   !strcmp(via, "capture") ? " [captured]" : "");
}

/* A blocked call, and once a run what blocked calls of its kind mean. */
static void human_seccomp(struct run_ctx *c, const json_t *ev, bool *hinted)
{
	const char *args = jstr(ev, "args"), *hint = jstr(ev, "hint");
	int n = (int)json_integer_value(json_object_get(ev, "count"));

	event_line(c, "seccomp: blocked %s%s%s%s (%d time%s, errno %s)", jstr(ev, "syscall"),
		   *args ? "(" : "", args, *args ? ")" : "", n, n == 1 ? "" : "s",
		   jstr(ev, "errno"));
	if (*hint && !*hinted)
		event_line(c, "seccomp: %s", hint);
	*hinted |= *hint != '\0';
}

/* The published ports: the URL to click, or that a port is open. */
static void human_publish(const json_t *ev)
{
	const json_t *ports = json_object_get(ev, "ports"), *pt;
	size_t i;

	json_array_foreach(ports, i, pt)
	{
		int hp = (int)json_integer_value(json_object_get(pt, "host_port"));
		int port = (int)json_integer_value(json_object_get(pt, "port"));
		const json_t *addrs = json_object_get(pt, "addresses"), *a;
		char where[128] = "";
		size_t k, n = 0;

		json_array_foreach(addrs, k, a) n += (size_t)snprintf(
		    where + n, n < sizeof(where) ? sizeof(where) - n : 0, "%s%s", k ? ", " : "",
		    json_string_value(a) ? json_string_value(a) : "?");

		if (!strcmp(jstr(pt, "auth"), "open"))
			sbx_errorf(
			    "publish: %s port %d -> jail port %d: OPEN (no token: anyone who "
			    "can reach %s:%d connects)",
			    where, hp, port, where, hp);
		else
			sbx_errorf("preview: %s (jail port %d; needs its token)", jstr(pt, "url"),
				   port);
	}
	if (json_array_size(ports))
		sbx_errorf("publish: %s", jstr(ev, "summary"));
}

/* A published port's connection: said when it was refused or failed. */
static void human_connection(struct run_ctx *c, const json_t *ev)
{
	const char *result = jstr(ev, "result");

	if (strcmp(result, "refused") && strcmp(result, "failed"))
		return;
	event_line(c, "publish: %s from %s to port %d %s (%s)",
		   jstr(ev, "path")[0] ? "request" : "connection", jstr(ev, "peer"),
		   (int)json_integer_value(json_object_get(ev, "host_port")), result,
		   jstr(ev, "reason"));
}

void run_human_later(const json_t *x)
{
	human_git_changed(x);
	human_watch_changed(x);
}

/* -q: no run log; but what the host runs later, made or changed during
 * the run, is still said (it asks the user to look before using it) */
void run_human_quiet(const json_t *ev, void *data)
{
	(void)data;
	if (!strcmp(jstr(ev, "event"), "exit"))
		run_human_later(json_object_get(ev, "exit"));
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
		if (!strcmp(jstr(ev, "name"), "exec")) {
			sbx_errorf("started in %s", c->phases);
			c->holding = c->cfg.tty && isatty(STDERR_FILENO);
		}
	} else if (!strcmp(type, "warning")) {
		sbx_errorf("warning: %s", jstr(ev, "message"));
	} else if (!strcmp(type, "signal")) {
		human_signal(c, ev);
	} else if (!strcmp(type, "suspend")) {
		run_human_held(c); /* the terminal is the shell's again */
		if (!strcmp(jstr(ev, "by"), "terminal"))
			sbx_errorf("suspended (Ctrl-Z): the jail is stopped, and sbx with it; fg "
				   "continues them");
		else
			sbx_errorf("suspended: the command stopped (SIG%s); the jail is stopped, "
				   "and sbx with it; fg continues them",
				   jstr(ev, "name"));
	} else if (!strcmp(type, "continue")) {
		sbx_errorf("continued");
		c->holding = c->cfg.tty && isatty(STDERR_FILENO);
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
		human_net(c, ev);
	} else if (!strcmp(type, "capture")) {
		sbx_errorf("network: %s%s",
			   json_is_true(json_object_get(ev, "on")) ? "" : "capture OFF: ",
			   jstr(ev, "summary"));
	} else if (!strcmp(type, "seccomp")) {
		human_seccomp(c, ev, &c->seccomp_hinted);
	} else if (!strcmp(type, "publish")) {
		human_publish(ev);
	} else if (!strcmp(type, "connection")) {
		human_connection(c, ev);
	} else if (!strcmp(type, "stop")) {
		sbx_errorf(
		    "sbx stop: SIGTERM sent, the jail is killed if it has not ended in %s",
		    duration_text((uint64_t)json_integer_value(json_object_get(ev, "grace_ms"))));
	} else if (!strcmp(type, "exit")) {
		run_human_held(c);
		human_exit(ev);
		if (c->cfg.net == SBX_NET_PROXY)
			sbx_errorf("network: %llu connections allowed, %llu failed, %llu denied%s",
				   (unsigned long long)c->res.net_allowed,
				   (unsigned long long)c->res.net_failed,
				   (unsigned long long)c->res.net_denied,
				   proxy_unserved(&c->res, u, sizeof(u)));
	} else if (!strcmp(type, "kept")) {
		sbx_errorf("kept sandbox %s (%s): sbx inspect %s; sbx destroy %s", jstr(ev, "id"),
			   jstr(ev, "reason"), jstr(ev, "id"), jstr(ev, "id"));
		human_changed(ev);
	} else if (!strcmp(type, "removed")) {
		sbx_errorf("removed sandbox %s (%s)", jstr(ev, "id"), jstr(ev, "reason"));
		human_discarded(json_object_get(ev, "discarded"));
	}
}
