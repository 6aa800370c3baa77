/* SPDX-License-Identifier: MIT */
/* lib/config.c - defaults and teardown of struct sbx_config. */
#include "config.h"

#include <string.h>

void sbx_config_init(struct sbx_config *c)
{
	memset(c, 0, sizeof(*c));
	c->persist = SBX_PERSIST_ON_FAILURE;
	c->rootfs_writable = true;
	c->env_clear = true;
	c->net = SBX_NET_NONE;
	c->memory = c->pids = c->cpus_milli = c->time_ms = SBX_UNSET;
	c->nofile = c->fsize = c->disk = SBX_UNSET;
	c->image_size = c->image_entries = SBX_UNSET;
	c->seccomp = sbx_xstrdup("default");
	c->no_new_privs = true;
}

void sbx_config_free(struct sbx_config *c)
{
	free(c->profile_name);
	sbx_strv_free(&c->sources);
	free(c->rootfs);
	free(c->hostname);
	free(c->workdir);
	for (size_t i = 0; i < c->n_mounts; i++) {
		free(c->mounts[i].src);
		free(c->mounts[i].dst);
	}
	free(c->mounts);
	sbx_strv_free(&c->env_pass);
	sbx_strv_free(&c->env_set);
	for (size_t i = 0; i < c->n_secrets; i++) {
		free(c->secrets[i].name);
		free(c->secrets[i].ref);
	}
	free(c->secrets);
	sbx_strv_free(&c->allow);
	free(c->seccomp);
	memset(c, 0, sizeof(*c));
}

const char *sbx_net_mode_name(enum sbx_net_mode m)
{
	static const char *const n[] = { "none", "loopback", "proxy", "host" };

	return (unsigned)m < SBX_ARRAY_SIZE(n) ? n[m] : "?";
}

const char *sbx_persist_name(enum sbx_persist p)
{
	static const char *const n[] = { "never", "on-failure", "always" };

	return (unsigned)p < SBX_ARRAY_SIZE(n) ? n[p] : "?";
}

const char *sbx_mount_kind_name(enum sbx_mount_kind k)
{
	static const char *const n[] = { "bind", "ro-bind", "overlay", "tmpfs", "mask" };

	return (unsigned)k < SBX_ARRAY_SIZE(n) ? n[k] : "?";
}
