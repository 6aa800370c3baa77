/* SPDX-License-Identifier: MIT */
/*
 * lib/seccomp/seccomp_audit.c - the supervisor side of seccomp audit mode.
 *
 * The jail loads its filter with SCMP_ACT_NOTIFY in place of every ERRNO
 * action (sbx_seccomp_load with opts.notify and a->filter), so a blocked call waits in
 * the kernel; the supervisor receives it here, records the syscall, and
 * answers with the errno the policy would have returned.  The filter still
 * decides what is blocked: the supervisor can only choose the error, never
 * let a call through (no SECCOMP_USER_NOTIF_FLAG_CONTINUE), and it never
 * reads the caller's memory, so pointer arguments (paths, clone3's struct)
 * are not seen.  See lib/seccomp/seccomp_policy.md, "Audit".
 */
#include "seccomp.h"
#include "seccomp_int.h"

#include <linux/seccomp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "proc.h"

static int notify_rc(int rc)
{
	/* libseccomp reports kernel failures as -ECANCELED with errno set. */
	if (rc == -ECANCELED && errno)
		return -errno;
	return rc;
}

int sbx_seccomp_audit_init(struct sbx_seccomp_audit *a, const char *policy, struct sbx_err *err)
{
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	int rc;

	memset(a, 0, sizeof(*a));
	/* Compile the audit-mode filter now, before the jail is cloned, from
	 * the policy the replay below uses: the file is read once. */
	rc = sbx_seccomp_policy_get(policy, &a->policy, err);
	if (rc == 0)
		rc = sbx_seccomp_prepare_policy(a->policy, true, &a->filter, err);
	if (rc < 0) {
		sbx_seccomp_policy_free(a->policy);
		a->policy = NULL;
		return rc;
	}
	rc = seccomp_notify_alloc(&req, &resp);
	if (rc < 0) {
		sbx_seccomp_policy_free(a->policy);
		sbx_seccomp_filter_free(&a->filter);
		a->policy = NULL;
		return sbx_err_set(err, -notify_rc(rc),
				   "cannot allocate seccomp notification buffers");
	}
	a->req = req;
	a->resp = resp;
	/* The kernel wants the request zeroed, at its own size. */
	struct seccomp_notif_sizes sizes = {0};

	a->req_size = sizeof(struct seccomp_notif);
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0 &&
	    sizes.seccomp_notif > a->req_size)
		a->req_size = sizes.seccomp_notif;
	return 0;
}

void sbx_seccomp_audit_free(struct sbx_seccomp_audit *a)
{
	if (!a)
		return;
	if (a->req || a->resp)
		seccomp_notify_free(a->req, a->resp);
	sbx_seccomp_policy_free(a->policy);
	sbx_seccomp_filter_free(&a->filter);
	free(a->entries);
	memset(a, 0, sizeof(*a));
}

/* The caller's pid inside its own (innermost) pid namespace, from NSpid. */
static pid_t jail_pid_of(pid_t pid)
{
	long last;

	/* The last field is the innermost namespace's view. */
	return sbx_proc_status_nums(pid, "NSpid", &last) > 0 ? (pid_t)last : 0;
}

static const char *family_name(uint64_t v)
{
	static const char *const names[] = {
	    [AF_UNIX] = "AF_UNIX",
	    [AF_INET] = "AF_INET",
	    [AF_AX25] = "AF_AX25",
	    [AF_IPX] = "AF_IPX",
	    [AF_APPLETALK] = "AF_APPLETALK",
	    [AF_BRIDGE] = "AF_BRIDGE",
	    [AF_INET6] = "AF_INET6",
	    [AF_KEY] = "AF_KEY",
	    [AF_NETLINK] = "AF_NETLINK",
	    [AF_PACKET] = "AF_PACKET",
	    [AF_CAN] = "AF_CAN",
	    [AF_TIPC] = "AF_TIPC",
	    [AF_BLUETOOTH] = "AF_BLUETOOTH",
	    [AF_ALG] = "AF_ALG",
	    [AF_VSOCK] = "AF_VSOCK",
	    [AF_XDP] = "AF_XDP",
	};

	return v < SBX_ARRAY_SIZE(names) ? names[v] : NULL;
}

