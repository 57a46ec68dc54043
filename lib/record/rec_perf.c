// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_rec_perf: perf sampling events as a record source.
 *
 *   perf ring buffers (one per event, CPU and task) --+
 *   BPF cookies and user stacks (ust_bpfu) ----------+--> ust_perf_stitch
 *                                                              |
 *        "ustitch" buffer of the trace.dat  <-- spool <--------+
 *
 * User stacks (-g) are made one of these ways (plan()):
 *  - the BPF unwinder: a perf_event program on every sampling event gives
 *    the sample's kernel entry a cookie and walks the user stack by CFI
 *    tables at the return to user space (task_work), and perf's own
 *    callchain is asked for the kernel part only.  The default wherever it
 *    can defer: the kernel's own deferred unwinder (below) follows frame
 *    pointers only, and stops at the first frame of a distribution's
 *    binaries that has none;
 *  - perf's own defer_callchain (seed 002, mainline 6.19+; --call-graph
 *    defer, and -g where BPF cannot defer): each sample carries a cookie,
 *    PERF_RECORD_CALLCHAIN_DEFERRED the stack (addresses, turned into file
 *    offsets with the MMAP2 records of the trace);
 *  - --call-graph fp, and -g where neither defers: perf's immediate user
 *    callchain, written as a user_unwind_stack right after the sample's
 *    cookie (the sample says user_stack=immediate).
 *
 * Nothing is written before the end: a sample's user stack is recorded
 * after the sample, maybe in another CPU's buffer, and whether it arrived
 * at all is only known then.  Each sample becomes, on its CPU and at its
 * time: ustitch/sample, ftrace/kernel_stack (if it has kernel frames),
 * user_unwind_cookie; each user stack that serves a sample becomes one
 * user_unwind_stack at its own CPU and time.  A sample whose stack was
 * lost says user_stack=lost and gets its cookie line, where the report
 * explains why; never another entry's stack.
 *
 * USTITCH_PERF_PAGES (a power of two) sets the ring size per event and CPU
 * in pages (tests that want PERF_RECORD_LOST).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "ustitch/grow.h"
#include "ustitch/abi.h"
#include "ustitch/addrfilter.h"
#include "ustitch/bpfu.h"
#include "ustitch/capture.h"
#include "ustitch/encode.h"
#include "ustitch/hmap.h"
#include "ustitch/perf.h"
#include "ustitch/perf_attr.h"
#include "ustitch/perf_enc.h"
#include "ustitch/perf_maps.h"
#include "ustitch/perf_ring.h"
#include "ustitch/perf_stitch.h"
#include "ustitch/probe.h"
#include "ustitch/tdw.h"
#include "ustitch/rec.h"
#include "rec_priv.h"

#define PFX		UST_REC_PFX
#define DEF_FREQ	4000			/* perf record's default */
#define DEF_PAGES	256			/* 1 MiB per ring */
#define BPF_RING_BYTES	(16u << 20)
/* Cookie counters of this source: far from ust_rec_run's BPF instance (0). */
#define BPF_CTR_BASE	(1ULL << 45)
#define FP_CTR_BASE	(1ULL << 46)
#define SAMPLE_TYPE	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
			 PERF_SAMPLE_PERIOD)

enum how { HOW_NONE, HOW_KERNEL, HOW_BPF, HOW_FP };

static const char *const how_names[] = {
	[HOW_NONE] = "none",
	[HOW_KERNEL] = "deferred by the kernel (perf defer_callchain)",
	[HOW_BPF] = "deferred by BPF (perf_event program)",
	[HOW_FP] = "immediate (perf frame-pointer callchain)",
};

struct pev {
	char *name;
	uint32_t type;
	uint64_t config;
};

struct ring {
	int fd;
	unsigned int ev;
	uint32_t cpu;
	bool on_exec;			/* enabled by the command's exec */
	struct ust_perf_ring r;
};

struct tinfo {
	uint32_t tid;
	char comm[17];
	bool kthread;
};

struct perf_src {
	struct ust_rec_source src;
	struct pev *ev;
	int nr_ev;
	uint64_t freq, period;
	bool callchain;
	enum ust_rec_perf_cg cg;
	enum how how;
	bool kernel_defers;		/* perf_event_open takes defer_callchain */
	bool defer_output;		/* ... and defer_output (6.19+: the records' receivers) */
	char how_note[320];
	/* while recording */
	struct ust_rec_ctx *c;
	struct ring *rings;
	size_t nr_rings;
	struct ust_perf_layout lay;
	struct ust_perf_stitch *st;
	struct ust_perf_stitch_stats stats;
	struct ust_perf_maps *maps;	/* HOW_KERNEL, HOW_FP: addresses -> files */
	struct ust_bpfu *bpfu;		/* HOW_BPF, or --addr-filter */
	const struct ust_af *af;	/* --addr-filter (ust_rec_opts'), or NULL */
	struct ust_perf_enc_kstack_fmt kfmt;
	uint16_t sample_id;
	uint64_t bpf_drops;
	struct ust_hmap tid_idx;	/* tid -> ti[] */
	struct tinfo *ti;
	size_t nr_ti, cap_ti;
	struct ust_hmap pids_seen;	/* tgid -> 1: maps looked at */
	bool maps_stale;		/* records were lost: MMAP2 among them? */
	uint64_t fp_ctr;
	unsigned long kstacks, ustacks, spool_errs;
	unsigned long live_samples;	/* read so far, for the status line */
	struct ust_rec_stack_counts walks;	/* how the BPF stacks were taken */
	size_t flush_items;		/* FLUSH_ITEMS, or the test's */
	size_t flush_at;		/* the stitch's items that make a flush (flush()) */
	uint64_t flush_lag;		/* ... up to this long before the newest */
	bool started, stopped;
};

static const struct ust_rec_source_ops perf_ops;

/* ---- options ----------------------------------------------------------- */

static struct perf_src *find_src(const struct ust_rec_opts *o)
{
	struct ust_rec_source *s;

	for (s = o->sources; s; s = s->next)
		if (s->ops == &perf_ops)
			return s->priv;
	return NULL;
}

struct ust_rec_source *ust_rec_perf_source(struct ust_rec_opts *o)
{
	struct perf_src *p = find_src(o);

