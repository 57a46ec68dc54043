// SPDX-License-Identifier: LGPL-2.1
/*
 * sink.ustitch.text: the trace as sink.text.pretty prints it, plus, under
 * each event that has the $app.ustitch:stack_id context, its user stack,
 * symbolized; $app.ustitch:locks is printed as the locks' names.
 *
 *   babeltrace2 --plugin-path=DIR TRACE -c sink.ustitch.text [-p PARAMS]
 *
 * A trace read elsewhere: -p debuginfod=yes (DEBUGINFOD_URLS) fetches the
 * files by build-id, -p archive=DIR reads them from an archive.
 *
 * ustitch:stack and ustitch:object events feed the tables (and print as
 * one-line summaries); every other event prints as it comes,
 * except that one whose stack has not been seen yet waits for it in the
 * lookahead queue (ust_bt2_queue.c).
 *
 * It also follows a live trace (src.ctf.lttng-live): streams, and whole
 * traces with per-process buffers, appear over time, the upstream
 * iterator says "try again" while nothing is new, and the source's
 * inactivity messages tell how far trace time has gone while the
 * application is quiet, so a waiting event is printed when its wait is
 * over even when no later event comes.  Nothing assumes the whole trace
 * is there: stacks and objects are taken as they come.
 */
#include <babeltrace2/babeltrace.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ust_bt2.h"
#include "ustitch/res_debuginfod.h"

#define OBJ_WINDOW_NS		10000000LL	/* objects follow their event within µs */
#define CTX_PREFIX		"_app_ustitch_"

enum ec_kind { EC_OTHER = 1, EC_STACK, EC_OBJECT };

struct text {
	bt_message_iterator *it;
	struct ust_bt2_stacks st;
	struct ust_bt2_queue q;
	struct ust_bt2_clock clk;
	struct ust_sb line;
	struct ust_hmap ec_kinds;	/* event class pointer -> enum ec_kind */
	struct ust_hmap ctx_idx;	/* context class -> packed member indices */
	struct ust_hmap pkt_skip;	/* packet context class -> hidden members */
	int64_t now;			/* latest event or inactivity time seen */
	bool have_now;
	bool live;			/* an inactivity message came: a live source */
	/* parameters */
	int64_t lookahead_ns;
	uint64_t max_pending;
	char *debug_dirs[UST_BT2_MAX_DEBUG_DIRS];
	int nr_debug_dirs;
	uint64_t missing;
	struct ust_bt2_profile prof;	/* folded, flamegraph, pprof, top */
};

/* --- small field helpers ----------------------------------------------- */

static const bt_field *member(const bt_field *st, const char *name)
{
	if (!st || bt_field_get_class_type(st) != BT_FIELD_CLASS_TYPE_STRUCTURE)
		return NULL;
	return bt_field_structure_borrow_member_field_by_name_const(st, name);
}

static bool as_u64(const bt_field *f, uint64_t *v)
{
	bt_field_class_type t;

	if (!f)
		return false;
	t = bt_field_get_class_type(f);
	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_VARIANT))
		return as_u64(bt_field_variant_borrow_selected_option_field_const(f), v);
	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
		*v = bt_field_integer_unsigned_get_value(f);
	else if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
		*v = (uint64_t)bt_field_integer_signed_get_value(f);
	else
		return false;
	return true;
}

/* An app context's value: NULL for the "_none" option. */
static const bt_field *ctx_value(const bt_field *f)
{
	const bt_field *v;

	if (!f || !bt_field_class_type_is(bt_field_get_class_type(f), BT_FIELD_CLASS_TYPE_VARIANT))
		return f;
	v = bt_field_variant_borrow_selected_option_field_const(f);
	return bt_field_get_class_type(v) == BT_FIELD_CLASS_TYPE_STRUCTURE ? NULL : v;
}

static const char *ctx_string(const bt_field *f)
{
	const bt_field *v = ctx_value(f);

	return v && bt_field_get_class_type(v) == BT_FIELD_CLASS_TYPE_STRING ?
	       bt_field_string_get_value(v) : NULL;
}

/*
 * An array of integers as a malloc()ed copy with its length in @n; NULL
 * (and *@n 0) when @f is not an array or an element is not an integer.
 * @oom is set when memory ran out.
 */
