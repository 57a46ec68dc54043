// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_lh_bpf: the lock_held() filter object, loaded beside the unwinder.
 *
 * lockheld.bpf.c gives kept events cookies by the unwinder's rules
 * (bpf/bpfu_cookie.bpf.h), and so declares the unwinder's maps.  With an
 * unwinder running, every one of those maps is replaced by the unwinder's
 * (bpf_map__reuse_fd) before loading: kept events take cookies from the
 * same per-CPU counters and task storage, and their stacks, taken by the
 * unwinder's programs (its sys_exit program, or its ust_bpfu_later,
 * tail-called), come out of the same ring buffer, which the recorder
 * already reads.  Without the unwinder there are no stacks, and the
 * object's own copies only follow the traced processes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

#include "ustitch/af_bpf.h"
#include "ustitch/bpfload.h"
#include "ustitch/bpfu.h"
#include "ustitch/filter.h"
#include "ustitch/lh.h"
#include "ustitch/lh_bpf.h"
#include "ustitch/lh_track.h"

#ifdef UST_HAVE_BPF

#include <linux/perf_event.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

typedef __u32 u32;
typedef __u64 u64;
#include "ust_lh_skel.h"
#include "ust_lh_track_skel.h"
#include "lockheld_abi.h"
#include "ust_bpfu_abi.h"
#include "kbtf.h"

_Static_assert(sizeof(struct ust_lh_hit_u) == sizeof(struct ust_lh_hit), "one hit layout");
_Static_assert(sizeof(struct ust_lh_bpf_stats) == sizeof(struct ust_lh_counters), "one stats layout");
_Static_assert(UST_LH_BPF_NR_SC == UST_LH_NR_SC, "one system call bound");

#define MAX_LINKS 256

struct ust_lh_bpf {
	struct ust_lh_skel *skel;
	struct ust_lh_track_skel *track;
	struct ring_buffer *rb;
	struct bpf_link *links[MAX_LINKS];
	int nr_links;
	bool mmap_read;
	bool own_run;		/* ust_bpfu_run is ours, not the unwinder's */
	void (*fn)(const struct ust_lh_hit_u *h, const void *rec, size_t len, void *ctx);
	void *fn_ctx;
};

static int add_link(struct ust_lh_bpf *b, struct bpf_link *l)
{
	if (!l)
		return -errno;
	if (b->nr_links == MAX_LINKS) {
		bpf_link__destroy(l);
		return -ENOSPC;
	}
	b->links[b->nr_links++] = l;
	return 0;
}

static int on_hit(void *ctx, void *data, size_t size)
{
	const struct ust_lh_hit_raw *raw = data;
	struct ust_lh_bpf *b = ctx;

	if (!b->fn)
		return 0;
	if (size >= sizeof(*raw) && raw->len <= sizeof(raw->rec))
		b->fn(data, raw->rec, raw->len, b->fn_ctx);
	else if (size >= sizeof(struct ust_lh_hit_u))
		b->fn(data, NULL, 0, b->fn_ctx);
	return 0;
}

static size_t pow2(size_t want, size_t dflt)
{
	size_t sz = 4096;

	if (!want)
		want = dflt;
	while (sz < want && sz < ((size_t)1 << 30))
		sz <<= 1;
	return sz;
}

static bool btf_has_func(void *ctx, const char *f)
{
	return btf__find_by_name_kind(ctx, f, BTF_KIND_FUNC) >= 0;
}

/*
 * 1 if the mmap_lock tracepoints still pass memcg_path before write (up
 * to 6.12: the prototype btf_trace_<name> then has 5 parameters, the
 * first being the tracepoint's data pointer), else 0.
 */