	if (p)
		return &p->src;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->src.ops = &perf_ops;
	p->src.priv = p;
	ust_hmap_init(&p->tid_idx);
	ust_hmap_init(&p->pids_seen);
	ust_rec_add_source(o, &p->src);
	return &p->src;
}

bool ust_rec_perf_is_event(const char *name)
{
	uint32_t type;
	uint64_t config;

	return ust_perf_event_by_name(name, &type, &config);
}

bool ust_rec_perf_wanted(const struct ust_rec_opts *o)
{
	return find_src(o) != NULL;
}

int ust_rec_perf_add_event(struct ust_rec_source *s, const char *name, char *err, size_t errsz)
{
	struct perf_src *p = s->priv;
	struct pev *n;
	int i;

	for (i = 0; i < p->nr_ev; i++) {
		if (!strcmp(p->ev[i].name, name)) {
			snprintf(err, errsz, "-e %s given twice", name);
			return -EINVAL;
		}
	}
	n = realloc(p->ev, (size_t)(p->nr_ev + 1) * sizeof(*n));
	if (!n)
		goto oom;
	p->ev = n;
	n = &p->ev[p->nr_ev];
	if (!ust_perf_event_by_name(name, &n->type, &n->config)) {
		snprintf(err, errsz, "-e %s: not a perf sampling event", name);
		return -EINVAL;
	}
	if (!(n->name = strdup(name)))
		goto oom;
	p->nr_ev++;
	return 0;
oom:
	snprintf(err, errsz, "out of memory");
	return -ENOMEM;
}

void ust_rec_perf_set_freq(struct ust_rec_source *s, uint64_t hz)
{
	((struct perf_src *)s->priv)->freq = hz;
}

void ust_rec_perf_set_period(struct ust_rec_source *s, uint64_t period)
{
	((struct perf_src *)s->priv)->period = period;
}

void ust_rec_perf_set_call_graph(struct ust_rec_source *s, enum ust_rec_perf_cg cg)
{
	struct perf_src *p = s->priv;

	p->callchain = true;
	/* -g after --call-graph M keeps M. */
	if (cg != UST_REC_PERF_CG_DEFAULT)
		p->cg = cg;
}

/* ---- attributes ---------------------------------------------------------- */

static void build_attr(const struct perf_src *p, int ev, bool tracking, bool inherit,
		       bool on_exec, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = p->ev[ev].type;
	a->config = p->ev[ev].config;
	if (p->period) {
		a->sample_period = p->period;
	} else {
		a->freq = 1;
		a->sample_freq = p->freq ? p->freq : DEF_FREQ;
	}
	a->sample_type = SAMPLE_TYPE | (p->how != HOW_NONE ? PERF_SAMPLE_CALLCHAIN : 0);
	a->sample_id_all = 1;
	/* The clock of BPF (bpf_ktime_get_ns) and of ftrace's "mono". */
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->disabled = 1;
	a->enable_on_exec = on_exec;
	a->inherit = inherit;
	/* BPF makes the user part: perf's would be taken for nothing. */
	a->exclude_callchain_user = p->how == HOW_BPF;
	if (p->how == HOW_KERNEL)
		ust_perf_attr_set_defer(a);
	if (tracking) {
		/* One event per CPU reports tasks (comm names, forks) and, when
		 * user addresses must become files, executable mappings. */
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
		if (p->how == HOW_KERNEL || p->how == HOW_FP) {
			a->mmap = 1;
			a->mmap2 = 1;
		}
		/* Since 6.19 the deferred callchains are side-band records, like
		 * MMAP2: only events with defer_output receive them, and each
		 * ring once.  The seed's kernels gave them to the sampling event. */
		if (p->how == HOW_KERNEL && p->defer_output)
			ust_perf_attr_set_defer_output(a);
	}
}

static const char *open_hint(int err, uint32_t type)
{
	if (type == PERF_TYPE_HARDWARE && (err == ENOENT || err == EOPNOTSUPP || err == ENODEV))
		return " (no hardware PMU here? try cpu-clock)";
	if (err == EACCES || err == EPERM)
		return " (needs root or kernel.perf_event_paranoid <= 1)";
	return "";
}

/* Can the BPF unwinder run here?  Else why not, in @why. */
static bool bpf_usable(char *why, size_t len)
{
	char reason[UST_PROBE_REASON_MAX];

	if (!ust_bpfu_built()) {
		snprintf(why, len, "ustitch was built without BPF");
		return false;
	}
	if (!ust_bpfu_usable(reason, sizeof(reason))) {
		snprintf(why, len, "BPF programs are not usable here (%s)", reason);
		return false;
	}
	return true;
}

