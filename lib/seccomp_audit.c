/* SPDX-License-Identifier: MIT */
/*
 * lib/seccomp_audit.c - the supervisor side of seccomp audit mode.
 *
 * The jail loads its filter with SCMP_ACT_NOTIFY in place of every ERRNO
 * action (sbx_seccomp_load with opts.notify), so a blocked call waits in
 * the kernel; the supervisor receives it here, records the syscall, and
 * answers with the errno the policy would have returned.  The filter still
 * decides what is blocked: the supervisor can only choose the error, never
 * let a call through (no SECCOMP_USER_NOTIF_FLAG_CONTINUE), and it never
 * reads the caller's memory, so pointer arguments (paths, clone3's struct)
 * are not seen.  See lib/seccomp_policy.md, "Audit".
 */
#include "seccomp.h"
#include "seccomp_int.h"

#include <linux/seccomp.h>
#include <string.h>
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

	struct sbx_seccomp_opts o = {.policy = policy, .notify = true};

	memset(a, 0, sizeof(*a));
	/* Compile the audit-mode filter now, before the jail is cloned; the
	 * replay below then uses the very policy that was compiled. */
	rc = sbx_seccomp_prepare(&o, err);
	if (rc < 0)
		return rc;
	rc = sbx_seccomp_policy_get(policy, &a->policy, err);
	if (rc < 0)
		return rc;
	rc = seccomp_notify_alloc(&req, &resp);
	if (rc < 0) {
		sbx_seccomp_policy_free(a->policy);
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

static struct sbx_seccomp_audit_entry *entry_for(struct sbx_seccomp_audit *a, int nr, int errnum)
{
	struct sbx_seccomp_audit_entry *e;

	for (size_t i = 0; i < a->n; i++)
		if (a->entries[i].nr == nr && a->entries[i].errnum == errnum)
			return &a->entries[i];
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 16;
		a->entries = sbx_xrealloc(a->entries, a->cap * sizeof(*a->entries));
	}
	e = &a->entries[a->n++];
	memset(e, 0, sizeof(*e));
	e->nr = nr;
	e->errnum = errnum;
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
	e = entry_for(a, req->data.nr, errnum);
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

json_t *sbx_seccomp_audit_entry_json(const struct sbx_seccomp_audit_entry *e)
{
	const char *ename = strerrorname_np(e->errnum);

	return json_pack("{s:s, s:i, s:I, s:i, s:i, s:s}", "syscall", e->name, "nr", e->nr, "count",
			 (json_int_t)e->count, "pid", (int)e->pid, "jail_pid", (int)e->jail_pid,
			 "errno", ename ? ename : "?");
}

json_t *sbx_seccomp_audit_json(const struct sbx_seccomp_audit *a)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < a->n; i++)
		json_array_append_new(arr, sbx_seccomp_audit_entry_json(&a->entries[i]));
	return arr;
}
