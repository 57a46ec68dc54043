// SPDX-License-Identifier: LGPL-2.1
/*
 * ust-mktrace --torture SEED SPEC TRUTH: a random trace in the spec language
 * with lost events, and what the report must say about each of its records.
 *
 * Tasks enter the kernel on 1-4 CPUs, make 1-4 requesting events per entry
 * (each an event and its user_unwind_cookie), migrate, and get their
 * user_unwind_stack when the entry ends, on whichever CPU they return on.
 * Cookies are made as the kernel makes them (ust_abi_cookie: CPU in the
 * top bits, a per-CPU counter that starts just below its wrap), and some
 * entries reuse a cookie an earlier entry of that CPU had: what a counter
 * that went all the way round gives.  The kernel layout puts an entry's
 * records in the top buffer or an instance; the BPF layout puts events in
 * the top buffer and cookies and stacks in "ustitch".
 *
 * Then records are dropped as a full ring buffer drops them: single
 * cookies and stacks, and runs of records of one CPU and buffer (a page).
 * The next record kept on that CPU and buffer carries the loss, with its
 * count, or without one (a full page has no room to store it): the spec's
 * `lost` line sets RB_MISSED_EVENTS and, with a count, RB_MISSED_STORED.
 * Every CPU and buffer ends with a record that is never dropped, so that
 * every loss is marked.
 *
 * Each entry's stack has its own frames (raw addresses 0x100000 + entry
 * number * 0x100 + frame), so a stack shown at another entry's cookie is
 * told apart even when the two cookies are equal.  TRUTH has one line per
 * record kept whose report depends on the stitching:
 *
 *   C TS_US COOKIE stack F1,F2,...   a cookie: its entry's frames follow it
 *   C TS_US COOKIE missing           a cookie whose stack was dropped
 *   S TS_US COOKIE shown N           a stack, shown at N cookies
 *   S TS_US COOKIE orphan F1,...     a stack all of whose cookies were dropped
 *   L BUFFER CPU COUNT|?             a loss marked before a record kept
 *
 * The report prints a loss before the first record after it of its CPU,
 * which may come after records of other CPUs at the same time: L lines
 * are in the order of the records, not of the report.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/abi.h"
#include "ustitch/grow.h"
#include "mkt.h"

enum kind { K_EVENT, K_COOKIE, K_STACK, K_TAIL };

struct trec {
	uint64_t ts;
	int buf, cpu, pid;
	enum kind kind;
	int entry;		/* cookie and stack: the entry's index */
	bool dropped;
	bool count_unknown;	/* dropped with a page: no stored count */
};

struct entry {
	uint64_t cookie;
	int pid;
	bool open;
};

struct task {
	int pid, cpu, buf;
	int entry;		/* open entry, -1: in user space */
};

struct tort {
	uint64_t rng;
	struct trec *recs;
	size_t nr, cap;
	struct entry *entries;
	size_t nr_entries, cap_entries;
	int nr_cpus, nr_bufs;
	bool bpf;
};

/* xorshift64*: the same trace for the same seed on every machine. */
static uint64_t rnd(struct tort *t)
{
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	return t->rng * 0x2545F4914F6CDD1DULL;
}

static unsigned int below(struct tort *t, unsigned int n)
{
	return (unsigned int)(rnd(t) >> 33) % n;
}

static bool chance(struct tort *t, unsigned int percent)
{
	return below(t, 100) < percent;
}

static int add_rec(struct tort *t, const struct trec *r)
{
	struct trec *n = ust_grow(t->recs, &t->cap, t->nr + 1, sizeof(*n), 256);

	if (!n)
		return -ENOMEM;
	t->recs = n;
	t->recs[t->nr++] = *r;
	return 0;
}

static int add_entry(struct tort *t, uint64_t cookie, int pid)
{
	struct entry *n = ust_grow(t->entries, &t->cap_entries, t->nr_entries + 1, sizeof(*n), 64);

	if (!n)
		return -ENOMEM;
	t->entries = n;
	t->entries[t->nr_entries] = (struct entry){ .cookie = cookie, .pid = pid, .open = true };
	return (int)t->nr_entries++;
}