static uint64_t *u64_array(const bt_field *f, uint64_t *n, bool *oom)
{
	uint64_t i, *v;

	*n = 0;
	if (!f || !bt_field_class_type_is(bt_field_get_class_type(f), BT_FIELD_CLASS_TYPE_ARRAY))
		return NULL;
	*n = bt_field_array_get_length(f);
	v = calloc(*n + 1, sizeof(*v));
	if (!v) {
		*oom = true;
		return NULL;
	}
	for (i = 0; i < *n; i++)
		if (!as_u64(bt_field_array_borrow_element_field_by_index_const(f, i), &v[i])) {
			free(v);
			*n = 0;
			return NULL;
		}
	return v;
}

/* --- per-class caches --------------------------------------------------- */

/*
 * Looking members up by name for every event costs a hash lookup each;
 * a class's member indices never change, so they are found once.
 */
enum { IDX_VPID, IDX_STACK, IDX_DEPTH, IDX_LOCKS, NR_IDX };
#define IDX_NONE 0xffff

static uint64_t member_index(const bt_field_class *fc, const char *name)
{
	uint64_t n = bt_field_class_structure_get_member_count(fc), i;

	for (i = 0; i < n && i < IDX_NONE; i++)
		if (!strcmp(bt_field_class_structure_member_get_name(
				bt_field_class_structure_borrow_member_by_index_const(fc, i)), name))
			return i;
	return IDX_NONE;
}

/*
 * The caches are keyed by class pointers, so they hold a reference on each
 * class: a live trace's classes may go away with their trace (per-process
 * buffers) and their memory must not come back as another class.
 */
static void cache_put(struct ust_hmap *m, const void *key, uint64_t val, bool event_class)
{
	if (ust_hmap_put(m, (uint64_t)(uintptr_t)key, val))
		return;		/* out of memory: looked up again next time */
	if (event_class)
		bt_event_class_get_ref(key);
	else
		bt_field_class_get_ref(key);
}

static void cache_fini(struct ust_hmap *m, bool event_class)
{
	uint64_t key, val;
	size_t pos = 0;

	while (ust_hmap_next(m, &pos, &key, &val)) {
		if (event_class)
			bt_event_class_put_ref((const bt_event_class *)(uintptr_t)key);
		else
			bt_field_class_put_ref((const bt_field_class *)(uintptr_t)key);
	}
	ust_hmap_fini(m);
}

static uint64_t ctx_indices(struct text *t, const bt_field *ctx)
{
	static const char *const names[NR_IDX] = {
		"vpid", CTX_PREFIX "stack_id", CTX_PREFIX "lock_depth", CTX_PREFIX "locks",
	};
	const bt_field_class *fc = bt_field_borrow_class_const(ctx);
	uint64_t packed = 0, i;

	if (ust_hmap_get(&t->ctx_idx, (uint64_t)(uintptr_t)fc, &packed))
		return packed;
	for (i = 0; i < NR_IDX; i++)
		packed |= member_index(fc, names[i]) << (16 * i);
	cache_put(&t->ctx_idx, fc, packed, false);
	return packed;
}

static const bt_field *ctx_member(const bt_field *ctx, uint64_t packed, int which)
{
	uint64_t i = packed >> (16 * which) & 0xffff;

	return i == IDX_NONE ? NULL : bt_field_structure_borrow_member_field_by_index_const(ctx, i);
}

/* sink.text.pretty shows only cpu_id of an LTTng packet context. */
static uint64_t packet_skip(struct text *t, const bt_field *pctx)
{
	static const char *const hidden[] = {
		"timestamp_begin", "timestamp_end", "content_size", "packet_size",
		"packet_seq_num", "events_discarded",
	};
	const bt_field_class *fc = bt_field_borrow_class_const(pctx);
	uint64_t mask = 0, i;
	size_t h;

	if (ust_hmap_get(&t->pkt_skip, (uint64_t)(uintptr_t)fc, &mask))
		return mask;
	for (h = 0; h < sizeof(hidden) / sizeof(hidden[0]); h++) {
		i = member_index(fc, hidden[h]);
		if (i < 64)
			mask |= (uint64_t)1 << i;
	}
	cache_put(&t->pkt_skip, fc, mask, false);
	return mask;
}

/* --- per-event facts --------------------------------------------------- */

struct evinfo {
	struct text *t;
	const bt_field *ctx;
	bool has_stack_ctx;
	uint64_t stack_id;		/* 0: none or no frame */
	bool stack_none;
	int pid;			/* vpid context, or -1 */
	const char *locks;		/* NULL: no value */
	bool has_depth;
	bool ours;			/* the context has one of ours */
};