int ust_rec_perf_validate(struct ust_rec_opts *o, char *err, size_t errsz)
{
	struct perf_src *p = find_src(o);
	char reason[UST_PROBE_REASON_MAX], reason2[UST_PROBE_REASON_MAX + 64];
	int i;

	if (!p)
		return 0;
	if (!p->nr_ev) {
		snprintf(err, errsz, "-F, -c, -g and --call-graph need a sampling event, e.g. -e cpu-clock");
		return -EINVAL;
	}
	if (p->freq && p->period) {
		snprintf(err, errsz, "-F and -c exclude each other");
		return -EINVAL;
	}
	if (o->clock_given && strcmp(o->clock, "mono")) {
		snprintf(err, errsz, "-C %s: sampling needs -C mono (samples are stamped with CLOCK_MONOTONIC)",
			o->clock);
		return -EINVAL;
	}
	o->clock = "mono";
	p->how = HOW_NONE;
	if (p->callchain && p->cg != UST_REC_PERF_CG_FP) {
		p->kernel_defers = ust_probe_one(UST_PROBE_PERF_DEFER, reason, sizeof(reason));
		p->defer_output = p->kernel_defers && ust_probe_perf_defer_output();
	}
	if (!p->callchain) {
		/* no user stacks */
	} else if (p->cg == UST_REC_PERF_CG_FP || getenv("USTITCH_FORCE_IMMEDIATE")) {
		p->how = HOW_FP;
		if (p->cg != UST_REC_PERF_CG_FP)
			snprintf(p->how_note, sizeof(p->how_note), "immediate stacks requested");
	} else if (p->cg == UST_REC_PERF_CG_DEFER && p->kernel_defers) {
		p->how = HOW_KERNEL;
	} else if (bpf_usable(reason2, sizeof(reason2))) {
		/* Whether BPF can defer here is known once it is loaded (open_bpf()). */
		p->how = HOW_BPF;
		if (p->cg == UST_REC_PERF_CG_DEFER)
			snprintf(p->how_note, sizeof(p->how_note), "perf: %s", reason);
	} else if (p->kernel_defers && p->cg != UST_REC_PERF_CG_BPF) {
		p->how = HOW_KERNEL;
		snprintf(p->how_note, sizeof(p->how_note), "%s", reason2);
	} else {
		snprintf(err, errsz, "-g: %s%s%s: use --call-graph fp", reason2,
			p->cg == UST_REC_PERF_CG_BPF ? "" : ", and this kernel cannot defer perf callchains: ",
			p->cg == UST_REC_PERF_CG_BPF ? "" : reason);
		return -EINVAL;
	}
	if (o->af && o->af->nr && p->how != HOW_BPF) {
		/* Samples are filtered by a perf_event program. */
		if (!ust_bpfu_built()) {
			snprintf(err, errsz, "--addr-filter: filtering samples needs BPF: ustitch was built without it (libbpf, clang, bpftool)");
			return -EINVAL;
		}
		if (!ust_bpfu_usable(reason, sizeof(reason))) {
			snprintf(err, errsz, "--addr-filter: BPF programs are not usable here (%s)", reason);
			return -EINVAL;
		}
	}
	for (i = 0; i < p->nr_ev; i++) {
		struct perf_event_attr a;
		int fd, e;

		/* Ask the kernel now: a refused event must leave no trace behind. */
		build_attr(p, i, true, false, false, &a);
		fd = ust_perf_open(&a, 0, -1, -1, 0);
		if (fd < 0) {
			e = -fd;
			snprintf(err, errsz, "-e %s: perf_event_open: %s%s", p->ev[i].name, strerror(e),
				 open_hint(e, p->ev[i].type));
			return -EINVAL;
		}
		close(fd);
	}
	return 0;
}

/* ---- tasks: names, kernel threads ---------------------------------------- */

static struct tinfo *task_info(struct perf_src *p, uint32_t pid, uint32_t tid)
{
	char path[96], buf[512];
	struct tinfo *t;
	uint64_t i;
	FILE *f;

	if (ust_hmap_get(&p->tid_idx, tid, &i))
		return &p->ti[i];
	if (p->nr_ti == p->cap_ti) {
		void *n = ust_grow(p->ti, &p->cap_ti, p->nr_ti + 1, sizeof(*p->ti), 64);

		if (!n)
			return NULL;
		p->ti = n;
	}
	if (ust_hmap_put(&p->tid_idx, tid, p->nr_ti))
		return NULL;
	t = &p->ti[p->nr_ti++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	if (!tid)
		return t;	/* the idle task: no comm of its own here */
	/* While it lives: its name, and whether it is a kernel thread. */
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	if ((f = fopen(path, "re"))) {
		if (fgets(t->comm, sizeof(t->comm), f))
			t->comm[strcspn(t->comm, "\n")] = '\0';
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, tid);
	if ((f = fopen(path, "re"))) {
		unsigned int flags;
		char *rp;

		if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')) &&
		    sscanf(rp + 1, " %*c %*d %*d %*d %*d %*d %u", &flags) == 1)
			t->kthread = flags & 0x00200000;	/* PF_KTHREAD */
		fclose(f);
	}
	return t;
}

/* A process seen for the first time: note its files while it lives. */
static void note_process(struct perf_src *p, uint32_t pid)
{
	if (!pid || ust_hmap_get(&p->pids_seen, pid, NULL))
		return;
	ust_hmap_put(&p->pids_seen, pid, 1);
	/* BPF-made stacks carry files already (on_bpf_record). */
	if (!p->maps)
		return;
	ust_perf_maps_proc(p->maps, pid, ust_rec_mono_now());
	ust_rec_maps_snapshot(p->c->maps, (pid_t)pid);
}

/*
 * Records were lost, MMAP2 ones maybe (an exec's, a dlopen's): read the
 * maps of the processes seen so far again while they live, or addresses
 * in what they mapped meanwhile would stay unresolved.
 */
static void reread_maps(struct perf_src *p)
{
	uint64_t now = ust_rec_mono_now(), pid, one;
	size_t pos;

	p->maps_stale = false;
	for (pos = 0; ust_hmap_next(&p->pids_seen, &pos, &pid, &one);)
		if (!ust_perf_maps_proc(p->maps, (uint32_t)pid, now))
			ust_rec_maps_snapshot(p->c->maps, (pid_t)pid);
}

/* ---- reading ------------------------------------------------------------- */

struct read_ctx {
	struct perf_src *p;
	unsigned int ring;
	int err;
};

static int on_perf_record(const void *rec, size_t size, void *ctx)
{
	struct read_ctx *rc = ctx;
	struct perf_src *p = rc->p;
	const struct ring *r = &p->rings[rc->ring];
	struct ust_perf_event ev;
	uint32_t type;
	char what[160];

	memcpy(&type, rec, 4);
	if (type == PERF_RECORD_LOST && p->maps)
		p->maps_stale = true;
	if ((type == PERF_RECORD_SAMPLE || type == PERF_RECORD_MMAP2) &&
	    !ust_perf_parse(&p->lay, rec, size, &ev, what, sizeof(what))) {
		if (type == PERF_RECORD_SAMPLE) {
			p->live_samples++;
			task_info(p, ev.id.pid, ev.id.tid);
			note_process(p, ev.id.pid);
		} else if (ev.u.mmap2.ino && p->maps) {
			/* A new file (dlopen): its path and build-id, now. */
			ust_rec_maps_snapshot(p->c->maps, (pid_t)ev.u.mmap2.pid);
		}
	}
	if (ust_perf_stitch_add_record(p->st, rc->ring, r->cpu, &p->lay, rec, size, NULL, 0) < 0) {
		rc->err = -1;
		return -1;
	}
	return 0;
}