/*
 * A cookie an earlier, finished entry of @cpu had, and that @pid never
 * held, 0 if none.  A task that held one cookie twice, with none of its
 * requests of other cookies kept between, would leave a trace in which
 * nothing tells its two entries apart: not a test of the reader.
 */
static bool held_by(const struct tort *t, uint64_t cookie, int pid)
{
	size_t i;

	for (i = 0; i < t->nr_entries; i++)
		if (t->entries[i].cookie == cookie && t->entries[i].pid == pid)
			return true;
	return false;
}

static bool reusable(const struct tort *t, const struct entry *e, int cpu, int pid)
{
	return !e->open && ust_abi_cookie_cpu(e->cookie) == (unsigned int)cpu &&
	       !held_by(t, e->cookie, pid);
}

static uint64_t reused_cookie(struct tort *t, int cpu, int pid)
{
	size_t i, n = 0, pick;

	for (i = 0; i < t->nr_entries; i++)
		n += reusable(t, &t->entries[i], cpu, pid);
	if (!n)
		return 0;
	pick = below(t, (unsigned int)n);
	for (i = 0; i < t->nr_entries; i++)
		if (reusable(t, &t->entries[i], cpu, pid) && !pick--)
			return t->entries[i].cookie;
	return 0;
}

/* An event and its cookie: where the layout puts them. */
static int request(struct tort *t, struct task *k, uint64_t ts)
{
	struct trec ev = { .ts = ts, .buf = t->bpf ? 0 : k->buf, .cpu = k->cpu, .pid = k->pid,
			   .kind = K_EVENT, .entry = -1 };
	struct trec ck = ev;

	ck.kind = K_COOKIE;
	ck.entry = k->entry;
	ck.buf = t->bpf ? 1 : k->buf;
	return add_rec(t, &ev) ? -ENOMEM : add_rec(t, &ck);
}

static int generate(struct tort *t, uint64_t seed)
{
	uint64_t ctr[4], ts = 1000000;
	struct task tasks[6];
	int nr_tasks, steps, i, b, c, e;

	t->rng = seed * 2654435761ULL + 0x9E3779B97F4A7C15ULL;
	t->nr_cpus = 1 + (int)below(t, 4);
	t->bpf = chance(t, 50);
	t->nr_bufs = 2;		/* kernel: top and "inst"; BPF: top and "ustitch" */
	nr_tasks = 2 + (int)below(t, 5);
	steps = 150 + (int)below(t, 250);
	for (c = 0; c < 4; c++)
		ctr[c] = UST_ABI_COOKIE_CTR_MASK - below(t, 6);	/* wraps within the trace */
	for (i = 0; i < nr_tasks; i++)
		tasks[i] = (struct task){ .pid = 100 + i, .cpu = (int)below(t, (unsigned int)t->nr_cpus),
					  .buf = (int)below(t, 2), .entry = -1 };

	for (i = 0; i < steps; i++, ts += 1000) {
		struct task *k = &tasks[below(t, (unsigned int)nr_tasks)];
		struct trec r = { .ts = ts, .pid = k->pid, .entry = -1 };
		uint64_t cookie = 0;

		if (chance(t, 15))	/* the task moved before this */
			k->cpu = (int)below(t, (unsigned int)t->nr_cpus);
		if (k->entry < 0 && chance(t, 60)) {
			if (chance(t, 10))
				cookie = reused_cookie(t, k->cpu, k->pid);
			if (!cookie) {
				cookie = ust_abi_cookie((uint64_t)k->cpu, ctr[k->cpu]);
				ctr[k->cpu] = (ctr[k->cpu] + 1) & UST_ABI_COOKIE_CTR_MASK;
			}
			if (!t->bpf)
				k->buf = (int)below(t, 2);
			if ((e = add_entry(t, cookie, k->pid)) < 0)
				return -ENOMEM;
			k->entry = e;
			if (request(t, k, ts))
				return -ENOMEM;
		} else if (k->entry >= 0 && chance(t, 40)) {
			if (request(t, k, ts))
				return -ENOMEM;
		} else if (k->entry >= 0 && chance(t, 70)) {
			/* Back to user space: the entry's stack, where the task is now. */
			r.kind = K_STACK;
			r.entry = k->entry;
			r.cpu = k->cpu;
			r.buf = t->bpf ? 1 : k->buf;
			t->entries[k->entry].open = false;
			k->entry = -1;
			if (add_rec(t, &r))
				return -ENOMEM;
		} else {
			r.kind = K_EVENT;	/* an event that asks for no stack */
			r.cpu = k->cpu;
			r.buf = t->bpf ? 0 : k->buf;
			if (add_rec(t, &r))
				return -ENOMEM;
		}
	}
	/* The last record of each CPU and buffer: kept, it marks the losses before it. */
	for (b = 0; b < t->nr_bufs; b++)
		for (c = 0; c < t->nr_cpus; c++) {
			struct trec r = { .ts = ts, .buf = b, .cpu = c, .pid = 100, .kind = K_TAIL,
					  .entry = -1 };

			if (add_rec(t, &r))
				return -ENOMEM;
		}
	return 0;
}