static const char *type_name(uint64_t v)
{
	static const char *const names[] = {
	    [SOCK_STREAM] = "SOCK_STREAM",
	    [SOCK_DGRAM] = "SOCK_DGRAM",
	    [SOCK_RAW] = "SOCK_RAW",
	    [SOCK_RDM] = "SOCK_RDM",
	    [SOCK_SEQPACKET] = "SOCK_SEQPACKET",
	    [SOCK_DCCP] = "SOCK_DCCP",
	    [SOCK_PACKET] = "SOCK_PACKET",
	};

	return v < SBX_ARRAY_SIZE(names) ? names[v] : NULL;
}

/* The arguments a policy looks at, for the run log: socket's family, type
 * (and a netlink protocol), clone's namespace flags, ioctl's request,
 * personality's persona.  Other calls: "". */
static void describe_args(int nr, const uint64_t args[6], char *out, size_t len)
{
	out[0] = '\0';
	if (nr == SCMP_SYS(socket) || nr == SCMP_SYS(socketpair)) {
		const char *f = family_name(args[0] & 0xffffffffu);
		const char *t = type_name(args[1] & 0xf);
		int n = f ? snprintf(out, len, "%s", f)
			  : snprintf(out, len, "family %llu",
				     (unsigned long long)(args[0] & 0xffffffffu));

		/* The filter compares all 64 bits where the kernel takes an int. */
		if (n > 0 && (size_t)n < len && args[0] >> 32)
			n += snprintf(out + n, len - (size_t)n, " (0x%llx)",
				      (unsigned long long)args[0]);

		if (n < 0 || (size_t)n >= len)
			return;
		n += t ? snprintf(out + n, len - (size_t)n, ", %s", t)
		       : snprintf(out + n, len - (size_t)n, ", type %llu",
				  (unsigned long long)(args[1] & 0xf));
		if ((size_t)n < len && (args[0] & 0xffffffffu) == AF_NETLINK)
			snprintf(out + n, len - (size_t)n, ", protocol %llu%s",
				 (unsigned long long)(args[2] & 0xffffffffu),
				 args[2] >> 32 ? " (high bits set)" : "");
	} else if (nr == SCMP_SYS(clone)) {
		snprintf(out, len, "flags 0x%llx", (unsigned long long)args[0]);
	} else if (nr == SCMP_SYS(ioctl)) {
		snprintf(out, len, "request 0x%llx", (unsigned long long)(args[1] & 0xffffffffu));
	} else if (nr == SCMP_SYS(personality)) {
		snprintf(out, len, "persona 0x%llx", (unsigned long long)(args[0] & 0xffffffffu));
	}
}

static struct sbx_seccomp_audit_entry *entry_for(struct sbx_seccomp_audit *a, int nr, int errnum,
						 const uint64_t args[6])
{
	struct sbx_seccomp_audit_entry *e;
	char desc[sizeof(e->args)];

	describe_args(nr, args, desc, sizeof(desc));
	for (size_t i = 0; i < a->n; i++)
		if (a->entries[i].nr == nr && a->entries[i].errnum == errnum &&
		    strcmp(a->entries[i].args, desc) == 0)
			return &a->entries[i];
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 16;
		a->entries = sbx_xrealloc(a->entries, a->cap * sizeof(*a->entries));
	}
	e = &a->entries[a->n++];
	memset(e, 0, sizeof(*e));
	e->nr = nr;
	e->errnum = errnum;
	memcpy(e->args, desc, sizeof(e->args));
	if (!sbx_seccomp_syscall_name(nr, e->name, sizeof(e->name)))
		snprintf(e->name, sizeof(e->name), "syscall_%d", nr);
	return e;
}