static __u32 mmap_tp_argoff(void)
{
	const struct btf *btf = ust_kbtf();
	const struct btf_type *t;
	__u32 off = 0;
	int id;

	if (!btf)
		return 0;
	id = btf__find_by_name_kind(btf, "btf_trace_mmap_lock_acquire_returned", BTF_KIND_TYPEDEF);
	t = id > 0 ? btf__type_by_id(btf, (__u32)id) : NULL;
	while (t && (btf_is_typedef(t) || btf_is_ptr(t)))
		t = btf__type_by_id(btf, t->type);
	if (t && btf_is_func_proto(t) && btf_vlen(t) == 5)
		off = 1;
	return off;
}

/* The fentry/fexit trackers, sharing ust_lh_held and ust_lh_spin with the filter. */
static int open_track(struct ust_lh_bpf *b, const struct ust_lh_bpf_opts *o, char *err,
		      size_t errsz)
{
	const char *names[512];
	char buf[512][64];
	struct bpf_program *p;
	const struct btf *btf = ust_kbtf();
	int n, i, ret;

	if (!btf) {
		snprintf(err, errsz, "held-lock tracking: no vmlinux BTF");
		return -ENOENT;
	}
	n = ust_lh_track_progs(o->families, btf_has_func, (void *)btf, names, buf, 512);
	b->track = ust_lh_track_skel__open();
	if (n < 0 || !b->track) {
		ret = n < 0 ? n : errno ? -errno : -ENOMEM;
		snprintf(err, errsz, "held-lock tracking: cannot open its BPF object");
		return ret;
	}
	bpf_object__for_each_program(p, b->track->obj)
		bpf_program__set_autoload(p, false);
	for (i = 0; i < n; i++) {
		p = bpf_object__find_program_by_name(b->track->obj, names[i]);
		if (p)
			bpf_program__set_autoload(p, true);
	}
	b->track->rodata->ust_lh_track_slab = o->track_slab;
	ret = bpf_map__reuse_fd(b->track->maps.ust_lh_held, bpf_map__fd(b->skel->maps.ust_lh_held));
	if (!ret)
		ret = bpf_map__reuse_fd(b->track->maps.ust_lh_spin,
					bpf_map__fd(b->skel->maps.ust_lh_spin));
	if (!ret)
		ret = bpf_map__reuse_fd(b->track->maps.ust_bpfu_tgids,
					bpf_map__fd(b->skel->maps.ust_bpfu_tgids));
	if (!ret) {
		struct ust_bpfload l;
		char e[512];

		ret = ust_bpfload_begin(&l, b->track->obj, false);
		if (!ret)
			ret = ust_lh_track_skel__load(b->track);
		ret = ust_bpfload_end(&l, ret, "held-lock tracking (fentry/fexit)", NULL, e, sizeof(e));
		if (ret) {
			snprintf(err, errsz, "held-lock tracking: %s", e);
			return ret;
		}
	}
	if (ret) {
		snprintf(err, errsz, "held-lock tracking: sharing the filter's maps: %s", strerror(-ret));
		return ret;
	}
	bpf_object__for_each_program(p, b->track->obj) {
		if (!bpf_program__autoload(p))
			continue;
		ret = add_link(b, bpf_program__attach(p));
		if (ret) {
			snprintf(err, errsz, "held-lock tracking: attaching %s: %s",
				 bpf_program__name(p), strerror(-ret));
			return ret;
		}
	}
	return 0;
}

struct ust_lh_bpf *ust_lh_bpf_open(const struct ust_lh_bpf_opts *o, char *err, size_t errsz)
{
	struct ust_lh_bpf *b = calloc(1, sizeof(*b));
	struct bpf_map *m;
	int ret;