/* Single cookies and stacks, and runs of one CPU and buffer's records. */
static void drop(struct tort *t)
{
	size_t i, j, start, len, n;
	int b, c, runs;

	for (i = 0; i < t->nr; i++) {
		struct trec *r = &t->recs[i];

		if ((r->kind == K_COOKIE && chance(t, 12)) || (r->kind == K_STACK && chance(t, 15)))
			r->dropped = true;
	}
	for (b = 0; b < t->nr_bufs; b++)
		for (c = 0; c < t->nr_cpus; c++) {
			for (n = 0, i = 0; i < t->nr; i++)
				n += t->recs[i].buf == b && t->recs[i].cpu == c && t->recs[i].kind != K_TAIL;
			if (n < 4 || !chance(t, 50))
				continue;
			for (runs = 1 + (int)below(t, 3); runs--; ) {
				start = below(t, (unsigned int)n);
				len = 3 + below(t, 28);
				for (j = 0, i = 0; i < t->nr; i++) {
					struct trec *r = &t->recs[i];

					if (r->buf != b || r->cpu != c || r->kind == K_TAIL)
						continue;
					if (j >= start && j < start + len) {
						r->dropped = true;
						r->count_unknown = chance(t, 50);
					}
					j++;
				}
			}
		}
}

static const char *buf_arg(const struct tort *t, int buf)
{
	if (!buf)
		return "";
	return t->bpf ? " buf=ustitch" : " buf=inst";
}

/* The entry's own frames, each after @prefix ("raw:" in the spec). */
static void frames(FILE *f, int entry, const char *prefix)
{
	int i, n = 1 + entry % 3;

	for (i = 0; i < n; i++)
		fprintf(f, "%s%s0x%x", i ? "," : "", prefix, 0x100000 + entry * 0x100 + i);
}

/* The records of @i's CPU and buffer dropped since the last one kept before
 * it: their number, *@unknown when one went with a page (no stored count). */
static unsigned long lost_before(const struct tort *t, size_t i, bool *unknown)
{
	const struct trec *r = &t->recs[i];
	unsigned long lost = 0;
	size_t j;

	*unknown = false;
	for (j = i; j-- > 0; ) {
		const struct trec *q = &t->recs[j];

		if (q->buf != r->buf || q->cpu != r->cpu)
			continue;
		if (!q->dropped)
			break;
		lost++;
		*unknown |= q->count_unknown;
	}
	return lost;
}