int sbx_seccomp_audit_handle(int notify_fd, struct sbx_seccomp_audit *a, struct sbx_err *err)
{
	struct seccomp_notif *req = a->req;
	struct seccomp_notif_resp *resp = a->resp;
	struct sbx_seccomp_audit_entry *e;
	uint64_t args[6];
	int errnum = SBX_SECCOMP_ERRNO, rc;

	if (!req || !a->policy)
		return sbx_err_set(err, EINVAL, "seccomp audit not initialised");
	memset(req, 0, a->req_size);
	errno = 0;
	rc = notify_rc(seccomp_notify_receive(notify_fd, req));
	if (rc == -ENOENT || rc == -EINTR)
		return 0; /* the caller died (or a signal) before we read it */
	if (rc < 0)
		return sbx_err_set(err, -rc, "cannot receive a seccomp notification");
	memcpy(args, req->data.args, sizeof(args));
	/* Replay the filter; it only notifies what it blocks.  A mismatch
	 * (never expected) still gets an error, never the syscall. */
	if (sbx_seccomp_policy_eval(a->policy, req->data.nr, args, &errnum) != SBX_SC_ERRNO ||
	    errnum <= 0)
		errnum = SBX_SECCOMP_ERRNO;
	e = entry_for(a, req->data.nr, errnum, args);
	if (e->count++ == 0) {
		e->pid = (pid_t)req->pid;
		e->jail_pid = jail_pid_of(e->pid);
		/* The pid may have been reused if the caller died meanwhile. */
		if (seccomp_notify_id_valid(notify_fd, req->id) != 0)
			e->jail_pid = 0;
	}
	a->total++;
	resp->id = req->id;
	resp->val = 0;
	resp->error = -errnum;
	resp->flags = 0;
	errno = 0;
	rc = notify_rc(seccomp_notify_respond(notify_fd, resp));
	if (rc < 0 && rc != -ENOENT)
		return sbx_err_set(err, -rc, "cannot answer a seccomp notification");
	return 1;
}

/*
 * What a blocked call means when it is not plain: clone (blocked only for
 * its namespace flags), unshare and setns are how a command makes a
 * sandbox of its own (bwrap; Codex runs each of its commands in one), which
 * cannot work in a jail that refuses new namespaces.  Codex 0.171 with
 * --sandbox danger-full-access still makes one such clone as it starts
 * (seen under sbx before it drew its first screen), and carries on.
 */
static const char *hint_for(const char *name)
{
	if (!strcmp(name, "clone") || !strcmp(name, "unshare") || !strcmp(name, "setns"))
		return "the command tried to make namespaces, as a sandbox of its own does "
		       "(bwrap, Codex's sandbox), and the jail refuses new namespaces: run it "
		       "without its own sandbox, sbx is its sandbox (Codex: codex --sandbox "
		       "danger-full-access; with it, Codex still tries once as it starts, and goes "
		       "on)";
	return NULL;
}

json_t *sbx_seccomp_audit_entry_json(const struct sbx_seccomp_audit_entry *e)
{
	const char *ename = strerrorname_np(e->errnum);

	return json_pack("{s:s, s:i, s:I, s:i, s:i, s:s, s:s?, s:s*}", "syscall", e->name, "nr",
			 e->nr, "count", (json_int_t)e->count, "pid", (int)e->pid, "jail_pid",
			 (int)e->jail_pid, "errno", ename ? ename : "?", "args",
			 e->args[0] ? e->args : NULL, "hint", hint_for(e->name));
}

json_t *sbx_seccomp_audit_json(const struct sbx_seccomp_audit *a)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < a->n; i++)
		json_array_append_new(arr, sbx_seccomp_audit_entry_json(&a->entries[i]));
	return arr;
}