	if (!b) {
		snprintf(err, errsz, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	b->mmap_read = o->mmap_read;
	b->skel = ust_lh_skel__open();
	if (!b->skel) {
		ret = -errno;
		snprintf(err, errsz, "opening the lock_held() BPF object: %s", strerror(-ret));
		goto fail;
	}
	bpf_program__set_autoload(b->skel->progs.ust_lh_mmap_acquired, o->mmap_read);
	bpf_program__set_autoload(b->skel->progs.ust_lh_mmap_released, o->mmap_read);
	/* No unwinder to follow children and clean up: our own followers do. */
	bpf_program__set_autoload(b->skel->progs.ust_lh_fork, o->follow && !o->bpfu);
	bpf_program__set_autoload(b->skel->progs.ust_lh_exit, o->follow && !o->bpfu);
	bpf_program__set_autoload(b->skel->progs.ust_lh_sys_enter, o->raw_enter);
	bpf_program__set_autoload(b->skel->progs.ust_lh_sys_exit, o->raw_exit);
	b->skel->rodata->ust_lh_stacks = o->bpfu && ust_bpfu_deferred(o->bpfu) &&
					 ust_bpfu_later_fd(o->bpfu) >= 0;
	b->skel->rodata->ust_lh_mmap_track = o->mmap_read;
	b->skel->rodata->ust_preempt_off = ust_bpfu_preempt_off(o->bpfu);
	b->skel->rodata->ust_lh_mmap_argoff = o->mmap_read ? mmap_tp_argoff() : 0;
	b->skel->rodata->ust_lh_tracking = o->families != 0;
	b->skel->rodata->ust_lh_spin_tracking = (o->families & UST_LH_FAM_SPINLOCK) != 0;
	bpf_map__set_max_entries(b->skel->maps.ust_lh_hits, (__u32)pow2(o->hits_bytes, 1 << 20));
	/* Kept records in the hits: their reader is woken by the amount, as the unwinder's. */
	b->skel->rodata->ust_lh_wake_bytes = ust_bpfu_wake_bytes(pow2(o->hits_bytes, 1 << 20));
	bpf_object__for_each_map(m, b->skel->obj) {
		const char *name = bpf_map__name(m);
		int fd;

		if (strncmp(name, "ust_bpfu_", 9))
			continue;
		fd = o->bpfu ? ust_bpfu_map_fd(o->bpfu, name) : -1;
		if (fd >= 0) {
			ret = bpf_map__reuse_fd(m, fd);
			if (ret) {
				snprintf(err, errsz, "sharing the unwinder's map %s: %s", name,
					 strerror(-ret));
				goto fail;
			}
		} else if (bpf_map__type(m) == BPF_MAP_TYPE_RINGBUF) {
			bpf_map__set_max_entries(m, 4096);	/* unused without stacks */
		}
	}
	/* The unwinder's ring, when shared: its size paces the reader's wakeups. */
	b->skel->rodata->ust_rb_wake_bytes =
		ust_bpfu_wake_bytes(bpf_map__max_entries(b->skel->maps.ust_bpfu_events));
	b->own_run = !o->bpfu;
	{
		struct ust_bpfload l;

		ret = ust_bpfload_begin(&l, b->skel->obj, false);
		if (!ret)
			ret = ust_lh_skel__load(b->skel);
		ret = ust_bpfload_end(&l, ret, "the lock_held() filter", NULL, err, errsz);
		if (ret)
			goto fail;
	}
	if (b->skel->rodata->ust_lh_stacks) {
		__u32 k = 0;
		int fd = ust_bpfu_later_fd(o->bpfu);

		ret = bpf_map__update_elem(b->skel->maps.ust_lh_stack, &k, sizeof(k), &fd, sizeof(fd),
					   BPF_ANY);
		if (ret) {
			snprintf(err, errsz, "handing kept events to the unwinder: %s", strerror(-ret));
			goto fail;
		}
	}
	b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.ust_lh_hits), on_hit, b, NULL);
	if (!b->rb) {
		ret = -errno;
		snprintf(err, errsz, "lock_held() ring buffer: %s", strerror(-ret));
		goto fail;
	}
	if (o->mmap_read) {
		ret = add_link(b, bpf_program__attach_raw_tracepoint(b->skel->progs.ust_lh_mmap_acquired,
								     "mmap_lock_acquire_returned"));
		if (ret) {
			snprintf(err, errsz, "attaching to mmap_lock_acquire_returned: %s", strerror(-ret));
			goto fail;
		}
	}
	if (o->follow && !o->bpfu) {
		ret = add_link(b, bpf_program__attach_raw_tracepoint(b->skel->progs.ust_lh_fork,
								     "sched_process_fork"));
		if (!ret)
			ret = add_link(b, bpf_program__attach_tracepoint(b->skel->progs.ust_lh_exit,
									 "sched", "sched_process_exit"));
		if (ret) {
			snprintf(err, errsz, "attaching the process followers: %s", strerror(-ret));
			goto fail;
		}
	}
	if (o->families && (ret = open_track(b, o, err, errsz)))
		goto fail;
	return b;
fail:
	ust_lh_bpf_close(b);
	errno = ret < 0 ? -ret : EINVAL;
	return NULL;
}

