/* SPDX-License-Identifier: MIT */
/*
 * lib/seccomp/seccomp_embed.c - the built-in seccomp policies as resolved and
 * compiled at build time.  lib/seccomp/gen/seccomp_gen.c runs the code of
 * lib/seccomp/seccomp.c (name lookups, libseccomp's compiler) once per build and
 * writes the rules and the BPF programs into lib/seccomp/seccomp_builtin.c; a run
 * copies them instead of spending ~0.8 ms doing the same again.
 *
 * Both depend on the libseccomp (its syscall table, its code generator)
 * and the architecture, so they are used only when seccomp_version() and
 * seccomp_arch_native() are those of the build; otherwise, and for policy
 * files, the policy is resolved and compiled at run time as before.
 * tests/unit/test_seccomp.c checks that the embedded programs equal, word
 * for word, what libseccomp compiles from the same policy now.
 */
#include "seccomp.h"
#include "seccomp_int.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The embedded policies fit this process's libseccomp (looked up once). */
static bool embedded_fits(void)
{
	static int fits = -1;

	if (fits < 0) {
		const struct sbx_seccomp_embedded *e = &sbx_seccomp_embedded;
		const struct scmp_version *v = seccomp_version();

		fits = e->n > 0 && v && v->major == e->major && v->minor == e->minor &&
		       v->micro == e->micro && seccomp_arch_native() == e->arch;
	}
	return fits;
}

const struct sbx_seccomp_builtin *sbx_seccomp_embedded_get(const char *name)
{
	const struct sbx_seccomp_embedded *e = &sbx_seccomp_embedded;

	if (!name || !embedded_fits())
		return NULL;
	for (size_t i = 0; i < e->n; i++)
		if (strcmp(e->policies[i].name, name) == 0)
			return &e->policies[i];
	return NULL;
}

int sbx_seccomp_policy_builtin(struct sbx_seccomp_policy *p, const char *name)
{
	const struct sbx_seccomp_builtin *b = sbx_seccomp_embedded_get(name);

	if (!b)
		return sbx_seccomp_policy_builtin_resolve(p, name);
	if (p->cap < b->n) {
		p->rules = sbx_xrealloc(p->rules, b->n * sizeof(*p->rules));
		p->cap = b->n;
	}
	if (b->n)
		memcpy(p->rules, b->rules, b->n * sizeof(*p->rules));
	p->n = b->n;
	p->def = b->def;
	p->def_err = b->def_err;
	return 0;
}

/* What libseccomp checks before it compiles an action (-1: not asked). */
static bool action_avail(int *cache, uint32_t action)
{
	if (*cache < 0)
		*cache = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
	return *cache;
}

const struct sbx_seccomp_prog *sbx_seccomp_embedded_prog(const char *name, bool notify)
{
	static int kill_ok = -1, notif_ok = -1;
	const struct sbx_seccomp_builtin *b = sbx_seccomp_embedded_get(name);
	const struct sbx_seccomp_prog *prog = b ? &b->prog[notify ? 1 : 0] : NULL;

	if (!prog || !prog->insns || prog->len == 0)
		return NULL;
	/* The bad-architecture action, and the notify one in audit mode. */
	if (!action_avail(&kill_ok, SECCOMP_RET_KILL_PROCESS))
		return NULL;
	if (notify && !action_avail(&notif_ok, SECCOMP_RET_USER_NOTIF))
		return NULL;
	return prog;
}
