// SPDX-License-Identifier: LGPL-2.1
/*
 * ust-mktrace --bench: a large, realistic trace for benchmarks.
 *
 * Eight tasks on two CPUs issue requesting events (sched_switch or
 * sys_enter_getppid), each followed by its user_unwind_cookie.  Several
 * events of one kernel entry share a cookie; when the entry ends, the
 * task's user_unwind_stack follows, the next time the task is seen, and a
 * quarter of the time on the other CPU (the task migrated on its way back
 * to user space).  Stacks of 8-24 frames point into real functions of libc
 * and of a binary, with their real inode and device, and a user_mapping
 * record for each of the two files opens the trace.
 *
 * Records are built once from the formats and only patched per emission
 * (pid, cookie), so a million events take about a second.  The output is
 * deterministic: fixed seed, fixed timestamps.
 */
#include <errno.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <traceevent/event-parse.h>

#include "ustitch/abi.h"
#include "ustitch/resolve.h"
#include "mkt.h"

#define NR_PIDS		8
#define NR_CPUS		2
#define FIRST_PID	2001
#define POOL		64	/* distinct stacks */
#define MIN_FRAMES	8
#define MAX_FRAMES	24
#define GETPPID_NR	110	/* x86-64 */

struct obj {
	char path[PATH_MAX];
	struct ust_mkt_func *funcs;
	size_t nr;
	uint64_t ino;
	uint32_t kdev;
};

struct task {
	int pid;
	int cpu;
	uint64_t cookie;
	uint64_t left;		/* events still to come in the open entry */
	bool stack_due;		/* the entry ended: its stack is next */
	uint64_t stack;		/* its stack: a pool record, maybe varied (--distinct) */
};

struct bench {
	struct ust_mkt m;
	struct ust_mkt_bench_opts o;
	int sbuf;		/* buffer of cookies, stacks, mappings */
	int st_loc_off;		/* the stack array's __data_loc */
	struct obj obj[2];	/* libc, binary */
	uint64_t rng;
	struct ust_mkt_rec sw[NR_PIDS], sc[NR_PIDS], ck, st[POOL];
	int ck_pid_off, ck_off, st_pid_off, st_cookie_off;
	uint64_t ctr[NR_CPUS];
};

static uint64_t rnd(struct bench *b)
{
	/* xorshift64*: fast, and the same sequence everywhere */
	b->rng ^= b->rng >> 12;
	b->rng ^= b->rng << 25;
	b->rng ^= b->rng >> 27;
	return b->rng * 0x2545F4914F6CDD1DULL;
}