static void event_info(struct text *t, const bt_event *ev, struct evinfo *e)
{
	const bt_field *f;
	uint64_t v, idx;

	memset(e, 0, sizeof(*e));
	e->t = t;
	e->pid = -1;
	e->ctx = bt_event_borrow_common_context_field_const(ev);
	if (!e->ctx || bt_field_get_class_type(e->ctx) != BT_FIELD_CLASS_TYPE_STRUCTURE)
		return;
	idx = ctx_indices(t, e->ctx);
	e->ours = (idx >> 16) != ((uint64_t)1 << 48) - 1;
	if (as_u64(ctx_member(e->ctx, idx, IDX_VPID), &v))
		e->pid = (int)v;
	f = ctx_member(e->ctx, idx, IDX_STACK);
	if (f) {
		e->has_stack_ctx = true;
		e->stack_none = !ctx_value(f);
		if (!e->stack_none)
			as_u64(f, &e->stack_id);
	}
	e->locks = ctx_string(ctx_member(e->ctx, idx, IDX_LOCKS));
	e->has_depth = ctx_value(ctx_member(e->ctx, idx, IDX_DEPTH)) != NULL;
}

static bool lock_covered(void *data, uint64_t addr, bool more)
{
	struct evinfo *e = data;

	return more || ust_bt2_objs_cover(&e->t->st, e->pid, addr);
}

static bool lock_name(void *data, uint64_t addr, bool more)
{
	void **a = data;
	struct evinfo *e = a[0];
	struct ust_sb *out = a[1];

	ust_sb_puts(out, out->len && ust_sb_str(out)[out->len - 1] != '[' ? ", " : " ");
	if (more)
		ust_sb_puts(out, "...");
	else
		ust_bt2_name_addr(&e->t->st, e->pid, addr, out);
	return true;
}

/* --- printing ---------------------------------------------------------- */

static enum ust_bt2_hook_ret ctx_hook(void *data, const char *name, const bt_field *f,
				      struct ust_sb *out)
{
	struct evinfo *e = data;
	const char *k;
	size_t len;

	if (strncmp(name, CTX_PREFIX, sizeof(CTX_PREFIX) - 1))
		return UST_BT2_MEMBER_DEFAULT;
	k = name + sizeof(CTX_PREFIX) - 1;
	len = strlen(k);
	if (len > 4 && !strcmp(k + len - 4, "_tag"))
		return UST_BT2_MEMBER_SKIP;	/* the variant's selector */
	ust_sb_puts(out, name);
	if (!strcmp(k, "stack_id")) {
		if (e->stack_none) {
			ust_sb_puts(out, " = _none");
		} else {
			ust_sb_puts(out, " = ");
			ust_bt2_put_hex(out, e->stack_id);
		}
	} else if (!strcmp(k, "lock_depth")) {
		uint64_t v;

		if (ctx_value(f) && as_u64(f, &v))
			ust_sb_printf(out, " = %" PRId64, (int64_t)v);
		else
			ust_sb_puts(out, " = _none");
	} else if (!strcmp(k, "locks")) {
		void *a[2] = { e, out };

		if (!e->locks && !e->has_depth) {
			ust_sb_puts(out, " = _none");
			return UST_BT2_MEMBER_DONE;
		}
		ust_sb_puts(out, " = [");
		ust_bt2_each_lock(e->locks, lock_name, a);
		ust_sb_puts(out, " ]");
	} else {
		ust_sb_reset(out);
		return UST_BT2_MEMBER_DEFAULT;
	}
	return UST_BT2_MEMBER_DONE;
}

static void stack_summary(const bt_field *payload, struct ust_sb *out)
{
	uint64_t id = 0, pid = 0, flags = 0;
	const bt_field *offs = member(payload, "offsets");
	struct ust_sb how;

	as_u64(member(payload, "stack_id"), &id);
	as_u64(member(payload, "pid"), &pid);
	ust_sb_printf(out, "{ stack_id = 0x%" PRIx64 ", pid = %" PRId64 ", frames = %" PRIu64,
		      id, (int64_t)pid, offs ? bt_field_array_get_length(offs) : 0);
	/* How it was taken (providers before the CFI walk have no flags). */
	if (as_u64(member(payload, "flags"), &flags)) {
		ust_sb_init(&how);
		ust_render_stack_flags((uint32_t)flags, &how);
		ust_sb_printf(out, ", how = \"%s\"",
			      !strncmp(ust_sb_str(&how), "; ", 2) ? ust_sb_str(&how) + 2 : ust_sb_str(&how));
		ust_sb_fini(&how);
	}
	ust_sb_puts(out, " }");
}

