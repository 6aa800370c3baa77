/* SPDX-License-Identifier: MIT */
/*
 * cmd/inspect_summary.c - `sbx inspect --summary`: one line (or one JSON
 * object) per sandbox with what a dashboard of many runs wants: how it
 * ended, wall and cpu time, peak memory and processes, connections allowed
 * and denied, seccomp denials, start-up time.  The rows come from each
 * sandbox's record; the run-log events stand in for a record that has no
 * network_events (a run that is still going).
 */
#include <stdio.h>
#include <string.h>

#include "lifecycle.h"

/* Connections of the record (or its log) by result. */
static void count_connections(const struct sbx_sandbox *sb, const json_t *events,
			      json_int_t *allowed, json_int_t *denied, json_int_t *failed)
{
	json_t *net = lc_events_of(sb->rec.network_events, events, "net");
	const json_t *e;
	size_t i;

	*allowed = *denied = *failed = 0;
	json_array_foreach(net, i, e)
	{
		const char *res = json_string_value(json_object_get(e, "result"));

		if (!json_is_true(json_object_get(e, "allowed")))
			(*denied)++;
		else if (res && !strcmp(res, "failed"))
			(*failed)++;
		else
			(*allowed)++;
	}
	json_decref(net);
}

static json_int_t count_seccomp(const struct sbx_sandbox *sb, const json_t *events)
{
	json_t *sc = lc_events_of(sb->rec.seccomp_events, events, "seccomp");
	const json_t *e;
	json_int_t n = 0;
	size_t i;

	json_array_foreach(sc, i, e)
	{
		json_int_t c = json_integer_value(json_object_get(e, "count"));

		n += c > 0 ? c : 1;
	}
	json_decref(sc);
	return n;
}

static json_t *num_or_null(bool set, double v)
{
	return set ? json_real(v) : json_null();
}

json_t *lc_summary_json(const struct sbx_sandbox *sb, const json_t *events)
{
	const struct sbx_record *r = &sb->rec;
	const struct sbx_record_resources *res = &r->resources;
	json_int_t allowed, denied, failed;
	char label[64];
	json_t *o = json_object();

	count_connections(sb, events, &allowed, &denied, &failed);
	json_object_set_new(o, "id", json_string(sb->id));
	json_object_set_new(o, "name", r->name ? json_string(r->name) : json_null());
	json_object_set_new(o, "state", json_string(lc_state_label(sb, label, sizeof(label))));
	json_object_set_new(o, "exit", r->exit.set ? json_integer(r->exit.status) : json_null());
	json_object_set_new(
	    o, "reason", r->exit.set && r->exit.reason ? json_string(r->exit.reason) : json_null());
	json_object_set_new(o, "signal",
			    r->exit.set && r->exit.signal > 0 ? json_integer(r->exit.signal)
							      : json_null());
	json_object_set_new(o, "wall_ms", num_or_null(res->set, res->wall_ms));
	json_object_set_new(o, "cpu_ms", num_or_null(res->set, res->cpu_ms));
	json_object_set_new(o, "mem_peak",
			    res->set ? json_integer((json_int_t)res->mem_peak) : json_null());
	json_object_set_new(o, "pids_peak",
			    res->set ? json_integer((json_int_t)res->pids_peak) : json_null());
	json_object_set_new(o, "startup_ms", num_or_null(r->timings.set, r->timings.total));
	json_object_set_new(
	    o, "connections",
	    json_pack("{s:I, s:I, s:I}", "allowed", allowed, "denied", denied, "failed", failed));
	json_object_set_new(o, "seccomp_denied", json_integer(count_seccomp(sb, events)));
	json_object_set_new(o, "kept", json_boolean(r->kept_set && r->kept));
	json_object_set_new(o, "profile",
			    r->profile.name ? json_string(r->profile.name) : json_null());
	json_object_set_new(o, "created", r->created ? json_string(r->created) : json_null());
	json_object_set_new(o, "ended", r->ended ? json_string(r->ended) : json_null());
	return o;
}