/* A followed process's new program, by path (rec_run.c's on_exec()). */
static void on_exec(pid_t tgid, const char *path, uint32_t kdev, uint64_t ino, void *ctx)
{
	struct perf_src *p = ctx;

	(void)tgid;
	ust_rec_maps_note_exec(p->c->maps, path, kdev, ino);
}

static int on_bpf_record(const struct ust_bpfu_rec *r, void *ctx)
{
	struct perf_src *p = ctx;
	struct ust_rec_ctx *c = p->c;
	unsigned int i;

	if (r->kind == UST_BPFU_SAMPLE)
		return ust_perf_stitch_add_request(p->st, r->cpu, r->ts, (uint32_t)r->tgid,
						   (uint32_t)r->tid, r->ip, r->period, r->cookie,
						   r->flags & UST_BPFU_SAMPLE_GAP) ? -ENOMEM : 0;
	if (r->kind != UST_BPFU_STACK)
		return 0;
	/* The files first, while the process lives. */
	for (i = 0; i < r->nr; i++)
		ust_rec_maps_note_file(c->maps, c->spool, r->tgid, r->cpu, r->ts, r->devs[i],
				   r->inodes[i]);
	ust_rec_tables_count(&p->walks, r->flags);
	if (ust_rec_tables_flags_record(c->spool, c->flags_id, r))
		p->spool_errs++;
	return ust_perf_stitch_add_stack(p->st, r->cpu, r->ts, (uint32_t)r->tgid, (uint32_t)r->tid,
					 r->cookie, r->data, r->size) ? -ENOMEM : 0;
}

/*
 * The BPF unwinder's ring wakes the main loop: its exec, NEED_CFI and
 * mmap records ask for tables (a wakeup each), the others once enough
 * bytes wait.  Without it the loop read them on its 50 ms round only, and
 * every table of a program a recording starts (make's first two cc1s)
 * was asked for some 50 ms after the exec, each sample meanwhile parked.
 * The perf rings themselves are read on the rounds: they hold seconds.
 */
static int perf_wait_fds(struct ust_rec_source *s, int epfd)
{
	struct perf_src *p = s->priv;
	struct epoll_event e = { .events = EPOLLIN };

	if (!p->bpfu)
		return 0;
	return epoll_ctl(epfd, EPOLL_CTL_ADD, ust_bpfu_fd(p->bpfu), &e) ? -1 : 0;
}

/* ---- starting ------------------------------------------------------------ */

static unsigned int ring_pages(void)
{
	const char *e = getenv("USTITCH_PERF_PAGES");
	unsigned long v = e ? strtoul(e, NULL, 10) : 0;

	return v && !(v & (v - 1)) && v <= (1UL << 16) ? (unsigned int)v : DEF_PAGES;
}

static int add_ring(struct perf_src *p, int fd, unsigned int ev, uint32_t cpu, bool on_exec)
{
	struct ring *n = realloc(p->rings, (p->nr_rings + 1) * sizeof(*n));
	int ret;

	if (!n)
		return -ENOMEM;
	p->rings = n;
	n = &p->rings[p->nr_rings];
	memset(n, 0, sizeof(*n));
	n->fd = fd;
	n->ev = ev;
	n->cpu = cpu;
	n->on_exec = on_exec;
	ret = ust_perf_ring_mmap(&n->r, fd, ring_pages());
	if (ret)
		return ret;
	p->nr_rings++;
	return 0;
}

struct target {
	pid_t pid;
	bool on_exec;
	bool thread;			/* -P: one of the process's threads */
};

static int add_target(struct target **t, int *nr, pid_t pid, bool on_exec)
{
	struct target *n = realloc(*t, (size_t)(*nr + 1) * sizeof(*n));

	if (!n)
		return -1;
	*t = n;
	n[*nr].pid = pid;
	n[*nr].on_exec = on_exec;
	n[*nr].thread = false;
	(*nr)++;
	return 0;
}

/* -P PID: every thread it has now; perf's inherit follows later ones. */
static int add_threads(struct target **t, int *nr, pid_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return add_target(t, nr, pid, false);
	while ((d = readdir(dir))) {
		long tid = strtol(d->d_name, NULL, 10);

		if (tid > 0 && !add_target(t, nr, (pid_t)tid, false)) {
			(*t)[*nr - 1].thread = true;
			n++;
		}
	}
	closedir(dir);
	return n ? 0 : -1;
}

static int open_events(struct perf_src *p, struct ust_rec_ctx *c, char *err, size_t errlen)
{
	int ncpu = ust_cap_nr_cpus(c->cap), nt = 0, e, i, cpu;
	struct target *t = NULL;
	bool system_wide = c->child <= 0 && !c->o->nr_pids;

	if (c->child > 0 && add_target(&t, &nt, c->child, true))
		goto oom;
	for (i = 0; i < c->o->nr_pids; i++)
		if (add_threads(&t, &nt, c->o->pids[i]))
			goto oom;
	if (system_wide && add_target(&t, &nt, -1, false))
		goto oom;
	for (e = 0; e < p->nr_ev; e++) {
		for (i = 0; i < nt; i++) {
			for (cpu = 0; cpu < ncpu; cpu++) {
				struct perf_event_attr a;
				int fd, r;

				build_attr(p, e, e == 0, t[i].pid > 0, t[i].on_exec, &a);
				fd = ust_perf_open(&a, t[i].pid, cpu, -1, 0);
				if (fd == -ENODEV)
					continue;	/* an offline CPU */
				if (fd == -ESRCH && t[i].thread)
					break;		/* -P: a thread that ended meanwhile */
				if (fd < 0) {
					snprintf(err, errlen, "-e %s on CPU %d: perf_event_open: %s%s",
						 p->ev[e].name, cpu, strerror(-fd),
						 open_hint(-fd, p->ev[e].type));
					free(t);
					return -1;
				}
				r = add_ring(p, fd, (unsigned int)e, (uint32_t)cpu, t[i].on_exec);
				if (r) {
					snprintf(err, errlen, "mapping the perf ring buffer: %s",
						 strerror(-r));
					close(fd);
					free(t);
					return -1;
				}
				if (p->bpfu) {
					r = ust_bpfu_attach_perf(p->bpfu, fd);
					if (r) {
						snprintf(err, errlen, "attaching the BPF %s to -e %s: %s",
							 p->how == HOW_BPF ? "unwinder" : "address filter",
							 p->ev[e].name, strerror(-r));
						free(t);
						return -1;
					}
				}
			}
		}
	}
	/* Enable last, once everything is in place; the command's events
	 * enable themselves at its exec. */
	for (i = 0; i < (int)p->nr_rings; i++)
		if (!p->rings[i].on_exec)
			ioctl(p->rings[i].fd, PERF_EVENT_IOC_ENABLE, 0);
	free(t);
	return 0;
oom:
	free(t);
	snprintf(err, errlen, "out of memory");
	return -1;
}