/* { pid = N, base = 0x..., path = "...", build_id = hex } */
static void object_summary(const bt_field *payload, struct ust_sb *out)
{
	const bt_field *path = member(payload, "path"), *bid = member(payload, "build_id");
	uint64_t pid = 0, base = 0, n = 0, i, b;

	as_u64(member(payload, "pid"), &pid);
	as_u64(member(payload, "base"), &base);
	ust_sb_printf(out, "{ pid = %" PRId64 ", base = 0x%" PRIx64 ", path = \"%s\", build_id = ",
		      (int64_t)pid, base,
		      path && bt_field_get_class_type(path) == BT_FIELD_CLASS_TYPE_STRING ?
		      bt_field_string_get_value(path) : "");
	if (bid && bt_field_class_type_is(bt_field_get_class_type(bid), BT_FIELD_CLASS_TYPE_ARRAY))
		n = bt_field_array_get_length(bid);
	for (i = 0; i < n; i++)
		if (as_u64(bt_field_array_borrow_element_field_by_index_const(bid, i), &b))
			ust_sb_printf(out, "%02x", (unsigned int)(b & 0xff));
	ust_sb_puts(out, n ? " }" : "none }");
}

static enum ec_kind kind_of(struct text *t, const bt_event_class *ec)
{
	uint64_t k;
	const char *name;

	if (ust_hmap_get(&t->ec_kinds, (uint64_t)(uintptr_t)ec, &k))
		return (enum ec_kind)k;
	name = bt_event_class_get_name(ec);
	k = EC_OTHER;
	if (name && !strcmp(name, "ustitch:stack"))
		k = EC_STACK;
	else if (name && !strcmp(name, "ustitch:object"))
		k = EC_OBJECT;
	cache_put(&t->ec_kinds, ec, k, true);
	return (enum ec_kind)k;
}

/* An event with a stack into the profiles: its name, task, CPU and time. */
static void profile_event(struct text *t, const bt_message *msg, const struct evinfo *e,
			  const bt_field *pctx, struct ust_bt2_stack *st)
{
	const bt_event *ev = bt_message_event_borrow_event_const(msg);
	const bt_field *name = member(e->ctx, "procname");
	struct ust_bt2_profile_ev pe = {
		.event = bt_event_class_get_name(bt_event_borrow_class_const(ev)),
		.tid = e->pid,
		.cpu = -1,
		.stack = st,
	};
	uint64_t v;

	/* Named once, when it will not name differently later. */
	if (st && ust_bt2_stack_complete(&t->st, st))
		pe.stack_key = e->stack_id;

	if (name && bt_field_get_class_type(name) == BT_FIELD_CLASS_TYPE_STRING)
		pe.comm = bt_field_string_get_value(name);
	if (as_u64(member(e->ctx, "vtid"), &v))
		pe.tid = (int)v;
	if (as_u64(member(pctx, "cpu_id"), &v))
		pe.cpu = (int)v;
	pe.has_time = bt_message_event_borrow_stream_class_default_clock_class_const(msg) &&
		      bt_clock_snapshot_get_ns_from_origin(
			      bt_message_event_borrow_default_clock_snapshot_const(msg), &pe.ns) ==
		      BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK;
	ust_bt2_profile_add(&t->prof, &pe);
}

