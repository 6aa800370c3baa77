/* SPDX-License-Identifier: MIT */
/*
 * lib/run/run_publish.c - a run's published ports ([network] publish,
 * --publish): the host listeners made before the jail (a port in use stops
 * the run before anything ran), the socket helper in the jail's network
 * namespace once it exists, each connection a "publish" event, and the
 * record's "publish" list (with the preview URLs and the counts).
 */
#include <string.h>

#include "run_int.h"

int sbx_run_publish_listen(struct sbx_run *c, struct sbx_err *err)
{
	struct sbx_publish_port *ports;
	int r;

	if (c->cfg->publish.n == 0)
		return 0;
	ports = sbx_xcalloc(c->cfg->publish.n, sizeof(*ports));
	for (size_t i = 0; i < c->cfg->publish.n; i++) {
		r = sbx_publish_parse(c->cfg->publish.v[i], &ports[i], err);
		if (r < 0) {
			free(ports);
			return r;
		}
	}
	r = sbx_publish_listen(&c->pub, ports, c->cfg->publish.n, err);
	free(ports);
	return r;
}

/* What the network mode means for a published port. */
static const char *mode_note(const struct sbx_run *c)
{
	switch (c->cfg->net) {
	case SBX_NET_HOST:
		return "network host: the jail's loopback is the host's, so its port is reachable "
		       "on the host without the token too";
	case SBX_NET_NONE:
		return "network none: the jail reaches nothing; the host reaches the published "
		       "ports";
	default:
		return "the host reaches the published ports; the jail gets no way out through "
		       "them";
	}
}

void sbx_run_publish_log(struct sbx_run *c)
{
	json_t *ports;

	if (!c->pub)
		return;
	ports = sbx_publish_json(c->pub);
	json_decref(c->sb.rec.publish);
	c->sb.rec.publish = json_incref(ports);
	sbx_log_event(&c->log, "publish",
		      json_pack("{s:o, s:s}", "ports", ports, "summary", mode_note(c)));
}

static int make_socket(int family, void *data)
{
	struct sbx_run *c = data;

	return sbx_jail_netsock_get(&c->netsock, family);
}

static int on_events(int fd, void *data)
{
	struct sbx_run *c = data;
	json_t *evs = sbx_publish_take_events(c->pub), *ev;
	json_t *kept = c->log.events;
	size_t i;

	(void)fd;
	/* To the logs only, not into the run's memory: a dev server's
	 * requests are unbounded (the record keeps their counts). */
	c->log.events = NULL;
	json_array_foreach(evs, i, ev)
	{
		json_incref(ev);
		sbx_log_event(&c->log, "connection", ev);
	}
	c->log.events = kept;
	json_decref(evs);
	return 0;
}

int sbx_run_publish_start(struct sbx_run *c, struct sbx_jail_io *io, struct sbx_err *err)
{
	int r;

	if (!c->pub)
		return 0;
	r = sbx_jail_netsock_start(&c->jail, &c->netsock, err);
	if (r == 0)
		r = sbx_publish_start(c->pub, make_socket, c, err);
	if (r < 0)
		return sbx_err_wrap(err, "the published ports");
	if (io->n_watch < SBX_JAIL_MAX_WATCH)
		io->watch[io->n_watch++] =
		    (struct sbx_jail_watch){sbx_publish_event_fd(c->pub), on_events, c};
	return 0;
}

void sbx_run_publish_finish(struct sbx_run *c)
{
	if (!c->pub)
		return;
	sbx_publish_stop(c->pub);
	on_events(-1, c);
	json_decref(c->sb.rec.publish);
	c->sb.rec.publish = sbx_publish_json(c->pub);
}

void sbx_run_publish_free(struct sbx_run *c)
{
	if (c->pub) {
		sbx_publish_free(c->pub);
		c->pub = NULL;
	}
	sbx_jail_netsock_stop(&c->netsock);
}