static int find_libc(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *base = strrchr(info->dlpi_name, '/');

	(void)size;
	base = base ? base + 1 : info->dlpi_name;
	if (!strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5)) {
		snprintf(data, PATH_MAX, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

static int load_obj(struct bench *b, struct obj *o, const char *path)
{
	char err[256], real[PATH_MAX];
	struct stat st;

	if (!realpath(path, real) || stat(real, &st) < 0)
		return ust_mkt_set_error(&b->m, "%s: %s", path, strerror(errno));
	snprintf(o->path, sizeof(o->path), "%s", real);
	o->ino = st.st_ino;
	o->kdev = ust_res_dev_to_kdev(st.st_dev);
	if (ust_mkt_elf_functions(real, &o->funcs, &o->nr, err, sizeof(err)) < 0)
		return ust_mkt_set_error(&b->m, "%s", err);
	return 0;
}

static int field_off(struct bench *b, struct tep_event *ev, const char *name)
{
	struct tep_format_field *f = tep_find_any_field(ev, name);

	if (!f)
		return ust_mkt_set_error(&b->m, "%s/%s has no field %s", ev->system, ev->name,
					 name);
	return f->offset;
}

static void put_at(struct ust_mkt_rec *r, int off, const void *v, size_t n)
{
	memcpy(r->buf + off, v, n);
}

static int build_task_records(struct bench *b, int i)
{
	struct tep_event *sw = ust_mkt_event(&b->m, "sched", "sched_switch");
	struct tep_event *sc = ust_mkt_event(&b->m, "syscalls", "sys_enter_getppid");
	char comm[16];
	int pid = FIRST_PID + i, next = FIRST_PID + (i + 1) % NR_PIDS;

	if (!sw || !sc)
		return -1;
	if (ust_mkt_rec_init(&b->sw[i], sw, pid) < 0 || ust_mkt_rec_init(&b->sc[i], sc, pid) < 0)
		return ust_mkt_set_error(&b->m, "out of memory");
	memset(comm, 0, sizeof(comm));
	snprintf(comm, sizeof(comm), "bench-%d", i);
	ust_mkt_rec_put_bytes(&b->sw[i], tep_find_field(sw, "prev_comm"), comm, sizeof(comm));
	ust_mkt_rec_put(&b->sw[i], tep_find_field(sw, "prev_pid"), pid);
	ust_mkt_rec_put(&b->sw[i], tep_find_field(sw, "prev_prio"), 120);
	ust_mkt_rec_put(&b->sw[i], tep_find_field(sw, "prev_state"), 1);
	memset(comm, 0, sizeof(comm));
	snprintf(comm, sizeof(comm), "bench-%d", (i + 1) % NR_PIDS);
	ust_mkt_rec_put_bytes(&b->sw[i], tep_find_field(sw, "next_comm"), comm, sizeof(comm));
	ust_mkt_rec_put(&b->sw[i], tep_find_field(sw, "next_pid"), next);
	ust_mkt_rec_put(&b->sw[i], tep_find_field(sw, "next_prio"), 120);
	ust_mkt_rec_put(&b->sc[i], tep_find_field(sc, "__syscall_nr"), GETPPID_NR);
	snprintf(comm, sizeof(comm), "bench-%d", i);
	return ust_mkt_add_cmdline(&b->m, pid, comm);
}

/* One stack: innermost frames in libc, the rest in the binary. */
static int build_stack(struct bench *b, struct tep_event *ev, int idx)
{
	struct tep_format_field *fs = tep_find_field(ev, "stack");
	struct tep_format_field *fi = tep_find_field(ev, "inodes");
	struct tep_format_field *fd = tep_find_field(ev, "dev");
	uint64_t addr[MAX_FRAMES], ino[MAX_FRAMES];
	uint32_t dev[MAX_FRAMES];
	int n = MIN_FRAMES + (int)(rnd(b) % (MAX_FRAMES - MIN_FRAMES + 1));
	int in_libc = 1 + (int)(rnd(b) % 3), k;

	for (k = 0; k < n; k++) {
		struct obj *o = &b->obj[k < in_libc ? 0 : 1];
		struct ust_mkt_func *f = &o->funcs[rnd(b) % o->nr];

		/* A return address lies inside its function, past its first byte. */
		addr[k] = f->file_off + (f->size > 1 ? 1 + rnd(b) % (f->size - 1) : 0);
		ino[k] = o->ino;
		dev[k] = o->kdev;
	}
	if (ust_mkt_rec_init(&b->st[idx], ev, 0) < 0 ||
	    ust_mkt_rec_append(&b->st[idx], fs, addr, n * sizeof(addr[0])) < 0 ||
	    ust_mkt_rec_append(&b->st[idx], fi, ino, n * sizeof(ino[0])) < 0 ||
	    ust_mkt_rec_append(&b->st[idx], fd, dev, n * sizeof(dev[0])) < 0)
		return ust_mkt_set_error(&b->m, "out of memory");
	return 0;
}

static int build_records(struct bench *b)
{
	struct tep_event *ck, *st;
	int i;

	for (i = 0; i < NR_PIDS; i++)
		if (build_task_records(b, i) < 0)
			return -1;
	ck = ust_mkt_event(&b->m, UST_ABI_SYSTEM_FTRACE, UST_ABI_EV_UNWIND_COOKIE);
	st = ust_mkt_event(&b->m, UST_ABI_SYSTEM_FTRACE, UST_ABI_EV_UNWIND_STACK);
	if (!ck || !st || ust_mkt_event(&b->m, UST_ABI_SYSTEM_USTITCH,
					UST_ABI_EV_USER_MAPPING) == NULL)
		return -1;
	if ((b->ck_pid_off = field_off(b, ck, "common_pid")) < 0 ||
	    (b->ck_off = field_off(b, ck, "cookie")) < 0 ||
	    (b->st_pid_off = field_off(b, st, "common_pid")) < 0 ||
	    (b->st_cookie_off = field_off(b, st, "cookie")) < 0)
		return -1;
	if (b->ck_off != UST_ABI_COOKIE_OFF || b->st_cookie_off != UST_ABI_COOKIE_OFF ||
	    ust_mkt_fixed_size(st) != UST_ABI_STACK_HDR_SIZE)
		return ust_mkt_set_error(&b->m, "kernel-bits formats disagree with abi.h");
	b->st_loc_off = tep_find_field(st, "stack")->offset;
	if (ust_mkt_rec_init(&b->ck, ck, 0) < 0)
		return ust_mkt_set_error(&b->m, "out of memory");
	for (i = 0; i < POOL; i++)
		if (build_stack(b, st, i) < 0)
			return -1;
	return 0;
}

static int write_mappings(struct bench *b, uint64_t ts)
{
	struct tep_event *ev = ust_mkt_event(&b->m, UST_ABI_SYSTEM_USTITCH,
					     UST_ABI_EV_USER_MAPPING);
	uint8_t bid[UST_ABI_BUILD_ID_MAX];
	struct ust_mkt_rec r;
	size_t blen;
	int i, ret;

	for (i = 0; i < 2; i++) {
		blen = ust_mkt_elf_build_id(b->obj[i].path, bid, sizeof(bid));
		if (ust_mkt_rec_init(&r, ev, FIRST_PID) < 0)
			return ust_mkt_set_error(&b->m, "out of memory");
		ust_mkt_rec_put(&r, tep_find_field(ev, "ino"), b->obj[i].ino);
		ust_mkt_rec_put(&r, tep_find_field(ev, "dev"), b->obj[i].kdev);
		ust_mkt_rec_put(&r, tep_find_field(ev, "build_id_size"), blen);
		ust_mkt_rec_put_bytes(&r, tep_find_field(ev, "build_id"), bid, blen);
		ret = ust_mkt_rec_append(&r, tep_find_field(ev, "path"), b->obj[i].path,
					 strlen(b->obj[i].path) + 1);
		if (!ret)
			ret = ust_mkt_write(&b->m, b->sbuf, 0, ts, r.buf, r.len);
		ust_mkt_rec_fini(&r);
		if (ret < 0)
			return -1;
	}
	return 0;
}

static int emit_stack(struct bench *b, struct task *t, uint64_t ts)
{
	struct ust_mkt_rec *r = &b->st[t->stack % POOL];
	uint64_t k = t->stack / POOL;

	/* Migrations happen on the way back to user space. */
	if (rnd(b) % 4 == 0)
		t->cpu ^= 1;
	if (b->o.distinct > POOL) {
		/* The two outermost frames tell the variants of a pool stack apart. */
		uint32_t loc, n;
		struct obj *o = &b->obj[1];
		uint64_t a1 = o->funcs[k % o->nr].file_off + 1;
		uint64_t a2 = o->funcs[(k / o->nr) % o->nr].file_off + 1;

		memcpy(&loc, r->buf + b->st_loc_off, 4);
		n = (loc >> 16) / 8;
		put_at(r, (int)(loc & 0xffff) + (int)(n - 1) * 8, &a1, 8);
		put_at(r, (int)(loc & 0xffff) + (int)(n - 2) * 8, &a2, 8);
	}
	put_at(r, b->st_pid_off, &t->pid, 4);
	put_at(r, b->st_cookie_off, &t->cookie, 8);
	t->stack_due = false;
	return ust_mkt_write(&b->m, b->sbuf, t->cpu, ts, r->buf, r->len);
}

static int generate(struct bench *b, uint64_t nr_events, uint64_t nr_stacks)
{
	uint64_t base = nr_stacks ? nr_events / nr_stacks : 0;
	uint64_t extra = nr_stacks ? nr_events % nr_stacks : 0;
	uint64_t entries = 0, ts = 1000000000ULL, e, ord_done = 0;
	uint64_t distinct = b->o.distinct > POOL ? b->o.distinct : POOL;
	struct task tasks[NR_PIDS];
	struct ust_mkt_rec *r;
	struct task *t;
	int i;

	for (i = 0; i < NR_PIDS; i++) {
		memset(&tasks[i], 0, sizeof(tasks[i]));
		tasks[i].pid = FIRST_PID + i;
		tasks[i].cpu = i % NR_CPUS;
	}
	if (write_mappings(b, ts) < 0)
		return -1;
	for (e = 0; e < nr_events; e++) {
		t = &tasks[rnd(b) % NR_PIDS];
		/* With every entry handed out, only tasks inside one go on. */
		if (!t->left && entries == nr_stacks)
			for (i = 0, t = tasks; !t->left; t = &tasks[++i])
				;
		ts += 1 + rnd(b) % 2000;
		if (t->stack_due) {
			if (emit_stack(b, t, ts) < 0)
				return -1;
			ts += 1 + rnd(b) % 100;
		}
		if (!t->left) {
			t->left = base + (entries < extra);
			t->cookie = ust_abi_cookie(t->cpu, b->ctr[t->cpu]++);
			/* As many variants as entries: each its own, "N distinct" exactly. */
			t->stack = b->o.distinct > POOL && distinct >= nr_stacks ? entries :
				   rnd(b) % distinct;
			entries++;
		}
		/* Ordinary events (no cookie) of any task, before this one. */
		while (nr_events && ord_done < b->o.ordinary * (e + 1) / nr_events) {
			int o = (int)(rnd(b) % NR_PIDS);

			ts += 1 + rnd(b) % 50;
			if (ust_mkt_write(&b->m, 0, t->cpu, ts, b->sc[o].buf, b->sc[o].len) < 0)
				return -1;
			ord_done++;
		}
		r = rnd(b) & 1 ? &b->sw[t - tasks] : &b->sc[t - tasks];
		if (ust_mkt_write(&b->m, 0, t->cpu, ts, r->buf, r->len) < 0)
			return -1;
		put_at(&b->ck, b->ck_pid_off, &t->pid, 4);
		put_at(&b->ck, b->ck_off, &t->cookie, 8);
		if (ust_mkt_write(&b->m, b->sbuf, t->cpu, ts, b->ck.buf, b->ck.len) < 0)
			return -1;
		if (!--t->left)
			t->stack_due = true;
	}
	for (i = 0; i < NR_PIDS; i++) {
		if (tasks[i].stack_due && emit_stack(b, &tasks[i], ts += 1000) < 0)
			return -1;
	}
	return 0;
}

static void free_bench(struct bench *b)
{
	int i;

	for (i = 0; i < NR_PIDS; i++) {
		ust_mkt_rec_fini(&b->sw[i]);
		ust_mkt_rec_fini(&b->sc[i]);
	}
	ust_mkt_rec_fini(&b->ck);
	for (i = 0; i < POOL; i++)
		ust_mkt_rec_fini(&b->st[i]);
	for (i = 0; i < 2; i++)
		ust_mkt_free_functions(b->obj[i].funcs, b->obj[i].nr);
}

int ust_mkt_run_bench(uint64_t nr_events, uint64_t nr_stacks, const char *out_path,
		      const char *binary, const struct ust_mkt_bench_opts *opts)
{
	char libc[PATH_MAX] = "";
	struct bench *b;
	int code = 0;

	if (nr_stacks > nr_events || (nr_events && !nr_stacks)) {
		fprintf(stderr, "ust-mktrace: --bench: NSTACKS must be 1..NEVENTS\n");
		return 2;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		fprintf(stderr, "ust-mktrace: out of memory\n");
		return 1;
	}
	b->rng = 0x9e3779b97f4a7c15ULL;
	ust_mkt_init(&b->m, out_path);
	b->m.nr_cpus = NR_CPUS;
	if (opts)
		b->o = *opts;
	if (b->o.ustitch_buffer && (ust_mkt_add_buffer(&b->m, "ustitch") < 0 ||
				    (b->sbuf = ust_mkt_buffer(&b->m, "ustitch")) < 0)) {
		fprintf(stderr, "ust-mktrace: %s\n", b->m.err);
		free(b);
		return 1;
	}
	dl_iterate_phdr(find_libc, libc);
	if (!libc[0]) {
		ust_mkt_set_error(&b->m, "libc not found among the loaded objects");
		code = 1;
	} else if (load_obj(b, &b->obj[0], libc) < 0 ||
		   load_obj(b, &b->obj[1], binary ? binary : "/proc/self/exe") < 0) {
		code = 2;
	} else if (build_records(b) < 0 || generate(b, nr_events, nr_stacks) < 0) {
		code = b->m.io_failed ? 1 : 2;
	}
	if (code) {
		fprintf(stderr, "ust-mktrace: %s\n", b->m.err);
		ust_mkt_discard(&b->m);
	} else if (ust_mkt_finish(&b->m) < 0) {
		fprintf(stderr, "ust-mktrace: %s\n", b->m.err);
		code = 1;
	}
	free_bench(b);
	free(b);
	return code;
}