static void print_event(struct text *t, const bt_message *msg)
{
	const bt_event *ev = bt_message_event_borrow_event_const(msg);
	const bt_event_class *ec = bt_event_borrow_class_const(ev);
	const bt_packet *pkt = bt_event_borrow_packet_const(ev);
	const bt_trace *tr = bt_stream_borrow_trace_const(bt_event_borrow_stream_const(ev));
	const bt_value *host = bt_trace_borrow_environment_entry_value_by_name_const(tr, "hostname");
	const bt_field *pctx = pkt ? bt_packet_borrow_context_field_const(pkt) : NULL;
	const bt_field *sctx = bt_event_borrow_specific_context_field_const(ev);
	const bt_field *payload = bt_event_borrow_payload_field_const(ev);
	struct ust_sb *out = &t->line;
	bool sep = false;
	struct evinfo e;

	event_info(t, ev, &e);
	ust_sb_reset(out);
	ust_bt2_pretty_time(&t->clk,
			    bt_message_event_borrow_stream_class_default_clock_class_const(msg) ?
			    bt_message_event_borrow_default_clock_snapshot_const(msg) : NULL, out);
	if (host && bt_value_is_string(host))
		ust_sb_printf(out, "%s ", bt_value_string_get(host));
	ust_sb_printf(out, "%s: ", bt_event_class_get_name(ec));
	if (pctx) {
		ust_bt2_pretty_struct(pctx, packet_skip(t, pctx), NULL, NULL, out);
		sep = true;
	}
	if (e.ctx) {
		ust_sb_puts(out, sep ? ", " : "");
		/* Only our contexts need the hook. */
		ust_bt2_pretty_struct(e.ctx, 0, e.ours ? ctx_hook : NULL, &e, out);
		sep = true;
	}
	if (sctx) {
		ust_sb_puts(out, sep ? ", " : "");
		ust_bt2_pretty_struct(sctx, 0, NULL, NULL, out);
		sep = true;
	}
	if (payload) {
		ust_sb_puts(out, sep ? ", " : "");
		if (kind_of(t, ec) == EC_STACK)
			stack_summary(payload, out);
		else if (kind_of(t, ec) == EC_OBJECT)
			object_summary(payload, out);
		else
			ust_bt2_pretty_struct(payload, 0, NULL, NULL, out);
	}
	if (e.has_stack_ctx && !e.stack_none) {
		struct ust_bt2_stack *st = e.stack_id ? ust_bt2_stacks_find(&t->st, e.stack_id) : NULL;

		if (t->prof.on)
			profile_event(t, msg, &e, pctx, st);
		if (st) {
			ust_bt2_render_stack(&t->st, st, out);
		} else if (!e.stack_id) {
			ust_sb_puts(out, "\n[ustitch: no user stack: no frame record at the tracepoint]");
		} else {
			t->missing++;
			ust_sb_printf(out, "\n[ustitch: stack 0x%" PRIx64 " is not in this trace: "
				      "its ustitch:stack event was lost, disabled, or recorded "
				      "before the trace began]", e.stack_id);
		}
	}
	ust_sb_puts(out, "\n");
	fputs(ust_sb_str(out), stdout);
}

static void print_message(struct text *t, const bt_message *msg)
{
	uint64_t n;

	switch (bt_message_get_type(msg)) {
	case BT_MESSAGE_TYPE_EVENT:
		print_event(t, msg);
		break;
	case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
		if (bt_message_discarded_events_get_count(msg, &n) ==
		    BT_PROPERTY_AVAILABILITY_AVAILABLE)
			fprintf(stderr, "WARNING: The tracer discarded %" PRIu64 " events.\n", n);
		else
			fprintf(stderr, "WARNING: The tracer discarded events.\n");
		break;
	default:
		break;
	}
}

/* --- intake: tables, then the queue ------------------------------------- */

/* The fields as plain values; what they mean is ust_bt2_take_stack()'s. */
static int take_stack(struct text *t, const bt_field *p)
{
	struct ust_bt2_stack_ev ev = { 0 };
	uint64_t *offs, *inos, *devs;
	bool oom = false;
	int ret;

	if (!as_u64(member(p, "stack_id"), &ev.id) || !as_u64(member(p, "pid"), &ev.pid))
		return 0;
	ev.offs = offs = u64_array(member(p, "offsets"), &ev.nr_offs, &oom);
	ev.inos = inos = u64_array(member(p, "inodes"), &ev.nr_inos, &oom);
	ev.devs = devs = u64_array(member(p, "devs"), &ev.nr_devs, &oom);
	ret = oom ? -1 : ust_bt2_take_stack(&t->st, &ev);
	free(offs);
	free(inos);
	free(devs);
	return ret;
}

/* Likewise: ust_bt2_take_object(). */
static int take_object(struct text *t, const bt_field *p)
{
	const bt_field *path = member(p, "path");
	struct ust_bt2_object_ev ev = { 0 };
	bool oom = false;
	uint64_t *bid;
	int ret;

	if (!as_u64(member(p, "pid"), &ev.pid) || !as_u64(member(p, "base"), &ev.base) ||
	    !as_u64(member(p, "lo"), &ev.lo) || !as_u64(member(p, "hi"), &ev.hi) ||
	    !as_u64(member(p, "dev"), &ev.dev) || !as_u64(member(p, "ino"), &ev.ino))
		return 0;
	if (path && bt_field_get_class_type(path) == BT_FIELD_CLASS_TYPE_STRING)
		ev.path = bt_field_string_get_value(path);
	ev.bid = bid = u64_array(member(p, "build_id"), &ev.nr_bid, &oom);
	ret = oom ? -1 : ust_bt2_take_object(&t->st, &ev);
	free(bid);
	return ret;
}