json_t *lc_summary_report(json_t *rows)
{
	json_int_t ok = 0, failed = 0, denied = 0;
	double wall_max = 0, mem_max = 0;
	const json_t *row;
	size_t i;

	json_array_foreach(rows, i, row)
	{
		const json_t *ex = json_object_get(row, "exit");
		const json_t *c = json_object_get(row, "connections");

		if (json_is_integer(ex) && json_integer_value(ex) == 0)
			ok++;
		else if (json_is_integer(ex))
			failed++;
		denied += json_integer_value(json_object_get(c, "denied"));
		if (json_number_value(json_object_get(row, "wall_ms")) > wall_max)
			wall_max = json_number_value(json_object_get(row, "wall_ms"));
		if (json_number_value(json_object_get(row, "mem_peak")) > mem_max)
			mem_max = json_number_value(json_object_get(row, "mem_peak"));
	}
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:o}", "sandboxes",
			 (json_int_t)json_array_size(rows), "ok", ok, "failed", failed, "running",
			 (json_int_t)json_array_size(rows) - ok - failed, "connections_denied",
			 denied, "wall_ms_max", wall_max, "mem_peak_max", (json_int_t)mem_max,
			 "rows", json_incref(rows));
}

/* "0.04 ms", "3.7 ms", "37 ms", "95.1 s": a wall time as a table cell. */
static const char *wall_text(double ms, char *buf, size_t len)
{
	if (ms >= 10000)
		snprintf(buf, len, "%.1f s", ms / 1000);
	else if (ms < 1)
		snprintf(buf, len, "%.2f ms", ms);
	else if (ms < 10)
		snprintf(buf, len, "%.1f ms", ms);
	else
		snprintf(buf, len, "%.0f ms", ms);
	return buf;
}

void lc_print_summary(const json_t *report, FILE *out)
{
	const json_t *rows = json_object_get(report, "rows"), *row;
	size_t i;
	char mem[32], w[32];

	fprintf(out, "%-12s  %-16s  %-18s  %9s  %10s  %6s  %7s  %s\n", "ID", "NAME", "STATE",
		"WALL", "PEAK MEM", "DENIED", "ALLOWED", "SECCOMP");
	json_array_foreach(rows, i, row)
	{
		const json_t *c = json_object_get(row, "connections");
		const json_t *wall = json_object_get(row, "wall_ms");
		const json_t *m = json_object_get(row, "mem_peak");
		_cleanup_free_ char *name = lc_text(json_object_get(row, "name"));
		_cleanup_free_ char *state = lc_text(json_object_get(row, "state"));

		if (json_is_number(wall))
			wall_text(json_number_value(wall), w, sizeof(w));
		else
			snprintf(w, sizeof(w), "-");
		fprintf(out, "%-12s  %-16s  %-18s  %9s  %10s  %6lld  %7lld  %lld\n",
			json_string_value(json_object_get(row, "id")), name, state, w,
			json_is_integer(m)
			    ? lc_size((double)json_integer_value(m), mem, sizeof(mem))
			    : "-",
			(long long)json_integer_value(json_object_get(c, "denied")),
			(long long)json_integer_value(json_object_get(c, "allowed")),
			(long long)json_integer_value(json_object_get(row, "seccomp_denied")));
	}
	fprintf(out,
		"%lld %s: %lld exited 0, %lld failed, %lld running or lost; %lld "
		"connections denied; longest %s, most memory %s\n",
		(long long)json_integer_value(json_object_get(report, "sandboxes")),
		json_integer_value(json_object_get(report, "sandboxes")) == 1 ? "sandbox"
									      : "sandboxes",
		(long long)json_integer_value(json_object_get(report, "ok")),
		(long long)json_integer_value(json_object_get(report, "failed")),
		(long long)json_integer_value(json_object_get(report, "running")),
		(long long)json_integer_value(json_object_get(report, "connections_denied")),
		wall_text(json_number_value(json_object_get(report, "wall_ms_max")), w, sizeof(w)),
		lc_size((double)json_integer_value(json_object_get(report, "mem_peak_max")), mem,
			sizeof(mem)));
}