/*
 * With the BPF unwinder loaded as @u: does it make -g's stacks (HOW_BPF),
 * or perf's defer_callchain (where @kernel_may, HOW_KERNEL), or perf's
 * immediate callchain (HOW_FP)?  Why, in @why.  The one rule of -g, for
 * record and for ustitch probe.
 */
static enum how plan(const struct ust_bpfu *u, bool kernel_may, char *why, size_t len)
{
	if (ust_bpfu_task_work(u) || ust_bpfu_keeps_vmas(u)) {
		if (kernel_may)
			snprintf(why, len, "the kernel's deferred callchains follow frame pointers only: "
				 "--call-graph defer for them");
		return HOW_BPF;
	}
	/*
	 * Neither task_work nor VMAs kept from one walk to the next: a sample's
	 * walk (interrupts off) can look up one VMA only, and a stack taken in
	 * the interrupt is what perf's own user callchain already is, with the
	 * mappings it needs tracked (MMAP2).  BPF then only filters, if asked to.
	 */
	snprintf(why, len, "no BPF task_work, and this kernel keeps no VMAs between a task's walks (6.13+)");
	return kernel_may ? HOW_KERNEL : HOW_FP;
}

void ust_rec_perf_probe_default(const struct ust_probe_report *r, FILE *out)
{
	const struct ust_probe_item *bpf = &r->items[UST_PROBE_BPF_TRACEPOINT];
	struct ust_bpfu_opts bo = { .perf = true, .no_events = true, .ringbuf_bytes = 4096 };
	bool kernel = r->items[UST_PROBE_PERF_DEFER].available;
	enum how how = kernel ? HOW_KERNEL : HOW_FP;
	char why[320] = "", e2[256];
	struct ust_bpfu *u = NULL;

	/* The probes have run: only the unwinder's mode is left to see. */
	if (!bpf->available)
		snprintf(why, sizeof(why), "BPF programs are not usable here (%s)", bpf->reason);
	else if (!(u = ust_bpfu_open(&bo, e2, sizeof(e2))))
		snprintf(why, sizeof(why), "the BPF unwinder did not load: %s", e2);
	else
		how = plan(u, kernel, why, sizeof(why));
	ust_bpfu_close(u);
	fprintf(out, "record -g: user stacks %s%s%s%s\n", how_names[how], why[0] ? " [" : "", why,
		why[0] ? "]" : "");
	if (kernel)
		fprintf(out, "record --call-graph defer: user stacks %s (%s)\n", how_names[HOW_KERNEL],
			ust_probe_perf_defer_output() ? "records to defer_output events, 6.19+" :
			"records to the sampling event, as in seed 002");
}

static int open_bpf(struct perf_src *p, struct ust_rec_ctx *c, char *err, size_t errlen)
{
	struct ust_bpfu_opts bo = { 0 };
	char e2[256];
	int i;

	bo.cookie_type = c->cookie_id;
	bo.stack_type = c->stack_id;
	bo.perf = true;
	bo.no_events = true;	/* this instance is the samples' alone */
	bo.cookie_ctr_base = BPF_CTR_BASE;
	bo.ringbuf_bytes = p->how == HOW_BPF ? BPF_RING_BYTES : 4096;
	bo.af = p->af;
	bo.af_only = p->how != HOW_BPF;
	bo.no_cfi = c->o->unwind_fp;
	p->bpfu = ust_bpfu_open(&bo, e2, sizeof(e2));
	if (!p->bpfu && !bo.af_only && p->kernel_defers && p->cg != UST_REC_PERF_CG_BPF) {
		/* perf defers by itself: frame pointers only, but deferred. */
		snprintf(p->how_note, sizeof(p->how_note), "the BPF unwinder did not load: %s", e2);
		p->how = HOW_KERNEL;
		return p->af ? open_bpf(p, c, err, errlen) : 0;
	}
	if (!p->bpfu) {
		snprintf(err, errlen, "%s%s", p->how == HOW_BPF ? "BPF: " : "", e2);
		return -1;
	}
	if (bo.af_only)
		return 0;
	p->how = plan(p->bpfu, p->kernel_defers && p->cg != UST_REC_PERF_CG_BPF, p->how_note, sizeof(p->how_note));
	if (p->how != HOW_BPF) {
		ust_bpfu_close(p->bpfu);
		p->bpfu = NULL;
		return p->af ? open_bpf(p, c, err, errlen) : 0;
	}
	ust_bpfu_on_exec(p->bpfu, on_exec, p);
	if (c->child > 0 && ust_bpfu_follow(p->bpfu, c->child))
		goto fail;
	for (i = 0; i < c->o->nr_pids; i++)
		if (ust_bpfu_follow(p->bpfu, c->o->pids[i]))
			goto fail;
	ust_rec_tables_preload(p->bpfu, c->o);
	/* Its cookies come from samples, never from the sys_exit tracepoint: arm now. */
	if (ust_bpfu_arm_exit(p->bpfu))
		ust_rec_warn(PFX "perf: BPF: stacks at system call exits unavailable, task_work for all\n");
	return 0;
fail:
	snprintf(err, errlen, "BPF: cannot follow the traced processes: %s", strerror(errno));
	return -1;
}