static bool ready(struct text *t, const struct ust_bt2_item *it)
{
	struct ust_bt2_stack *st;
	struct evinfo e;

	if (it->stack_id) {
		st = ust_bt2_stacks_find(&t->st, it->stack_id);
		if (!st || !ust_bt2_stack_complete(&t->st, st))
			return false;
	}
	if (it->lock_wait) {
		event_info(t, bt_message_event_borrow_event_const(it->msg), &e);
		return ust_bt2_each_lock(e.locks, lock_covered, &e);
	}
	return true;
}

static void drain(struct text *t, bool all)
{
	struct ust_bt2_item *h;

	while ((h = ust_bt2_queue_head(&t->q))) {
		if (!all && t->q.len <= t->max_pending && !ready(t, h) &&
		    !(h->timed && t->have_now && t->now > h->deadline))
			break;
		print_message(t, h->msg);
		ust_bt2_queue_pop(&t->q);
	}
}

/*
 * A live source's "nothing before this time" (src.ctf.lttng-live sends
 * one per quiet stream every live timer period): trace time goes on,
 * which ends the wait of events whose stack never comes.  Not queued:
 * nothing prints it.
 */
static void take_inactivity(struct text *t, const bt_message *msg)
{
	int64_t ns;

	t->live = true;
	if (bt_clock_snapshot_get_ns_from_origin(
		    bt_message_message_iterator_inactivity_borrow_clock_snapshot_const(msg), &ns) ==
	    BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK && (!t->have_now || ns > t->now)) {
		t->now = ns;
		t->have_now = true;
	}
	bt_message_put_ref(msg);
	drain(t, false);
}

static int take(struct text *t, const bt_message *msg)
{
	struct ust_bt2_item it = { .msg = msg };

	if (bt_message_get_type(msg) == BT_MESSAGE_TYPE_MESSAGE_ITERATOR_INACTIVITY) {
		take_inactivity(t, msg);
		return 0;
	}

	if (bt_message_get_type(msg) == BT_MESSAGE_TYPE_EVENT) {
		const bt_event *ev = bt_message_event_borrow_event_const(msg);
		const bt_field *p = bt_event_borrow_payload_field_const(ev);
		enum ec_kind k = kind_of(t, bt_event_borrow_class_const(ev));
		struct ust_bt2_stack *st;
		struct evinfo e;
		int64_t ns;

		if ((k == EC_STACK && take_stack(t, p)) || (k == EC_OBJECT && take_object(t, p)))
			return -1;
		if (bt_message_event_borrow_stream_class_default_clock_class_const(msg) &&
		    bt_clock_snapshot_get_ns_from_origin(
			    bt_message_event_borrow_default_clock_snapshot_const(msg), &ns) ==
			    BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK) {
			t->now = ns;
			t->have_now = true;
			it.timed = true;
		}
		event_info(t, ev, &e);
		st = e.stack_id ? ust_bt2_stacks_find(&t->st, e.stack_id) : NULL;
		/* A missing stack may take a while; its objects or those of
		 * the locks come within microseconds, or never. */
		if (e.stack_id && !st) {
			it.stack_id = e.stack_id;
			it.deadline = t->now + t->lookahead_ns;
		} else if (st && !ust_bt2_stack_complete(&t->st, st)) {
			it.stack_id = e.stack_id;
			it.deadline = t->now + OBJ_WINDOW_NS;
		}
		if (e.locks && !ust_bt2_each_lock(e.locks, lock_covered, &e)) {
			it.lock_wait = true;
			if (!it.stack_id)
				it.deadline = t->now + OBJ_WINDOW_NS;
		}
	}
	if (ust_bt2_queue_push(&t->q, &it))
		return -1;
	drain(t, false);
	return 0;
}

/* --- component class methods -------------------------------------------- */

