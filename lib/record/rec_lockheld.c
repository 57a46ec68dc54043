// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_rec_lockheld: events filtered with lock_held() (every event, with
 * --addr-filter) as a record source, through perf + BPF.
 *
 *   tracepoint --perf (per CPU, ftrace part of -f: SET_FILTER)-->
 *     BPF filter (lockheld.bpf.c: the lock part; kept: a hit with the
 *     matched locks and the user-stack cookie) --> perf sample
 *   sample + hit --> "ustitch" buffer: the event's own record, then
 *     ustitch/lock_match, ftrace/kernel_stack (-O stacktrace) and
 *     ftrace/user_unwind_cookie (-O userstacktrace_delay), one timestamp
 *
 * The raw sample is the same bytes an ftrace record has (perf fixes the
 * common fields), so trace-cmd report prints it with the event's format.
 * Perf's clock is CLOCK_MONOTONIC, ftrace's "mono": the file has one time.
 *
 * Pairing a sample with its hit: the program runs on the sample's CPU just
 * before perf writes it, in the same context.  The hit is the latest one
 * of that CPU, task and event not later than the sample: an event in an
 * interrupt between the two nests completely, so "latest" is its own.
 * Perf rings are read only up to a head taken before the hits are drained,
 * so a sample's hit is always in hand.
 */
#include <errno.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

#include "ustitch/grow.h"
#include "ustitch/addrfilter.h"
#include "ustitch/af_bpf.h"
#include "ustitch/bpfu.h"
#include "ustitch/capture.h"
#include "ustitch/encode.h"
#include "ustitch/hmap.h"
#include "ustitch/kbits.h"
#include "ustitch/lh.h"
#include "ustitch/lh_env.h"
#include "ustitch/lh_bpf.h"
#include "ustitch/perf_tp.h"
#include "ustitch/probe.h"
#include "ustitch/sb.h"
#include "ustitch/tdw.h"
#include "ustitch/rec.h"
#include "rec_priv.h"

#define PFX UST_REC_PFX
#define LH_MAX_EVENTS	64	/* UST_LH_MAX_PROGS */
#define LH_PAGES	128	/* perf buffer per CPU: 512 KiB */
#define LH_HIT_AGE_NS	2000000000ULL	/* a hit this much older than its CPU's samples is stale */

struct lh_event {
	char *system, *event, *filter;
	bool stacktrace;		/* -O stacktrace in its buffer */
	bool stacks;			/* -O userstacktrace_delay in its buffer */
	char *format;			/* its format text, read once when claimed */
	/* Kept without perf (raw_ok()): system call raw_nr's entry or exit. */
	bool raw, raw_exit;
	int raw_nr, raw_id;
	unsigned int raw_nargs;
	struct ust_lh_expr expr;
	struct ust_lh_compiled comp;
	struct ust_perf_tp perf;
	bool perf_open;
	unsigned long kept, no_hit;
};

/*
 * One CPU's hits waiting for their samples, oldest first from head: the
 * BPF filter runs, then perf writes the sample on the same CPU, so hits
 * arrive in nearly the samples' order (an interrupt's event may nest
 * between a hit and its sample) and a sample's hit is the latest one of
 * its task and event at or before the sample's time.
 */
struct lh_hitvec {
	struct ust_lh_hit_u *v;
	size_t head, nr, cap;
};

#define LH_HIT_TAKEN	UINT32_MAX	/* slot of a hit already paired */
#define LH_HIT_LOOKBACK	256		/* hits searched back from the sample's time */

struct lh_src {
	struct lh_event ev[LH_MAX_EVENTS];
	int nr_ev;
	struct ust_lh_bpf *bpf;
	struct ust_rec_ctx *c;
	uint16_t match_id;
	int kstack_id;
	struct lh_hitvec *pending;	/* per CPU */
	int nr_cpus;
	struct ust_hmap comm_seen;	/* tid -> index in comms */
	struct { int tid; char comm[16]; } *comms;
	size_t nr_comms, cap_comms;
	unsigned long stale_hits, spool_err;
	struct ust_af *af;		/* --addr-filter: every event is ours */
	bool any_lock;			/* some -f uses lock_held() */
	bool any_raw;			/* some event is kept without perf */
	unsigned char buf[65536 + 4096] __attribute__((aligned(8)));
};