static void write_spec(struct tort *t, FILE *f)
{
	size_t i;
	int p;

	fprintf(f, "# ust-mktrace --torture: %s layout\ncpus %d\nbuffer %s\n",
		t->bpf ? "BPF" : "kernel", t->nr_cpus, t->bpf ? "ustitch" : "inst");
	for (p = 100; p < 106; p++)
		fprintf(f, "cmdline %d task%d\n", p, p);
	for (i = 0; i < t->nr; i++) {
		struct trec *r = &t->recs[i];
		unsigned long lost;
		bool unknown;

		if (r->dropped)
			continue;
		lost = lost_before(t, i, &unknown);
		if (lost)
			fprintf(f, "lost cpu=%d%s count=%lu\n", r->cpu, buf_arg(t, r->buf),
				unknown ? 0UL : lost);
		switch (r->kind) {
		case K_EVENT:
		case K_TAIL:
			fprintf(f, "event cpu=%d ts=%llu pid=%d%s sys=syscalls name=sys_enter_getppid __syscall_nr=110\n",
				r->cpu, (unsigned long long)r->ts, r->pid, buf_arg(t, r->buf));
			break;
		case K_COOKIE:
			fprintf(f, "cookie cpu=%d ts=%llu pid=%d%s cookie=0x%llx\n", r->cpu,
				(unsigned long long)r->ts, r->pid, buf_arg(t, r->buf),
				(unsigned long long)t->entries[r->entry].cookie);
			break;
		case K_STACK:
			fprintf(f, "stack cpu=%d ts=%llu pid=%d%s cookie=0x%llx frames=", r->cpu,
				(unsigned long long)r->ts, r->pid, buf_arg(t, r->buf),
				(unsigned long long)t->entries[r->entry].cookie);
			frames(f, r->entry, "raw:");
			fputc('\n', f);
			break;
		}
	}
}

/* The entry's stack record, if it was written and kept. */
static bool stack_kept(const struct tort *t, int entry)
{
	size_t i;

	for (i = 0; i < t->nr; i++)
		if (t->recs[i].kind == K_STACK && t->recs[i].entry == entry)
			return !t->recs[i].dropped;
	return false;
}

static void write_truth(struct tort *t, FILE *f)
{
	size_t i, j;

	for (i = 0; i < t->nr; i++) {
		struct trec *r = &t->recs[i];
		unsigned long long ck;
		unsigned int shown = 0;
		unsigned long lost;
		bool unknown;

		if (r->dropped)
			continue;
		/* trace-cmd's mark of the loss, by buffer and CPU */
		lost = lost_before(t, i, &unknown);
		if (lost && unknown)
			fprintf(f, "L %s %d ?\n", r->buf ? buf_arg(t, r->buf) + 5 : "top", r->cpu);
		else if (lost)
			fprintf(f, "L %s %d %lu\n", r->buf ? buf_arg(t, r->buf) + 5 : "top", r->cpu, lost);
		if (r->kind != K_COOKIE && r->kind != K_STACK)
			continue;
		ck = (unsigned long long)t->entries[r->entry].cookie;
		if (r->kind == K_COOKIE) {
			fprintf(f, "C %llu %llx ", (unsigned long long)r->ts / 1000, ck);
			if (stack_kept(t, r->entry)) {
				fputs("stack ", f);
				frames(f, r->entry, "");
			} else {
				fputs("missing", f);
			}
			fputc('\n', f);
			continue;
		}
		for (j = 0; j < t->nr; j++)
			shown += t->recs[j].kind == K_COOKIE && t->recs[j].entry == r->entry &&
				 !t->recs[j].dropped;
		fprintf(f, "S %llu %llx ", (unsigned long long)r->ts / 1000, ck);
		if (shown) {
			fprintf(f, "shown %u\n", shown);
		} else {
			fputs("orphan ", f);
			frames(f, r->entry, "");
			fputc('\n', f);
		}
	}
}

int ust_mkt_run_torture(uint64_t seed, const char *spec_path, const char *truth_path)
{
	struct tort t = { 0 };
	FILE *spec = NULL, *truth = NULL;
	int code = 1;

	if (generate(&t, seed) < 0) {
		fprintf(stderr, "ust-mktrace: --torture: out of memory\n");
		goto out;
	}
	drop(&t);
	spec = fopen(spec_path, "w");
	truth = spec ? fopen(truth_path, "w") : NULL;
	if (!spec || !truth) {
		fprintf(stderr, "ust-mktrace: %s: %s\n", spec ? truth_path : spec_path, strerror(errno));
		goto out;
	}
	write_spec(&t, spec);
	write_truth(&t, truth);
	code = 0;
out:
	if (spec && fclose(spec) && !code) {
		fprintf(stderr, "ust-mktrace: %s: %s\n", spec_path, strerror(errno));
		code = 1;
	}
	if (truth && fclose(truth) && !code) {
		fprintf(stderr, "ust-mktrace: %s: %s\n", truth_path, strerror(errno));
		code = 1;
	}
	free(t.recs);
	free(t.entries);
	return code;
}