static bool param_bool(const bt_value *params, const char *name, bool def)
{
	const bt_value *v = bt_value_map_borrow_entry_value_const(params, name);

	return v && bt_value_is_bool(v) ? bt_value_bool_get(v) : def;
}

static int64_t param_int(const bt_value *params, const char *name, int64_t def)
{
	const bt_value *v = bt_value_map_borrow_entry_value_const(params, name);

	if (v && bt_value_is_signed_integer(v))
		return bt_value_integer_signed_get(v);
	if (v && bt_value_is_unsigned_integer(v))
		return (int64_t)bt_value_integer_unsigned_get(v);
	return def;
}

/* NULL when absent or empty. */
static const char *param_string(const bt_value *params, const char *name)
{
	const bt_value *v = bt_value_map_borrow_entry_value_const(params, name);

	return v && bt_value_is_string(v) && bt_value_string_get(v)[0] ? bt_value_string_get(v) : NULL;
}

static void text_destroy(struct text *t)
{
	int i;

	if (!t)
		return;
	ust_bt2_queue_fini(&t->q);
	ust_bt2_profile_fini(&t->prof);
	ust_bt2_stacks_fini(&t->st);
	cache_fini(&t->ec_kinds, true);
	cache_fini(&t->ctx_idx, false);
	cache_fini(&t->pkt_skip, false);
	ust_sb_fini(&t->line);
	bt_message_iterator_put_ref(t->it);
	for (i = 0; i < t->nr_debug_dirs; i++)
		free(t->debug_dirs[i]);
	free(t);
}

static bt_component_class_initialize_method_status
text_init(bt_self_component_sink *self, bt_self_component_sink_configuration *config,
	  const bt_value *params, void *init_data)
{
	struct text *t = calloc(1, sizeof(*t));
	struct ust_bt2_opts o = { 0 };
	struct ust_bt2_profile_opts po = { 0 };
	const bt_value *dirs, *folded;

	(void)config;
	(void)init_data;
	if (!t)
		return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	ust_sb_init(&t->line);
	ust_hmap_init(&t->ec_kinds);
	ust_hmap_init(&t->ctx_idx);
	ust_hmap_init(&t->pkt_skip);
	ust_bt2_queue_init(&t->q);
	o.symbols = param_bool(params, "symbols", true);
	o.lines = param_bool(params, "lines", false);
	o.demangle = param_bool(params, "demangle", true);
	o.max_frames = (unsigned int)param_int(params, "max-frames", 0);
	/* As trace-cmd's -O ustitch:debuginfod: on when DEBUGINFOD_URLS is set. */
	o.debuginfod = param_bool(params, "debuginfod", ust_res_debuginfod_wanted());
	/* The sink sees messages, not the trace's directory: an archive
	 * (`ustitch archive`) is named, never guessed. */
	o.archive = param_string(params, "archive");
	t->lookahead_ns = param_int(params, "lookahead-ns", 1000000000LL);
	t->max_pending = (uint64_t)param_int(params, "max-pending", 1000000);
	t->clk.gmt = param_bool(params, "clock-gmt", false);
	dirs = bt_value_map_borrow_entry_value_const(params, "debug-dirs");
	if (dirs && bt_value_is_string(dirs)) {
		const char *s = bt_value_string_get(dirs);

		while (*s && t->nr_debug_dirs < UST_BT2_MAX_DEBUG_DIRS) {
			size_t n = strcspn(s, ":");

			if (n)
				t->debug_dirs[t->nr_debug_dirs++] = strndup(s, n);
			s += n + (s[n] == ':');
		}
	}
	o.debug_dirs = (const char *const *)t->debug_dirs;
	o.nr_debug_dirs = t->nr_debug_dirs;
	/* As trace-cmd's -O ustitch:folded=1|PATH, flamegraph=, pprof=, top=. */
	folded = bt_value_map_borrow_entry_value_const(params, "folded");
	if (folded && bt_value_is_bool(folded))
		po.folded = bt_value_bool_get(folded) ? "1" : NULL;
	else
		po.folded = param_string(params, "folded");
	po.flamegraph = param_string(params, "flamegraph");
	po.icicle = param_bool(params, "flamegraph-icicle", false);
	po.per_thread = param_bool(params, "flamegraph-threads", false);
	po.pprof = param_string(params, "pprof");
	po.lines = o.lines;
	po.top = (unsigned int)param_int(params, "top", 0);
	if (ust_bt2_stacks_init(&t->st, &o) || ust_bt2_profile_init(&t->prof, &po, &t->st) ||
	    bt_self_component_sink_add_input_port(self, "in", NULL, NULL) !=
		    BT_SELF_COMPONENT_ADD_PORT_STATUS_OK) {
		text_destroy(t);
		return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
	}
	bt_self_component_set_data(bt_self_component_sink_as_self_component(self), t);
	return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

static void text_finalize(bt_self_component_sink *self)
{
	struct text *t = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));

	if (t) {
		struct ust_sb sb;

		drain(t, true);
		fflush(stdout);
		/* A debuginfod server that stopped answering: said once, at the end. */
		ust_sb_init(&sb);
		ust_res_debuginfod_summary(t->st.res, &sb);
		fputs(ust_sb_str(&sb), stderr);
		ust_sb_fini(&sb);
	}
	text_destroy(t);
}