/*
 * Memory: the stitch holds every record until its fate is known.  Once it
 * holds FLUSH_ITEMS, what is older than FLUSH_LAG_NS before the newest
 * record goes to the spool (on disk) and is forgotten: a recording then
 * holds about a second of records, and the samples whose stacks have not
 * come yet, however long it runs.  The rings are read every 50 ms at most
 * (perf_wait_fds()), so nothing older arrives after.  Each flush sorts
 * what is held: the next waits for twice what is left (at least
 * FLUSH_ITEMS).
 */
#define FLUSH_ITEMS	65536
#define FLUSH_LAG_NS	1000000000ULL

static void flush_init(struct perf_src *p)
{
	const char *v = getenv("USTITCH_TEST_STITCH_FLUSH");
	unsigned long items, ms;

	p->flush_items = FLUSH_ITEMS;
	p->flush_lag = FLUSH_LAG_NS;
	/* Test aid: "ITEMS:LAG_MS", to flush in a short recording. */
	if (v && sscanf(v, "%lu:%lu", &items, &ms) == 2 && items > 0 && ms > 0) {
		p->flush_items = items;
		p->flush_lag = (uint64_t)ms * 1000000;
	}
	p->flush_at = p->flush_items;
}

static int perf_start(struct ust_rec_source *s, struct ust_rec_ctx *c, char *err, size_t errlen)
{
	struct perf_src *p = s->priv;
	char *text;
	int id, i;

	p->c = c;
	p->started = true;
	/* First: it may still turn HOW_BPF into HOW_FP.  --addr-filter: BPF
	 * decides which samples perf keeps. */
	p->af = c->o->af && c->o->af->nr ? c->o->af : NULL;
	if ((p->how == HOW_BPF || p->af) && open_bpf(p, c, err, errlen))
		return -1;
	if (ust_perf_layout_init(&p->lay, SAMPLE_TYPE | (p->how != HOW_NONE ? PERF_SAMPLE_CALLCHAIN : 0),
				 true, err, errlen))
		return -1;
	if (p->how != HOW_NONE) {
		char e2[160];

		text = ust_cap_read_format("ftrace", "kernel_stack");
		if (!text || ust_perf_enc_kstack_fmt_init(&p->kfmt, text, e2, sizeof(e2))) {
			snprintf(err, errlen, "this kernel's ftrace/kernel_stack: %s",
				 text ? e2 : "no format in tracefs");
			free(text);
			return -1;
		}
		free(text);
	}
	id = ust_rec_ctx_new_id(c);
	text = id > 0 ? ust_enc_format_with_id(UST_PERF_ENC_SAMPLE_KEY, id) : NULL;
	if (!text || ust_rec_ctx_add_format(c, UST_ABI_SYSTEM_USTITCH, text)) {
		free(text);
		snprintf(err, errlen, "no event id left for ustitch/sample");
		return -1;
	}
	free(text);
	p->sample_id = (uint16_t)id;
	p->st = ust_perf_stitch_new();
	if (!p->st)
		goto oom;
	ust_perf_stitch_expect_requests(p->st, p->how == HOW_BPF);
	flush_init(p);
	if (p->how == HOW_KERNEL || p->how == HOW_FP) {
		p->maps = ust_perf_maps_new();
		if (!p->maps)
			goto oom;
	}
	for (i = 0; i < c->o->nr_pids; i++)
		note_process(p, (uint32_t)c->o->pids[i]);
	return open_events(p, c, err, errlen);
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* ---- writing ------------------------------------------------------------- */

static void spool(struct perf_src *p, uint32_t cpu, uint64_t ts, const void *data, int len)
{
	if (len <= 0 || ust_rec_spool_add(p->c->spool, cpu, ts, data, (size_t)len))
		p->spool_errs++;
}

/* User addresses as the kernel's unwinder reports frames; then the record. */
static void put_ustack(struct perf_src *p, const struct ust_perf_item *it, uint32_t pid,
		       uint64_t cookie, const uint8_t *ips, unsigned int nr)
{
	struct ust_dec_frame *f = calloc(nr ? nr : 1, sizeof(*f));
	size_t cap = UST_ABI_STACK_HDR_SIZE + (size_t)nr * 20;
	unsigned char *b = malloc(cap);
	unsigned int i;
	int len;

	if (!f || !b) {
		p->spool_errs++;
		goto out;
	}
	for (i = 0; i < nr; i++)
		ust_perf_maps_resolve(p->maps, pid, ust_perf_ip(ips, i), &f[i]);
	len = ust_perf_enc_unwind_stack(b, cap, p->c->stack_id, (int)it->tid, cookie, f, nr);
	for (i = 0; len > 0 && i < nr; i++)
		ust_rec_maps_note_file(p->c->maps, p->c->spool, (pid_t)pid, it->cpu, it->time,
				   f[i].kdev, f[i].ino);
	spool(p, it->cpu, it->time, b, len);
	p->ustacks++;
out:
	free(f);
	free(b);
}

static unsigned int enc_ustack(enum ust_perf_ustack u)
{
	switch (u) {
	case UST_PERF_US_DEFERRED:
		return UST_PERF_ENC_USTACK_DEFERRED;
	case UST_PERF_US_IMMEDIATE:
		return UST_PERF_ENC_USTACK_IMMEDIATE;
	case UST_PERF_US_LOST:
	case UST_PERF_US_UNFINISHED:
	case UST_PERF_US_NO_COOKIE:
		return UST_PERF_ENC_USTACK_LOST;
	case UST_PERF_US_NONE:
		break;
	}
	return UST_PERF_ENC_USTACK_NONE;
}

static void put_sample(struct perf_src *p, const struct ust_perf_item *it)
{
	const struct ust_perf_chain *ch = &it->ev.u.sample.chain;
	unsigned int nk = it->ev.u.sample.has_chain ? ch->nr_kernel : 0;
	enum ust_perf_ustack us = it->ustack;
	struct ust_perf_enc_sample_rec sr = { 0 };
	unsigned char buf[256], *kb;
	struct tinfo *t;
	size_t kcap;

	/* A kernel thread has no user stack to lose (no BPF request). */
	if (us == UST_PERF_US_NO_COOKIE && (t = task_info(p, it->pid, it->tid)) && t->kthread)
		us = UST_PERF_US_NONE;
	sr.type = p->sample_id;
	sr.pid = (int)it->tid;
	sr.ip = it->ev.u.sample.ip;
	sr.period = it->ev.u.sample.period;
	sr.event = it->stream < p->nr_rings ? p->ev[p->rings[it->stream].ev].name : "";
	sr.mode = it->ev.misc & PERF_RECORD_MISC_CPUMODE_MASK;
	sr.ustack = enc_ustack(us);
	sr.kernel_frames = nk;
	/* The report names the ip and the kernel frames through kallsyms. */
	ust_rec_ctx_kaddr(p->c, sr.ip);
	for (unsigned int i = 0; i < nk; i++)
		ust_rec_ctx_kaddr(p->c, ust_perf_ip(ch->kernel, i));
	spool(p, it->cpu, it->time, buf, ust_perf_enc_sample(buf, sizeof(buf), &sr));
	if (nk) {
		kcap = p->kfmt.caller_off + (size_t)nk * 8;
		kb = malloc(kcap);
		if (kb) {
			spool(p, it->cpu, it->time, kb,
			      ust_perf_enc_kstack(&p->kfmt, kb, kcap, (int)it->tid, ch->kernel, nk));
			p->kstacks++;
		} else {
			p->spool_errs++;
		}
		free(kb);
	}
	if (it->has_cookie && us != UST_PERF_US_NO_COOKIE && us != UST_PERF_US_NONE) {
		/* Its line in the report says why a lost stack is missing. */
		spool(p, it->cpu, it->time, buf,
		      ust_enc_unwind_cookie(buf, sizeof(buf), p->c->cookie_id, (int)it->tid,
					    it->cookie));
	} else if (us == UST_PERF_US_IMMEDIATE) {
		uint64_t cookie = ust_abi_cookie(it->cpu, FP_CTR_BASE + ++p->fp_ctr);

		spool(p, it->cpu, it->time, buf,
		      ust_enc_unwind_cookie(buf, sizeof(buf), p->c->cookie_id, (int)it->tid,
					    cookie));
		/* No stack_flags record: its "immediate" text speaks of the BPF
		 * fallback; the sample's own user_stack=immediate says it. */
		put_ustack(p, it, it->pid, cookie, ch->user, ch->nr_user);
	}
}

static void put_deferred(struct perf_src *p, const struct ust_perf_item *it)
{
	if (!it->served)
		return;		/* no sample of this trace asked for it */
	if (it->blob) {
		spool(p, it->cpu, it->time, it->blob, (int)it->blob_len);
		p->ustacks++;
		return;
	}
	/* Which unwinder made it: the kernel's, by frame pointers only. */
	if (p->c->flags_id) {
		unsigned char fb[24];

		spool(p, it->cpu, it->time, fb,
		      ust_enc_stack_flags(fb, sizeof(fb), p->c->flags_id, (int)it->tid, it->cookie,
					  UST_ABI_STACK_F_KERNEL));
	}
	put_ustack(p, it, it->pid, it->cookie, it->ev.u.deferred.ips, it->ev.u.deferred.nr);
}

static void set_comm(struct perf_src *p, uint32_t pid, uint32_t tid, const char *comm)
{
	struct tinfo *t = task_info(p, pid, tid);

	if (t)
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
}

static void put_item(struct perf_src *p, const struct ust_perf_item *it)
{
	switch (it->kind) {
	case UST_PERF_ITEM_OTHER:
		if (p->maps)
			ust_perf_maps_apply(p->maps, &it->ev);
		if (it->ev.type == PERF_RECORD_COMM)
			set_comm(p, it->ev.u.comm.pid, it->ev.u.comm.tid, it->ev.u.comm.comm);
		break;
	case UST_PERF_ITEM_LOST:
		if (ust_rec_spool_add_lost(p->c->spool, it->cpu, it->time, it->lost))
			p->spool_errs++;
		break;
	case UST_PERF_ITEM_SAMPLE:
		put_sample(p, it);
		break;
	case UST_PERF_ITEM_DEFERRED:
		put_deferred(p, it);
		break;
	case UST_PERF_ITEM_REQUEST:
		break;
	}
}

static void put_flushed(const struct ust_perf_item *it, void *ctx)
{
	put_item(ctx, it);
}

static int flush(struct perf_src *p)
{
	uint64_t newest = ust_perf_stitch_newest(p->st);
	size_t left;

	if (ust_perf_stitch_pending(p->st) < p->flush_at || newest <= p->flush_lag)
		return 0;
	if (ust_perf_stitch_flush(p->st, newest - p->flush_lag, put_flushed, p))
		return -1;
	/* Twice what is left, so that a flush does not sort the same items again at once. */
	left = ust_perf_stitch_pending(p->st);
	p->flush_at = 2 * left > p->flush_items ? 2 * left : p->flush_items;
	return 0;
}

static void write_all(struct perf_src *p)
{
	struct ust_tdw *w = ust_cap_writer(p->c->cap);
	size_t i, n = ust_perf_stitch_count(p->st);

	for (i = 0; i < n; i++)
		put_item(p, ust_perf_stitch_at(p->st, i));
	/* Names of the sampled threads: ftrace knows none of them unless an
	 * ftrace event was recorded for them too. */
	for (i = 0; w && i < p->nr_ti; i++)
		if (p->ti[i].tid && p->ti[i].comm[0])
			ust_tdw_add_cmdline(w, (int)p->ti[i].tid, p->ti[i].comm, NULL, 0);
}

static int perf_poll(struct ust_rec_source *s, struct ust_rec_ctx *c)
{
	struct perf_src *p = s->priv;
	struct ust_bpfu_stats bs;
	size_t i;

	(void)c;
	for (i = 0; i < p->nr_rings; i++) {
		struct read_ctx rc = { .p = p, .ring = (unsigned int)i };

		if (ust_perf_ring_read(&p->rings[i].r, on_perf_record, &rc) < 0 || rc.err)
			return -1;
	}
	if (p->maps_stale)
		reread_maps(p);
	if (p->bpfu && ust_bpfu_consume(p->bpfu, on_bpf_record, p) < 0)
		return -1;
	/* Records the BPF side could not hand over: lost, from now back. */
	if (p->bpfu && !ust_bpfu_get_stats(p->bpfu, &bs) && bs.drops > p->bpf_drops) {
		uint64_t now = ust_rec_mono_now();

		if (ust_perf_stitch_add_lost(p->st, 0, now, bs.drops - p->bpf_drops) ||
		    ust_rec_spool_add_lost(p->c->spool, 0, now, bs.drops - p->bpf_drops))
			return -1;
		p->bpf_drops = bs.drops;
	}
	return flush(p);
}

static void perf_stop(struct ust_rec_source *s, struct ust_rec_ctx *c)
{
	struct perf_src *p = s->priv;
	size_t i;

	if (p->stopped || !p->st)
		return;
	p->stopped = true;
	for (i = 0; i < p->nr_rings; i++)
		ioctl(p->rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	/* The stacks of the last kernel entries are made on their way out. */
	if (p->bpfu && p->how == HOW_BPF)
		usleep(20000);
	if (perf_poll(s, c) < 0)
		ust_rec_warn(PFX "perf: reading the last records failed\n");
	/* The stacks still waiting for a table, finished (by frame pointers) before the stitch. */
	if (p->bpfu && ust_bpfu_flush(p->bpfu, on_bpf_record, p) < 0)
		ust_rec_warn(PFX "perf: reading the last records failed\n");
	if (ust_perf_stitch_finish(p->st, &p->stats)) {
		ust_rec_warn(PFX "perf: out of memory while stitching\n");
		return;
	}
	write_all(p);
	if (p->spool_errs)
		ust_rec_warn(PFX "perf: %lu records could not be written\n", p->spool_errs);
}

/* ---- report ---------------------------------------------------------------- */

static void perf_summary(struct ust_rec_source *s, FILE *out)
{
	struct perf_src *p = s->priv;
	const struct ust_perf_stitch_stats *st = &p->stats;
	unsigned long unwinds = p->ustacks;
	struct ust_bpfu_stats bs = { 0 };
	uint64_t bad = 0;
	size_t i;
	int e;

	if (!p->stopped)
		return;
	for (i = 0; i < p->nr_rings; i++)
		bad += p->rings[i].r.bad;
	fprintf(out, PFX "perf: %lu samples of", st->samples);
	for (e = 0; e < p->nr_ev; e++)
		fprintf(out, "%s %s", e ? "," : "", p->ev[e].name);
	if (p->period)
		fprintf(out, " (every %" PRIu64 " events)", p->period);
	else
		fprintf(out, " (%" PRIu64 " Hz)", p->freq ? p->freq : DEF_FREQ);
	fprintf(out, ", %lu with kernel frames; user stacks: %s%s%s%s\n", p->kstacks,
		how_names[p->how], p->how_note[0] ? " [" : "", p->how_note,
		p->how_note[0] ? "]" : "");
	if (p->how == HOW_NONE)
		goto lost;
	fprintf(out, PFX "perf: user stacks: %lu stitched, %lu immediate, %lu lost (%lu after lost records, %lu unfinished at the end, %lu without a cookie), %lu none (kernel threads)\n",
		st->deferred_ok, st->immediate, st->lost + st->unfinished + st->no_cookie, st->lost,
		st->unfinished, st->no_cookie, st->no_user);
	if (unwinds && st->deferred_ok)
		fprintf(out, PFX "perf: %lu user stacks written for %lu stitched samples: %.2f samples per unwind\n",
			unwinds - st->immediate, st->deferred_ok,
			unwinds > st->immediate ? (double)st->deferred_ok / (double)(unwinds - st->immediate) : 0.0);
	if (p->bpfu && p->how == HOW_BPF)
		ust_rec_tables_summary(p->bpfu, &p->walks, out);
	if (p->bpfu && p->how == HOW_BPF)
		fprintf(out, PFX "perf: BPF: %lu sample cookies, %lu paired with their sample, %lu given up (a record was dropped beside them)\n",
			st->requests, st->requests_matched, st->requests_ambiguous);
	if (p->bpfu && p->how == HOW_BPF && !ust_bpfu_get_stats(p->bpfu, &bs) && (bs.late || bs.stale || bs.sched_fail))
		fprintf(out, PFX "perf: BPF: %" PRIu64 " stacks unwound in a later entry, %" PRIu64 " cookies left without a stack, %" PRIu64 " task_works refused\n",
			bs.late, bs.stale, bs.sched_fail);
lost:
	if (st->lost_marks || bad || st->bad_records)
		fprintf(out, PFX "perf: %" PRIu64 " records lost (%lu marks), %lu malformed records skipped, %" PRIu64 " ring resyncs\n",
			st->lost_count, st->lost_marks, st->bad_records, bad);
}

static void perf_counts(struct ust_rec_source *s, struct ust_rec_counts *n)
{
	struct perf_src *p = s->priv;
	const struct ust_perf_stitch_stats *st = &p->stats;

	n->sample_stacks_asked |= p->how != HOW_NONE;
	if (!p->stopped) {
		n->samples += p->live_samples;
		n->lost += p->bpf_drops;
		return;
	}
	n->samples += st->samples;
	n->sample_stacks += st->deferred_ok + st->immediate;
	n->lost += st->lost_count;
}

static void perf_free(struct ust_rec_source *s)
{
	struct perf_src *p = s->priv;
	size_t i;
	int e;

	ust_bpfu_close(p->bpfu);	/* detaches before the events go */
	for (i = 0; i < p->nr_rings; i++) {
		ust_perf_ring_fini(&p->rings[i].r);
		close(p->rings[i].fd);
	}
	free(p->rings);
	ust_perf_stitch_free(p->st);
	ust_perf_maps_free(p->maps);
	for (e = 0; e < p->nr_ev; e++)
		free(p->ev[e].name);
	free(p->ev);
	free(p->ti);
	ust_hmap_fini(&p->tid_idx);
	ust_hmap_fini(&p->pids_seen);
	free(p);
}

static const struct ust_rec_source_ops perf_ops = {
	.name = "perf",
	.kaddrs_all = true,
	.start = perf_start,
	.poll = perf_poll,
	.wait_fds = perf_wait_fds,
	.stop = perf_stop,
	.summary = perf_summary,
	.counts = perf_counts,
	.free = perf_free,
};