/* What the user asked for, for messages: the run's lock_held() or --addr-filter. */
static const char *lh_what(const struct lh_src *s)
{
	return s->any_lock ? "lock_held()" : "--addr-filter";
}

/* Why the options cannot be recorded, into @err.  -EINVAL. */
__attribute__((format(printf, 3, 4)))
static int say(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errsz, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool buf_has_opt(const struct ust_rec_buffer *b, const char *opt)
{
	int i;

	for (i = 0; i < b->nr_opts; i++)
		if (!strcmp(b->opts[i], opt))
			return true;
	return false;
}

/* ---- claiming the events (validation time: nothing is touched) ------ */

static int claim_one(struct lh_src *s, struct ust_rec_buffer *b, const struct ust_rec_event *re,
		     char *err, size_t errsz)
{
	struct lh_event *e;
	struct ust_lh_format fmt;
	char why[768];
	int r;

	if (s->nr_ev == LH_MAX_EVENTS)
		return say(err, errsz, "more than %d events with lock_held() filters", LH_MAX_EVENTS);
	e = &s->ev[s->nr_ev];
	memset(e, 0, sizeof(*e));
	e->system = strdup(re->system);
	e->event = strdup(re->event);
	e->filter = re->filter ? strdup(re->filter) : NULL;
	e->stacktrace = buf_has_opt(b, "stacktrace");
	e->stacks = b->deferred;
	e->format = ust_cap_read_format(re->system, re->event);
	s->nr_ev++;
	if (!e->format)
		return say(err, errsz, "%s:%s: cannot read its format", re->system, re->event);
	if (!ust_lh_mentions(re->filter) && (!re->filter || !e->stacks)) {
		/* --addr-filter alone: the address tests, then the -f as ftrace's.
		 * (With user stacks BPF evaluates the -f too: see below.) */
		if (re->filter && !(e->comp.ftrace = strdup(re->filter)))
			return say(err, errsz, "out of memory");
		goto af;
	}
	s->any_lock |= ust_lh_mentions(re->filter);
	if (ust_lh_parse(re->filter, &e->expr, why, sizeof(why)))
		return say(err, errsz, "%s:%s: -f '%s': %s", re->system, re->event, re->filter, why);
	if (ust_lh_resolve(&e->expr, ust_lh_env_live(), why, sizeof(why)))
		return say(err, errsz, "%s:%s: -f '%s': %s", re->system, re->event, re->filter, why);
	if (ust_lh_format_parse(e->format, &fmt))
		return say(err, errsz, "%s:%s: cannot read its format", re->system, re->event);
	/* With user stacks, BPF also decides the ftrace part: no cookie for
	 * an event the kernel's filter would then drop. */
	r = ust_lh_compile(&e->expr, &fmt, e->stacks, &e->comp, why, sizeof(why));
	ust_lh_format_free(&fmt);
	if (r)
		return say(err, errsz, "%s:%s: -f '%s': %s", re->system, re->event, re->filter, why);
af:
	if (s->af && ust_af_prepend(s->af, &e->comp.graph, why, sizeof(why)))
		return say(err, errsz, "%s:%s: --addr-filter: %s", re->system, re->event, why);
	return 0;
}

static const struct ust_rec_source_ops lh_ops;

int ust_rec_lockheld_claim(struct ust_rec_opts *o, bool *want_stacks, char *err, size_t errsz)
{
	struct ust_rec_source *src;
	struct lh_src *s;
	bool stacks = false;
	int b, i, k, ret;

	s = calloc(1, sizeof(*s));
	src = calloc(1, sizeof(*src));
	if (!s || !src) {
		free(s);
		free(src);
		say(err, errsz, "out of memory");
		return -ENOMEM;
	}
	src->ops = &lh_ops;
	src->priv = s;
	/* Borrowed: the perf sampling source applies them too. */
	s->af = o->af && o->af->nr ? o->af : NULL;
	for (b = 0; b < o->nr_bufs; b++) {
		struct ust_rec_buffer *buf = &o->bufs[b];

		for (i = 0, k = 0; i < buf->nr_ev; i++) {
			struct ust_rec_event *re = &buf->ev[i];

			if (!s->af && !ust_lh_mentions(re->filter)) {
				buf->ev[k++] = *re;
				continue;
			}
			ret = claim_one(s, buf, re, err, errsz);
			if (ret) {
				/* The options keep what was not claimed yet. */
				while (i < buf->nr_ev)
					buf->ev[k++] = buf->ev[i++];
				buf->nr_ev = k;
				goto fail;
			}
			stacks |= buf->deferred;
			free(re->system);
			free(re->event);
			free(re->filter);
		}
		buf->nr_ev = k;
	}
	ret = -EINVAL;
	if (s->af && s->nr_ev && (k = ust_af_kernel_filter(s->af)) >= 0) {
		char what[512];

		/* Silently dropping every tracepoint event would be wrong: refuse. */
		ust_af_format(s->af, k, what, sizeof(what));
		say(err, errsz, "--addr-filter '%s': kernel ranges filter perf samples (by the sampled kernel IP), and a tracepoint event has none: record -e %s:%s in another run",
		    what, s->ev[0].system, s->ev[0].event);
		goto fail;
	}
	if (o->lockheld && !s->any_lock) {
		say(err, errsz, "-p lockheld: no -f filter uses lock_held()");
		goto fail;
	}
	if (!s->nr_ev) {
		if (s->af && !ust_rec_perf_wanted(o)) {
			say(err, errsz, "--addr-filter: no event to filter (give -e EVENT or a sampling event such as -e cpu-clock)");
			goto fail;
		}
		lh_ops.free(src);
		return 0;
	}
	if (!ust_bpfu_built()) {
		say(err, errsz, "%s need BPF: ustitch was built without it (libbpf, clang, bpftool)",
		    s->any_lock ? "lock_held() filters" : "--addr-filter");
		goto fail;
	}
	if (o->clock_given && strcmp(o->clock, "mono")) {
		say(err, errsz, "-C %s: %s events are recorded by perf with CLOCK_MONOTONIC: use -C mono", o->clock,
		    lh_what(s));
		goto fail;
	}
	o->clock = "mono";
	/* Their user stacks are BPF's, even where the kernel has its own
	 * (ftrace's, for ftrace's events only): ust_rec_validate decides. */
	*want_stacks = stacks;
	ust_rec_add_source(o, src);
	return 0;
fail:
	lh_ops.free(src);
	return ret;
}

/* ---- recording -------------------------------------------------------- */

/* From the format text: the ftrace system's events have no id file. */
static int read_id(const char *sys, const char *ev)
{
	char *text = ust_cap_read_format(sys, ev), *p;
	int id = -1;

	if (text && (p = strstr(text, "\nID: ")))
		id = atoi(p + 5);
	free(text);
	return id;
}

/* The latest name of the hit's task, for the file's command lines. */
static void note_comm(struct lh_src *s, const struct ust_lh_hit_u *h)
{
	uint64_t idx;

	if (ust_hmap_get(&s->comm_seen, h->tid, &idx)) {
		/* The latest name: a command is "ustitch" until its exec. */
		memcpy(s->comms[idx].comm, h->comm, 15);
	} else {
		void *n = ust_grow(s->comms, &s->cap_comms, s->nr_comms + 1, sizeof(*s->comms), 64);

		if (!n)
			return;
		s->comms = n;
		s->comms[s->nr_comms].tid = (int)h->tid;
		memcpy(s->comms[s->nr_comms].comm, h->comm, 16);
		s->comms[s->nr_comms].comm[15] = '\0';
		ust_hmap_put(&s->comm_seen, h->tid, s->nr_comms);
		s->nr_comms++;
	}
}

/*
 * Whether @e (format @text) can be kept without perf (lockheld_abi.h): a
 * system call's sys_enter_* or sys_exit_* event in ftrace's own layout
 * (the number at 8, then 8-byte arguments from 16, or ret at 16), and
 * nothing asked of it that perf gives: the ftrace part of its filter
 * (perf's SET_FILTER applies it), a kernel stack, a user stack (the
 * unwinder takes it over by a tail call, between tracepoint programs
 * only), --addr-filter.  USTITCH_LH_PERF=1 keeps every event on perf
 * (benchmarks compare the two).
 */
static bool raw_ok(const struct lh_src *s, struct lh_event *e, const char *text)
{
	struct ust_lh_format f;
	bool exit, ok = false;
	int nr, i, k = 0;

	if (s->af || e->stacktrace || e->stacks || (e->comp.ftrace && *e->comp.ftrace) ||
	    strcmp(e->system, "syscalls") || !text || getenv("USTITCH_LH_PERF"))
		return false;
	exit = !strncmp(e->event, "sys_exit_", 9);
	if (!exit && strncmp(e->event, "sys_enter_", 10))
		return false;
	nr = ust_kbits_syscall_nr(e->event + (exit ? 9 : 10));
	if (nr < 0 || nr >= UST_LH_BPF_NR_SC || ust_lh_format_parse(text, &f))
		return false;
	for (i = 0; i < f.nr_fields; i++) {
		const struct ust_lh_field *fl = &f.fields[i];

		if (!strncmp(fl->name, "common_", 7))
			continue;
		if (k == 0 ? strcmp(fl->name, "__syscall_nr") || fl->off != 8 || fl->size != 4 :
			     fl->off != 16 + 8 * (unsigned int)(k - 1) || fl->size != 8 || fl->is_string ||
			     fl->is_array)
			goto out;
		k++;
	}
	ok = exit ? k == 2 : k >= 1 && k <= 7;
	e->raw_exit = exit;
	e->raw_nr = nr;
	e->raw_id = f.id;
	e->raw_nargs = exit ? 0 : (unsigned int)(k - 1);
out:
	ust_lh_format_free(&f);
	return ok;
}

/* The hit of this sample, taken out of the CPU's pending ones, or false. */
static bool take_hit(struct lh_src *s, const struct ust_perf_tp_sample *sm, int slot,
		     struct ust_lh_hit_u *out)
{
	struct lh_hitvec *v;
	size_t lo, hi, i;
	bool found = false;

	if ((int)sm->cpu >= s->nr_cpus)
		return false;
	v = &s->pending[sm->cpu];
	/* The first hit after the sample's time... */
	for (lo = v->head, hi = v->nr; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (v->v[mid].ts <= sm->time)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ...and back from there to the latest one of this task and event. */
	for (i = lo; i > v->head && lo - i < LH_HIT_LOOKBACK; i--) {
		struct ust_lh_hit_u *h = &v->v[i - 1];

		if (h->slot != LH_HIT_TAKEN && h->tid == sm->tid && (int)h->slot == slot &&
		    h->ts <= sm->time) {
			*out = *h;
			h->slot = LH_HIT_TAKEN;
			found = true;
			break;
		}
	}
	/* Paired hits, and those whose sample never came (the ftrace part
	 * of the filter was false, or perf lost it), leave from the front. */
	while (v->head < v->nr && (v->v[v->head].slot == LH_HIT_TAKEN ||
				   v->v[v->head].ts + LH_HIT_AGE_NS < sm->time)) {
		if (v->v[v->head].slot != LH_HIT_TAKEN)
			s->stale_hits++;
		v->head++;
	}
	if (v->head == v->nr)
		v->head = v->nr = 0;
	return found;
}

static void put_common(unsigned char *b, uint16_t type, const unsigned char *raw, uint32_t pid)
{
	memcpy(b, &type, 2);
	b[2] = raw[2];		/* the event's flags and preempt count */
	b[3] = raw[3];
	memcpy(b + 4, &pid, 4);
}

static void spool(struct lh_src *s, unsigned int cpu, uint64_t ts, const void *d, size_t len)
{
	if (ust_rec_spool_add(s->c->spool, cpu, ts, d, len))
		s->spool_err++;
}

struct lh_read {
	struct lh_src *s;
	struct lh_event *e;
	int slot;
};

/*
 * A kept event @raw (its ftrace record) and what goes with it, at @ts on
 * @cpu: its lock match (from @hit, NULL: none came), its kernel stack
 * (@ips), its user stack's cookie.
 */
static void put_kept(struct lh_src *s, struct lh_event *e, unsigned int cpu, uint64_t ts, uint32_t tid,
		     const unsigned char *raw, size_t raw_size, const struct ust_lh_hit_u *hit,
		     const uint64_t *ips, uint64_t nr_ips)
{
	unsigned char *b = s->buf;
	uint64_t i, n;

	e->kept++;
	spool(s, cpu, ts, raw, raw_size);
	if (!hit) {
		e->no_hit++;
	} else if (hit->mask) {
		struct ust_sb sb;
		uint32_t len, loc;
		int l;

		ust_sb_init(&sb);
		for (l = 0; l < e->comp.nr_leaves && l < 32; l++) {
			if (!(hit->mask & (1U << l)))
				continue;
			ust_sb_printf(&sb, "%s%s%s", sb.len ? ", " : "",
				      e->comp.leaf_negated[l] ? "!" : "", e->comp.leaf_text[l]);
		}
		len = (uint32_t)sb.len + 1;
		if (!sb.oom && 16 + len <= sizeof(s->buf)) {
			put_common(b, s->match_id, raw, tid);
			memcpy(b + 8, &hit->mask, 4);
			loc = 16 | (len << 16);
			memcpy(b + 12, &loc, 4);
			memcpy(b + 16, ust_sb_str(&sb), len);
			spool(s, cpu, ts, b, 16 + len);
		}
		ust_sb_fini(&sb);
	}
	if (e->stacktrace && s->kstack_id >= 0) {
		/* ftrace's kernel_stack: int size (entries), then the addresses. */
		int32_t nr;

		for (i = 0, n = 0; i < nr_ips && 16 + 8 * (n + 1) <= sizeof(s->buf); i++) {
			uint64_t ip = ips[i];

			if (ip >= (uint64_t)-4095)	/* PERF_CONTEXT_* markers */
				continue;
			memcpy(b + 16 + 8 * n, &ip, 8);
			n++;
		}
		put_common(b, (uint16_t)s->kstack_id, raw, tid);
		nr = (int32_t)n;
		memcpy(b + 8, &nr, 4);
		memset(b + 12, 0, 4);
		spool(s, cpu, ts, b, 16 + 8 * n);
	}
	if (hit && hit->cookie) {
		put_common(b, s->c->cookie_id, raw, tid);
		memcpy(b + 8, &hit->cookie, 8);
		spool(s, cpu, ts, b, 16);
	}
}

static void on_sample(const struct ust_perf_tp_sample *sm, void *ctx)
{
	struct lh_read *rd = ctx;
	struct ust_lh_hit_u hit;
	bool have = take_hit(rd->s, sm, rd->slot, &hit);

	put_kept(rd->s, rd->e, sm->cpu, sm->time, sm->tid, sm->raw, sm->raw_size, have ? &hit : NULL,
		 sm->ips, sm->nr_ips);
}

static void on_hit(const struct ust_lh_hit_u *h, const void *rec, size_t len, void *ctx)
{
	struct lh_src *s = ctx;
	struct lh_hitvec *v;

	if ((int)h->cpu >= s->nr_cpus)
		return;
	note_comm(s, h);
	if (rec) {
		/* Kept without perf: the record is here, no sample follows. */
		if ((int)h->slot < s->nr_ev && s->ev[h->slot].raw && len >= 16)
			put_kept(s, &s->ev[h->slot], h->cpu, h->ts, h->tid, rec, len, h, NULL, 0);
		return;
	}
	v = &s->pending[h->cpu];
	if (v->nr == v->cap && v->head) {
		memmove(v->v, v->v + v->head, (v->nr - v->head) * sizeof(*v->v));
		v->nr -= v->head;
		v->head = 0;
	}
	if (v->nr == v->cap) {
		void *n = ust_grow(v->v, &v->cap, v->nr + 1, sizeof(*v->v), 64);

		if (!n)
			return;
		v->v = n;
	}
	v->v[v->nr++] = *h;
}

/* 1: a ring is filling up, come back soon. */
static int lh_poll(struct ust_rec_source *src, struct ust_rec_ctx *c)
{
	struct lh_src *s = src->priv;
	bool busy = false;
	uint64_t lost;
	int i, cpu;

	for (i = 0; i < s->nr_ev; i++) {
		ust_perf_tp_snapshot(&s->ev[i].perf);
		busy |= ust_perf_tp_busy(&s->ev[i].perf);
	}
	if (ust_lh_bpf_hits(s->bpf, on_hit, s) < 0)
		return -1;
	for (i = 0; i < s->nr_ev; i++) {
		struct lh_read rd = { .s = s, .e = &s->ev[i], .slot = i };

		for (cpu = 0; cpu < s->ev[i].perf.nr_cpus; cpu++) {
			ust_perf_tp_read(&s->ev[i].perf, cpu, on_sample, &rd);
			/* The report shows where: after what this CPU kept. */
			lost = ust_perf_tp_take_lost(&s->ev[i].perf, cpu);
			if (lost && ust_rec_spool_add_lost(c->spool, (unsigned int)cpu, ust_rec_mono_now(), lost))
				s->spool_err++;
		}
	}
	return s->spool_err ? -1 : busy;
}

static int lh_wait_fds(struct ust_rec_source *src, int epfd)
{
	struct lh_src *s = src->priv;
	int i;

	if (s->any_raw) {
		/* Kept records come in the hits: their ring wakes us too. */
		struct epoll_event ev = { .events = EPOLLIN };
		int fd = ust_lh_bpf_hits_fd(s->bpf);

		if (fd >= 0 && epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev))
			return -1;
	}
	for (i = 0; i < s->nr_ev; i++)
		if (s->ev[i].perf_open && ust_perf_tp_wait_fds(&s->ev[i].perf, epfd))
			return -1;
	return 0;
}

static int lh_start(struct ust_rec_source *src, struct ust_rec_ctx *c, char *err, size_t errlen)
{
	struct lh_src *s = src->priv;
	struct ust_lh_bpf_opts bo = { 0 };
	struct ust_sb note;
	bool rcu = false, stacks = false;
	char *text;
	int i, k, id;

	s->c = c;
	s->nr_cpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	s->pending = calloc((size_t)s->nr_cpus, sizeof(*s->pending));
	if (!s->pending) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ust_hmap_init(&s->comm_seen);
	for (i = 0; i < s->nr_ev; i++) {
		const struct ust_lh_compiled *cp = &s->ev[i].comp;

		s->ev[i].raw = raw_ok(s, &s->ev[i], s->ev[i].format);
		if (s->ev[i].raw) {
			s->any_raw = true;
			bo.raw_enter |= !s->ev[i].raw_exit;
			bo.raw_exit |= s->ev[i].raw_exit;
		}

		bo.mmap_read |= cp->mmap_read;
		bo.families |= cp->families;
		bo.track_slab |= cp->needs_track_slab;
		stacks |= s->ev[i].stacks;
		rcu |= cp->rcu;
	}
	bo.bpfu = stacks ? c->bpfu : NULL;
	bo.follow = c->child > 0 || c->o->nr_pids > 0;
	/* Kept records in the hits: as much room as ftrace's buffers (-b), at least 8 MiB. */
	if (s->any_raw)
		bo.hits_bytes = c->o->buffer_kb ? c->o->buffer_kb * 1024 * (size_t)s->nr_cpus : 8 << 20;
	s->bpf = ust_lh_bpf_open(&bo, err, errlen);
	if (!s->bpf)
		return -1;
	if (rcu) {
		char why[256];

		if (ust_lh_bpf_calibrate(s->bpf, why, sizeof(why)) < 0)
			ust_rec_warn(PFX "lock_held(rcu): %s; assuming the BPF runtime holds 1\n", why);
	}
	if (s->af && ust_lh_bpf_set_af(s->bpf, s->af, err, errlen))
		return -1;
	if (c->child > 0 && ust_lh_bpf_follow(s->bpf, c->child)) {
		snprintf(err, errlen, "cannot follow the command: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < c->o->nr_pids; i++)
		if (ust_lh_bpf_follow(s->bpf, c->o->pids[i])) {
			snprintf(err, errlen, "cannot follow pid %d", (int)c->o->pids[i]);
			return -1;
		}
	s->kstack_id = read_id("ftrace", "kernel_stack");
	id = ust_rec_ctx_new_id(c);
	text = id < 0 ? NULL : ust_enc_format_with_id("ustitch/lock_match", id);
	if (!text || ust_rec_ctx_add_format(c, "ustitch", text)) {
		free(text);
		snprintf(err, errlen, "no event id left for ustitch/lock_match");
		return -1;
	}
	free(text);
	s->match_id = (uint16_t)id;
	for (i = 0; i < s->nr_ev; i++) {
		struct lh_event *e = &s->ev[i];
		char perr[512];
		int r;

		if (ust_rec_ctx_add_format(c, e->system, e->format)) {
			snprintf(err, errlen, "%s:%s: out of memory", e->system, e->event);
			return -1;
		}
		r = ust_lh_bpf_set_prog(s->bpf, i, &e->comp, e->stacks);
		if (r) {
			snprintf(err, errlen, "%s:%s: loading its filter: %s", e->system, e->event,
				 strerror(-r));
			return -1;
		}
		if (e->raw) {
			r = ust_lh_bpf_set_raw(s->bpf, i, e->raw_nr, e->raw_exit, (uint16_t)e->raw_id,
					       e->raw_nargs);
			if (r) {
				snprintf(err, errlen, "%s:%s: keeping it without perf: %s", e->system,
					 e->event, strerror(-r));
				return -1;
			}
			continue;
		}
		e->perf_open = true;
		if (ust_perf_tp_open(&e->perf, e->system, e->event, e->comp.ftrace, e->stacktrace,
				     LH_PAGES, perr, sizeof(perr))) {
			snprintf(err, errlen, "%s", perr);
			return -1;
		}
		r = ust_lh_bpf_attach(s->bpf, i, ust_perf_tp_fd(&e->perf));
		if (r) {
			snprintf(err, errlen, "%s:%s: attaching the BPF filter: %s%s", e->system,
				 e->event, strerror(-r),
				 r == -EEXIST ? " (another BPF program filters this tracepoint's perf events)" : "");
			return -1;
		}
	}
	if (s->any_raw && ust_lh_bpf_attach_raw(s->bpf)) {
		snprintf(err, errlen, "attaching to the system call tracepoints: %s", strerror(errno));
		return -1;
	}
	if (ust_lh_bpf_attach_late(s->bpf)) {
		snprintf(err, errlen, "attaching to mmap_lock_released: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < s->nr_ev; i++)
		if (s->ev[i].perf_open)
			ust_perf_tp_enable(&s->ev[i].perf, true);
	/* Measured on 6.18: the filter's verdict is every perf user's. */
	ust_sb_init(&note);
	ust_sb_printf(&note, PFX "note: while recording, the %s BPF filter also drops the samples other perf users (perf record, ...) take of",
		      lh_what(s));
	for (i = 0, k = 0; i < s->nr_ev; i++)
		if (!s->ev[i].raw)
			ust_sb_printf(&note, "%s %s:%s", k++ ? "," : "", s->ev[i].system, s->ev[i].event);
	if (k)
		ust_rec_info("%s; ftrace is not affected\n", ust_sb_str(&note));
	ust_sb_fini(&note);
	return 0;
}

static void lh_stop(struct ust_rec_source *src, struct ust_rec_ctx *c)
{
	struct lh_src *s = src->priv;
	struct ust_tdw *w;
	size_t i;
	int k;

	for (k = 0; k < s->nr_ev; k++)
		if (s->ev[k].perf_open)
			ust_perf_tp_enable(&s->ev[k].perf, false);
	if (s->bpf)
		lh_poll(src, c);
	w = c->cap ? ust_cap_writer(c->cap) : NULL;
	for (i = 0; w && i < s->nr_comms; i++) {
		/*
		 * The command bears our name until its exec: if its last
		 * hit came before, the kernel's saved_cmdlines (added after
		 * us) has the name it ran under.
		 */
		if (s->comms[i].tid == c->child && !strcmp(s->comms[i].comm, "ustitch"))
			continue;
		ust_tdw_add_cmdline(w, s->comms[i].tid, s->comms[i].comm, NULL, 0);
	}
}

static void lh_summary(struct ust_rec_source *src, FILE *out)
{
	struct lh_src *s = src->priv;
	struct ust_lh_bpf_stats st;
	unsigned long kept = 0, lost = 0, no_hit = 0;
	int i;

	if (!s->bpf)
		return;
	ust_lh_bpf_stats(s->bpf, &st);
	for (i = 0; i < s->nr_ev; i++) {
		kept += s->ev[i].kept;
		lost += s->ev[i].perf.lost;
		no_hit += s->ev[i].no_hit;
	}
	fprintf(out, PFX "%s: %lu events kept of %llu filtered",
		lh_what(s), kept, (unsigned long long)st.runs);
	if (lost)
		fprintf(out, ", %lu lost (perf buffer full)", lost);
	if (st.raw_drops)
		fprintf(out, ", %llu lost (BPF ring buffer full)", (unsigned long long)st.raw_drops);
	if (no_hit)
		fprintf(out, ", %lu without their lock match (BPF ring buffer full)", no_hit);
	fputc('\n', out);
}

static void lh_counts(struct ust_rec_source *src, struct ust_rec_counts *n)
{
	struct lh_src *s = src->priv;
	struct ust_lh_bpf_stats st;
	int i;

	if (!s->bpf)
		return;
	ust_lh_bpf_stats(s->bpf, &st);
	n->filtered += (unsigned long)st.runs;
	n->lost += (unsigned long)st.raw_drops;
	for (i = 0; i < s->nr_ev; i++) {
		n->kept += s->ev[i].kept;
		n->lost += s->ev[i].perf.lost;
	}
}

static void lh_free(struct ust_rec_source *src)
{
	struct lh_src *s = src->priv;
	int i;

	if (s) {
		ust_lh_bpf_close(s->bpf);
		for (i = 0; i < s->nr_ev; i++) {
			if (s->ev[i].perf_open)
				ust_perf_tp_close(&s->ev[i].perf);
			ust_lh_compiled_free(&s->ev[i].comp);
			ust_lh_expr_free(&s->ev[i].expr);
			free(s->ev[i].system);
			free(s->ev[i].event);
			free(s->ev[i].filter);
			free(s->ev[i].format);
		}
		for (i = 0; s->pending && i < s->nr_cpus; i++)
			free(s->pending[i].v);
		free(s->pending);
		free(s->comms);
		ust_hmap_fini(&s->comm_seen);
		free(s);
	}
	free(src);
}

static const struct ust_rec_source_ops lh_ops = {
	.name = "lock_held()",
	.start = lh_start,
	.poll = lh_poll,
	.wait_fds = lh_wait_fds,
	.stop = lh_stop,
	.summary = lh_summary,
	.counts = lh_counts,
	.free = lh_free,
};