static bt_component_class_sink_graph_is_configured_method_status
text_configured(bt_self_component_sink *self)
{
	struct text *t = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));

	if (bt_message_iterator_create_from_sink_component(self,
			bt_self_component_sink_borrow_input_port_by_name(self, "in"), &t->it) !=
	    BT_MESSAGE_ITERATOR_CREATE_FROM_SINK_COMPONENT_STATUS_OK)
		return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_ERROR;
	return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_OK;
}

static bt_component_class_sink_consume_method_status text_consume(bt_self_component_sink *self)
{
	struct text *t = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
	bt_message_array_const msgs;
	uint64_t n, i;

	switch (bt_message_iterator_next(t->it, &msgs, &n)) {
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
		break;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
		drain(t, true);
		if (t->missing)
			fprintf(stderr, "ustitch: %" PRIu64 " event%s referenced a stack missing "
				"from the trace\n", t->missing, t->missing == 1 ? "" : "s");
		if (t->missing && t->live)
			fputs("ustitch: a live reader sees only what is recorded after it attaches: "
			      "stacks recorded before are not in its view; start it before the "
			      "application, or read the relay daemon's trace directory\n", stderr);
		ust_bt2_profile_finish(&t->prof);
		fflush(stdout);
		bt_message_iterator_put_ref(t->it);
		t->it = NULL;
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
		/* Nothing new for now (a live source): what is printed is
		 * seen now, also through a pipe. */
		fflush(stdout);
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_AGAIN;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_MEMORY_ERROR;
	default:
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
	}
	for (i = 0; i < n; i++) {
		if (take(t, msgs[i])) {
			for (; i < n; i++)
				bt_message_put_ref(msgs[i]);
			return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_MEMORY_ERROR;
		}
	}
	return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK;
}

BT_PLUGIN_MODULE();
BT_PLUGIN(ustitch);
BT_PLUGIN_DESCRIPTION("ustitch: stitched, symbolized user stacks and held locks of LTTng-UST events");
BT_PLUGIN_AUTHOR("ustitch");
BT_PLUGIN_LICENSE("LGPL-2.1");
BT_PLUGIN_SINK_COMPONENT_CLASS(text, text_consume);
BT_PLUGIN_SINK_COMPONENT_CLASS_INITIALIZE_METHOD(text, text_init);
BT_PLUGIN_SINK_COMPONENT_CLASS_FINALIZE_METHOD(text, text_finalize);
BT_PLUGIN_SINK_COMPONENT_CLASS_GRAPH_IS_CONFIGURED_METHOD(text, text_configured);
BT_PLUGIN_SINK_COMPONENT_CLASS_DESCRIPTION(text,
	"Pretty-print messages like sink.text.pretty, with the user stack of each "
	"event that has $app.ustitch:stack_id and the names of its held locks");
BT_PLUGIN_SINK_COMPONENT_CLASS_HELP(text,
	"Parameters: symbols=BOOL (yes), lines=BOOL (no), max-frames=N (0: all), "
	"debug-dirs=\"DIR:DIR\", lookahead-ns=N (1000000000), max-pending=N (1000000), "
	"clock-gmt=BOOL (no), debuginfod=BOOL (yes when DEBUGINFOD_URLS is set), "
	"archive=\"DIR\" (the traced files, copied by `ustitch archive -o DIR -f FILE...`); "
	"profiles of the events' stacks, after the events: folded=yes|\"PATH\", "
	"flamegraph=\"PATH.svg\" (flamegraph-icicle=BOOL, flamegraph-threads=BOOL), "
	"pprof=\"PATH.pb.gz\", top=N");