/* For lib/record/af_bpf.c: the loaded object, and links closed with it. */
static int keep_link(void *b, struct bpf_link *l)
{
	return add_link(b, l);
}

int ust_lh_bpf_set_af(struct ust_lh_bpf *b, const struct ust_af *af, char *err, size_t errsz)
{
	return ust_af_bpf_setup(b->skel->obj, keep_link, b, af, err, errsz);
}

int ust_lh_bpf_attach_late(struct ust_lh_bpf *b)
{
	if (!b->mmap_read)
		return 0;
	return add_link(b, bpf_program__attach_raw_tracepoint(b->skel->progs.ust_lh_mmap_released,
							      "mmap_lock_released"));
}

static int perf_tp_open(const char *sys, const char *ev, pid_t pid, int cpu)
{
	struct perf_event_attr a;
	char path[512], buf[32];
	FILE *f;
	int id;

	snprintf(path, sizeof(path), "%s/events/%s/%s/id", tracefs_tracing_dir(), sys, ev);
	f = fopen(path, "r");
	if (!f)
		return -1;
	id = fgets(buf, sizeof(buf), f) ? atoi(buf) : -1;
	fclose(f);
	if (id < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (__u64)id;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_RAW;
	return (int)syscall(SYS_perf_event_open, &a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

int ust_lh_bpf_calibrate(struct ust_lh_bpf *b, char *err, size_t errsz)
{
	LIBBPF_OPTS(bpf_perf_event_opts, po);
	struct bpf_link *l;
	int fd, bias, ret;

	fd = perf_tp_open("syscalls", "sys_enter_getppid", 0, -1);
	if (fd < 0) {
		ret = errno ? -errno : -ENOENT;
		snprintf(err, errsz, "calibration: perf event on syscalls:sys_enter_getppid: %s",
			 strerror(errno));
		return ret;
	}
	b->skel->bss->ust_lh_calib_tid = (__u32)syscall(SYS_gettid);
	l = bpf_program__attach_perf_event_opts(b->skel->progs.ust_lh_calib, fd, &po);
	if (!l) {
		ret = -errno;
		snprintf(err, errsz, "calibration: attaching: %s", strerror(-ret));
		close(fd);
		return ret;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	syscall(SYS_getppid);
	bpf_link__destroy(l);
	close(fd);
	bias = b->skel->data->ust_lh_calib_rcu;
	if (bias < 0 || bias > 8) {
		snprintf(err, errsz, "calibration: the program did not run (read %d)", bias);
		return -EIO;
	}
	b->skel->data->ust_lh_rcu_bias = bias;
	return bias;
}

int ust_lh_bpf_rcu_bias(const struct ust_lh_bpf *b)
{
	return b->skel->data->ust_lh_rcu_bias;
}

int ust_lh_bpf_follow(struct ust_lh_bpf *b, pid_t tgid)
{
	__u32 key = (__u32)tgid;
	__u8 one = 1;
	int ret;

	ret = bpf_map__update_elem(b->skel->maps.ust_bpfu_tgids, &key, sizeof(key), &one,
				   sizeof(one), BPF_ANY);
	if (!ret && b->own_run) {
		/* With an unwinder, its ust_bpfu_follow() sets the shared switch. */
		struct ust_bpfu_run run = { .filter_on = 1 };
		__u32 k = 0;

		ret = bpf_map__update_elem(b->skel->maps.ust_bpfu_run, &k, sizeof(k), &run,
					   sizeof(run), BPF_ANY);
	}
	if (!ret && b->track)
		b->track->bss->ust_lh_track_follow = 1;
	return ret;
}

int ust_lh_bpf_set_prog(struct ust_lh_bpf *b, int slot, const struct ust_lh_compiled *c,
			bool stacks)
{
	struct ust_filter_prog p;
	__u32 key = (__u32)slot;

	if (slot < 0 || slot >= UST_LH_MAX_PROGS || c->graph.nr > UST_FILTER_MAX_INSNS)
		return -EINVAL;
	memset(&p, 0, sizeof(p));
	p.nr = (__u32)c->graph.nr;
	p.flags = stacks ? UST_FILTER_P_STACKS : 0;
	memcpy(p.insn, c->graph.insn, (size_t)c->graph.nr * sizeof(p.insn[0]));
	if (ust_filter_has_op(&c->graph, UST_FILTER_OP_AF_FILE))
		p.flags |= UST_FILTER_P_AF_FILE;
	return bpf_map__update_elem(b->skel->maps.ust_lh_progs, &key, sizeof(key), &p, sizeof(p),
				    BPF_ANY);
}

int ust_lh_bpf_attach(struct ust_lh_bpf *b, int slot, int perf_fd)
{
	LIBBPF_OPTS(bpf_perf_event_opts, po, .bpf_cookie = (__u64)slot);

	return add_link(b, bpf_program__attach_perf_event_opts(b->skel->progs.ust_lh_filter,
							       perf_fd, &po));
}

int ust_lh_bpf_set_raw(struct ust_lh_bpf *b, int slot, int nr, bool exit, uint16_t type,
		       unsigned int nargs)
{
	struct bpf_program *p = exit ? b->skel->progs.ust_lh_sys_exit : b->skel->progs.ust_lh_sys_enter;
	struct ust_lh_sc sc;
	__u32 key = (__u32)nr;
	int ret;

	if (slot < 0 || slot >= UST_LH_MAX_PROGS || nr < 0 || nr >= UST_LH_NR_SC || nargs > 6 ||
	    !bpf_program__autoload(p))
		return -EINVAL;
	/* Its sys_enter and its sys_exit share the number's entry. */
	ret = bpf_map__lookup_elem(b->skel->maps.ust_lh_sc, &key, sizeof(key), &sc, sizeof(sc), 0);
	if (ret)
		return ret;
	sc.slot1[exit] = (__u32)slot + 1;
	sc.type[exit] = type;
	if (!exit)
		sc.nargs = nargs;
	return bpf_map__update_elem(b->skel->maps.ust_lh_sc, &key, sizeof(key), &sc, sizeof(sc), BPF_ANY);
}

int ust_lh_bpf_attach_raw(struct ust_lh_bpf *b)
{
	int ret = 0;

	if (bpf_program__autoload(b->skel->progs.ust_lh_sys_enter))
		ret = add_link(b, bpf_program__attach(b->skel->progs.ust_lh_sys_enter));
	if (!ret && bpf_program__autoload(b->skel->progs.ust_lh_sys_exit))
		ret = add_link(b, bpf_program__attach(b->skel->progs.ust_lh_sys_exit));
	return ret;
}

int ust_lh_bpf_hits_fd(const struct ust_lh_bpf *b)
{
	return b->rb ? ring_buffer__epoll_fd(b->rb) : -1;
}

int ust_lh_bpf_hits(struct ust_lh_bpf *b,
		    void (*fn)(const struct ust_lh_hit_u *h, const void *rec, size_t len, void *ctx),
		    void *ctx)
{
	int ret;

	b->fn = fn;
	b->fn_ctx = ctx;
	ret = ring_buffer__consume(b->rb);
	b->fn = NULL;
	return ret;
}

int ust_lh_bpf_stats(struct ust_lh_bpf *b, struct ust_lh_bpf_stats *st)
{
	int ncpu = libbpf_num_possible_cpus(), ret, i;
	struct ust_lh_counters *v;
	__u32 key = 0;

	memset(st, 0, sizeof(*st));
	if (ncpu <= 0)
		return -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	ret = bpf_map__lookup_elem(b->skel->maps.ust_lh_stats, &key, sizeof(key), v,
				   (size_t)ncpu * sizeof(*v), 0);
	for (i = 0; !ret && i < ncpu; i++) {
		st->runs += v[i].runs;
		st->kept += v[i].kept;
		st->hit_drops += v[i].hit_drops;
		st->bad_prog += v[i].bad_prog;
		st->read_fail += v[i].read_fail;
	}
	free(v);
	return ret;
}

void ust_lh_bpf_close(struct ust_lh_bpf *b)
{
	int i;

	if (!b)
		return;
	for (i = b->nr_links; i > 0; i--)
		bpf_link__destroy(b->links[i - 1]);
	ring_buffer__free(b->rb);
	ust_lh_track_skel__destroy(b->track);
	ust_lh_skel__destroy(b->skel);
	free(b);
}

/* Every program of @obj loaded with its verification measured, then unloaded. */
static int verify_obj(struct bpf_object *obj, int (*load)(void *skel), void *skel, const char *what,
		      struct ust_bpfload_report *rep, char *err, size_t errsz)
{
	struct ust_bpfload l;
	int ret = ust_bpfload_begin(&l, obj, true);

	if (!ret)
		ret = load(skel);
	return ust_bpfload_end(&l, ret, what, rep, err, errsz);
}

static int load_lh(void *skel)
{
	return ust_lh_skel__load(skel);
}

static int load_track(void *skel)
{
	return ust_lh_track_skel__load(skel);
}

int ust_lh_bpf_verify(bool track, struct ust_lh_bpf_report *r, char *err, size_t errsz)
{
	struct ust_lh_skel *skel = ust_lh_skel__open();
	struct ust_lh_track_skel *t;
	struct bpf_program *p;
	const char *names[512];
	char buf[512][64];
	const struct btf *btf;
	int ret, n, i;

	memset(r, 0, sizeof(*r));
	if (!skel) {
		snprintf(err, errsz, "opening the lock_held() BPF object: %s", strerror(errno));
		return -1;
	}
	/* Everything the filter may load; stacks with it: a tail call costs as much. */
	skel->rodata->ust_lh_stacks = true;
	skel->rodata->ust_lh_mmap_track = true;
	skel->rodata->ust_lh_mmap_argoff = mmap_tp_argoff();
	skel->rodata->ust_lh_tracking = skel->rodata->ust_lh_spin_tracking = true;
	skel->rodata->ust_preempt_off = ust_bpfu_preempt_off(NULL);
	ret = verify_obj(skel->obj, load_lh, skel, "the lock_held() filter", &r->filter, err, errsz);
	ust_lh_skel__destroy(skel);
	if (ret)
		return -1;
	if (!track)
		return 0;
	/* The held-lock trackers of every family this kernel has. */
	btf = ust_kbtf();
	if (!btf) {
		snprintf(err, errsz, "held-lock tracking: no vmlinux BTF");
		return -1;
	}
	n = ust_lh_track_progs(UST_LH_FAM__ALL, btf_has_func, (void *)btf, names, buf, 512);
	t = ust_lh_track_skel__open();
	if (n < 0 || !t) {
		snprintf(err, errsz, "held-lock tracking: cannot open its BPF object");
		ust_lh_track_skel__destroy(t);
		return -1;
	}
	bpf_object__for_each_program(p, t->obj)
		bpf_program__set_autoload(p, false);
	for (i = 0; i < n; i++) {
		p = bpf_object__find_program_by_name(t->obj, names[i]);
		if (p)
			bpf_program__set_autoload(p, true);
	}
	t->rodata->ust_lh_track_slab = true;
	r->tracked = true;
	ret = verify_obj(t->obj, load_track, t, "held-lock tracking (fentry/fexit)", &r->track, err,
			 errsz);
	ust_lh_track_skel__destroy(t);
	return ret ? -1 : 0;
}

#else /* !UST_HAVE_BPF */

int ust_lh_bpf_set_af(struct ust_lh_bpf *b, const struct ust_af *af, char *err, size_t errsz)
{
	(void)b, (void)af;
	snprintf(err, errsz, "ustitch was built without BPF support (libbpf, clang, bpftool)");
	return -EOPNOTSUPP;
}

struct ust_lh_bpf {
	int unused;
};

struct ust_lh_bpf *ust_lh_bpf_open(const struct ust_lh_bpf_opts *o, char *err, size_t errsz)
{
	(void)o;
	snprintf(err, errsz, "ustitch was built without BPF support (libbpf, clang, bpftool)");
	errno = EOPNOTSUPP;
	return NULL;
}

int ust_lh_bpf_calibrate(struct ust_lh_bpf *b, char *err, size_t errsz)
{
	(void)b, (void)err, (void)errsz;
	return -EOPNOTSUPP;
}

int ust_lh_bpf_rcu_bias(const struct ust_lh_bpf *b)
{
	(void)b;
	return 1;
}

int ust_lh_bpf_follow(struct ust_lh_bpf *b, pid_t tgid)
{
	(void)b, (void)tgid;
	return -EOPNOTSUPP;
}

int ust_lh_bpf_set_prog(struct ust_lh_bpf *b, int slot, const struct ust_lh_compiled *c,
			bool stacks)
{
	(void)b, (void)slot, (void)c, (void)stacks;
	return -EOPNOTSUPP;
}

int ust_lh_bpf_attach(struct ust_lh_bpf *b, int slot, int perf_fd)
{
	(void)b, (void)slot, (void)perf_fd;
	return -EOPNOTSUPP;
}

int ust_lh_bpf_attach_late(struct ust_lh_bpf *b)
{
	(void)b;
	return -EOPNOTSUPP;
}

int ust_lh_bpf_set_raw(struct ust_lh_bpf *b, int slot, int nr, bool exit, uint16_t type,
		       unsigned int nargs)
{
	(void)b, (void)slot, (void)nr, (void)exit, (void)type, (void)nargs;
	return -EOPNOTSUPP;
}

int ust_lh_bpf_attach_raw(struct ust_lh_bpf *b)
{
	(void)b;
	return -EOPNOTSUPP;
}

int ust_lh_bpf_hits_fd(const struct ust_lh_bpf *b)
{
	(void)b;
	return -1;
}

int ust_lh_bpf_hits(struct ust_lh_bpf *b,
		    void (*fn)(const struct ust_lh_hit_u *h, const void *rec, size_t len, void *ctx),
		    void *ctx)
{
	(void)b, (void)fn, (void)ctx;
	return -EOPNOTSUPP;
}

int ust_lh_bpf_stats(struct ust_lh_bpf *b, struct ust_lh_bpf_stats *st)
{
	(void)b;
	memset(st, 0, sizeof(*st));
	return -EOPNOTSUPP;
}

void ust_lh_bpf_close(struct ust_lh_bpf *b)
{
	(void)b;
}

int ust_lh_bpf_verify(bool track, struct ust_lh_bpf_report *r, char *err, size_t errsz)
{
	(void)track;
	memset(r, 0, sizeof(*r));
	snprintf(err, errsz, "ustitch was built without BPF support (libbpf, clang, bpftool)");
	return -1;
}

#endif /* UST_HAVE_BPF */
