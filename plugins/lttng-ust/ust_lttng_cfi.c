// SPDX-License-Identifier: LGPL-2.1
/*
 * Unwind tables for the in-process CFI walk: which loaded object holds a
 * pc, where that pc is in its file, and the object's rows (lib/cfi, the
 * rows of bpf/ust_cfi_abi.h the BPF unwinder walks with).
 *
 * Everything that allocates, takes a lock or reads files runs on one
 * builder thread of ours (signals blocked, started by the constructor):
 *   - the registry: dl_iterate_phdr() -> one entry per executable PT_LOAD
 *     [lo, hi) with the delta that turns a pc into a file offset, sorted;
 *     rescanned only when the loader's dlpi_adds/dlpi_subs changed;
 *   - the tables, built on first use with ust_cfi_build_path() (the main
 *     program through /proc/self/exe) or ust_cfi_build_mem() (the vDSO,
 *     which has no file).
 * A table belongs to a FILE (dev, inode), not to a load: file offsets do
 * not depend on the load address, so a library dlclose()d and dlopen()ed
 * again, anywhere, uses the table it had.  Tables are never freed, which
 * is what makes a lookup racing a dlclose safe: a walker holds at worst a
 * stale entry pointing at a table that still exists.
 *
 * The walker (the tracepoint's hot path, maybe a signal handler) only
 * reads: a seqlock-checked copy of one registry entry, then the file's
 * published table pointer.  What it lacks it asks for (an atomic flag and
 * a futex wake, both async-signal-safe) and waits for on a futex, with a
 * deadline per file counted from the first request: a build that cannot
 * finish (its malloc() waits for a lock the interrupted code holds) costs
 * the waiting events at most UST_LTTNG_CFI_WAIT_NS in all, then they go on
 * by frame pointers and say so (UST_ABI_STACK_F_NO_TABLE).
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ust_lttng.h"
#include "ustitch/cfi.h"

#define MAX_FILES	512
#define MAX_ENTRIES	1024
#define UNKNOWN_SLOTS	64
#define PATH_LEN	512

enum fstate { F_IDLE, F_WANTED, F_READY, F_NONE };

struct file {
	/* builder only */
	dev_t dev;
	ino_t ino;
	bool vdso;
	char path[PATH_LEN];
	double build_ms;
	/* shared */
	atomic_int state;			/* enum fstate */
	_Atomic long long want_ns;		/* first request */
	const struct ust_cfi_table *_Atomic tab;
};

struct entry {
	uintptr_t lo, hi;	/* an executable PT_LOAD, absolute */
	uint64_t delta;		/* file offset = pc + delta */
	uint32_t file;
};

struct reg {
	atomic_uint ver;	/* odd while written */
	unsigned int nr;
	struct entry e[MAX_ENTRIES];
};

static struct file files[MAX_FILES];
static unsigned int nr_files;		/* builder only */
static struct reg regs[2];
static atomic_uint cur_reg;
static atomic_uint reg_gen;		/* moves with every new registry */
static unsigned long long dl_gen = ~0ULL;	/* builder only */

/* Requests and completions (futex words). */
static atomic_uint req_seq, done_seq, refresh_seq;
static atomic_int want_refresh;
static _Atomic long long refresh_want_ns;
static atomic_int builder_pid;		/* the process the builder runs in */
static _Atomic uintptr_t unknown_pages[UNKNOWN_SLOTS];
static bool cfi_off;
static pthread_mutex_t builder_mu = PTHREAD_MUTEX_INITIALIZER;	/* starting it, builder side only */

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void futex_wake(atomic_uint *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void futex_wait(atomic_uint *w, unsigned int val, long long ns)
{
	struct timespec ts = { ns / 1000000000LL, ns % 1000000000LL };

	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, ns >= 0 ? &ts : NULL, NULL, 0);
}

/* --- builder side ------------------------------------------------------- */

static uint32_t file_slot(dev_t dev, ino_t ino, bool vdso, const char *path)
{
	unsigned int i;

	for (i = 0; i < nr_files; i++)
		if (files[i].vdso == vdso && (vdso || (files[i].dev == dev && files[i].ino == ino)))
			return i;
	if (nr_files >= MAX_FILES)
		return UINT32_MAX;
	files[i].dev = dev;
	files[i].ino = ino;
	files[i].vdso = vdso;
	snprintf(files[i].path, sizeof(files[i].path), "%s", path);
	nr_files++;
	return i;
}

struct scan {
	struct reg *r;
	uintptr_t vdso;
	unsigned long long gen;
	bool first, same;
};

static int scan_one(struct dl_phdr_info *info, size_t size, void *data)
{
	struct scan *s = data;
	const char *path = info->dlpi_name;
	struct stat st = { 0 };
	bool vdso;
	uint32_t f;
	int i;

	(void)size;
	if (s->first) {
		s->first = false;
		s->gen = info->dlpi_adds ^ (info->dlpi_subs << 32);
		if (s->gen == dl_gen) {
			s->same = true;
			return 1;
		}
	}
	vdso = s->vdso && (uintptr_t)info->dlpi_phdr - s->vdso < 4096;
	if (!vdso) {
		if (!path || !*path)
			path = "/proc/self/exe";	/* the program */
		if (stat(path, &st))
			return 0;
	}
	f = file_slot(st.st_dev, st.st_ino, vdso, path);
	if (f == UINT32_MAX)
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		struct entry *e;

		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X) || s->r->nr >= MAX_ENTRIES)
			continue;
		e = &s->r->e[s->r->nr++];
		e->lo = info->dlpi_addr + p->p_vaddr;
		e->hi = e->lo + p->p_memsz;
		e->delta = (uint64_t)p->p_offset - p->p_vaddr - info->dlpi_addr;
		e->file = f;
	}
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void refresh(void)
{
	unsigned int next = atomic_load(&cur_reg) ^ 1;
	struct scan s = { &regs[next], getauxval(AT_SYSINFO_EHDR), 0, true, false };
	unsigned int i;

	atomic_fetch_add(&regs[next].ver, 1);	/* odd: being written */
	regs[next].nr = 0;
	dl_iterate_phdr(scan_one, &s);
	if (s.same) {
		atomic_fetch_add(&regs[next].ver, 1);
		return;
	}
	qsort(regs[next].e, regs[next].nr, sizeof(regs[next].e[0]), cmp_entry);
	atomic_fetch_add(&regs[next].ver, 1);
	atomic_store(&cur_reg, next);
	atomic_fetch_add(&reg_gen, 1);
	dl_gen = s.gen;
	for (i = 0; i < UNKNOWN_SLOTS; i++)
		atomic_store_explicit(&unknown_pages[i], 0, memory_order_relaxed);
}

/* The vDSO image: its ELF header through the end of its section headers. */
static size_t vdso_size(uintptr_t base)
{
	const ElfW(Ehdr) *eh = (const void *)base;
	const ElfW(Phdr) *ph = (const void *)(base + eh->e_phoff);
	size_t size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	int i;

	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > size)
			size = ph[i].p_offset + ph[i].p_filesz;
	return size;
}

static void build(struct file *f)
{
	struct ust_cfi_table *t = NULL;
	struct ust_cfi_opts opts = { .no_debug_frame = false };
	long long t0 = mono_ns();
	uintptr_t vdso = getauxval(AT_SYSINFO_EHDR);
	int ret;

	if (f->vdso)
		ret = vdso ? ust_cfi_build_mem((const void *)vdso, vdso_size(vdso), &opts, &t,
					       NULL, 0) : -ENOENT;
	else
		ret = ust_cfi_build_path(f->path, &opts, &t, NULL, 0);
	f->build_ms = (double)(mono_ns() - t0) / 1e6;
	if (ret || !t || !t->nr_rows) {
		ust_cfi_table_free(t);
		atomic_store(&f->state, F_NONE);	/* frame pointers there */
		return;
	}
	atomic_store_explicit(&f->tab, t, memory_order_release);
	atomic_store(&f->state, F_READY);
}

static void *builder(void *arg)
{
	unsigned int seen = 0, i;

	(void)arg;
	for (;;) {
		unsigned int req = atomic_load(&req_seq);

		if (req == seen)
			futex_wait(&req_seq, req, -1);
		seen = atomic_load(&req_seq);
		if (atomic_exchange(&want_refresh, 0)) {
			refresh();
			atomic_fetch_add(&refresh_seq, 1);
			futex_wake(&refresh_seq);
		}
		for (i = 0; i < MAX_FILES; i++) {
			if (atomic_load(&files[i].state) != F_WANTED)
				continue;
			build(&files[i]);
			atomic_fetch_add(&done_seq, 1);
			futex_wake(&done_seq);
		}
	}
	return NULL;
}

static void request(void)
{
	atomic_fetch_add(&req_seq, 1);
	futex_wake(&req_seq);
}

/* Ask for the table of the object holding @addr (our own, lttng-ust's). */
static void prefetch(uintptr_t addr)
{
	struct reg *r = &regs[atomic_load(&cur_reg)];
	unsigned int i;

	for (i = 0; i < r->nr; i++) {
		if (addr >= r->e[i].lo && addr < r->e[i].hi) {
			int idle = F_IDLE;
			struct file *f = &files[r->e[i].file];

			if (atomic_compare_exchange_strong(&f->state, &idle, F_WANTED))
				atomic_store(&f->want_ns, mono_ns());
			return;
		}
	}
}

void ust_lttng_cfi_start(void)
{
	typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	create_fn create = ust_lttng_real_pthread_create();
	sigset_t all, old;
	pthread_t th;

	if (cfi_off || !create || atomic_load(&builder_pid) == ust_lttng_proc.pid)
		return;
	pthread_mutex_lock(&builder_mu);
	if (atomic_load(&builder_pid) != ust_lttng_proc.pid) {
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);	/* inherited: no handler runs there */
		if (!create(&th, NULL, builder, NULL)) {
			pthread_detach(th);
			pthread_setname_np(th, "ustitch-cfi");
			atomic_store(&builder_pid, ust_lttng_proc.pid);
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	pthread_mutex_unlock(&builder_mu);
}

static void print_stats(void)
{
	unsigned int i;

	for (i = 0; i < nr_files; i++) {
		const struct ust_cfi_table *t = atomic_load(&files[i].tab);
		int st = atomic_load(&files[i].state);

		if (st == F_READY || st == F_NONE)
			fprintf(stderr, "ustitch-lttng: table %s: %u rows, built in %.2f ms\n",
				files[i].vdso ? "[vdso]" : files[i].path, t ? t->nr_rows : 0,
				files[i].build_ms);
	}
}

void ust_lttng_cfi_init(uintptr_t also)
{
	const char *u = getenv("USTITCH_LTTNG_UNWIND");
	const char *stats = getenv("USTITCH_LTTNG_STATS");

	cfi_off = u && !strcmp(u, "fp");
	if (cfi_off)
		return;
	refresh();	/* the objects loaded so far, before the first event */
	/* Every walk starts in our frames and lttng-ust's. */
	prefetch((uintptr_t)ust_lttng_cfi_init);
	prefetch(also);
	if (stats && *stats == '1')
		atexit(print_stats);
	ust_lttng_cfi_start();
	request();
}

unsigned int ust_lttng_cfi_gen(void)
{
	return atomic_load(&reg_gen);
}

bool ust_lttng_cfi_enabled(void)
{
	return !cfi_off;
}

/* --- walker side -------------------------------------------------------- */

static bool reg_find(uintptr_t pc, struct ust_lttng_cfi_obj *o)
{
	int tries;

	for (tries = 0; tries < 4; tries++) {
		const struct reg *r = &regs[atomic_load_explicit(&cur_reg, memory_order_acquire)];
		unsigned int ver = atomic_load_explicit(&r->ver, memory_order_acquire);
		unsigned int lo = 0, hi, found = UINT_MAX;

		if (ver & 1)
			continue;
		hi = __atomic_load_n(&r->nr, __ATOMIC_RELAXED);
		if (hi > MAX_ENTRIES)
			continue;
		while (lo < hi) {
			unsigned int mid = lo + (hi - lo) / 2;
			uintptr_t elo = __atomic_load_n(&r->e[mid].lo, __ATOMIC_RELAXED);

			if (pc < elo) {
				hi = mid;
			} else if (pc >= __atomic_load_n(&r->e[mid].hi, __ATOMIC_RELAXED)) {
				lo = mid + 1;
			} else {
				found = mid;
				break;
			}
		}
		if (found != UINT_MAX) {
			o->lo = __atomic_load_n(&r->e[found].lo, __ATOMIC_RELAXED);
			o->hi = __atomic_load_n(&r->e[found].hi, __ATOMIC_RELAXED);
			o->delta = __atomic_load_n(&r->e[found].delta, __ATOMIC_RELAXED);
			o->file = __atomic_load_n(&r->e[found].file, __ATOMIC_RELAXED);
		}
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&r->ver, memory_order_relaxed) != ver)
			continue;
		return found != UINT_MAX && o->file < MAX_FILES;
	}
	return false;
}

static bool builder_alive(void)
{
	return atomic_load_explicit(&builder_pid, memory_order_relaxed) == ust_lttng_proc.pid;
}

/* Waits (bounded by @deadline) until *@w moves past @val. */
static void wait_past(atomic_uint *w, unsigned int val, long long deadline)
{
	long long now;

	while (atomic_load(w) == val && (now = mono_ns()) < deadline)
		futex_wait(w, val, deadline - now);
}

static void fill_table(struct ust_lttng_cfi_obj *o)
{
	struct file *f = &files[o->file];
	int st = atomic_load_explicit(&f->state, memory_order_acquire);
	long long want;

	o->tab = NULL;
	o->status = UST_LTTNG_CFI_NONE;
	if (st == F_IDLE) {
		int idle = F_IDLE;

		if (!builder_alive()) {
			o->status = UST_LTTNG_CFI_PENDING;
			return;
		}
		if (atomic_compare_exchange_strong(&f->state, &idle, F_WANTED))
			atomic_store(&f->want_ns, mono_ns());
		request();
		st = F_WANTED;
	}
	if (st == F_WANTED) {
		want = atomic_load(&f->want_ns);
		while ((st = atomic_load(&f->state)) == F_WANTED && builder_alive()) {
			unsigned int d = atomic_load(&done_seq);
			long long deadline = (want ? want : mono_ns()) + UST_LTTNG_CFI_WAIT_NS;

			if ((st = atomic_load(&f->state)) != F_WANTED || mono_ns() >= deadline)
				break;
			wait_past(&done_seq, d, deadline);
		}
	}
	if (st == F_READY) {
		const struct ust_cfi_table *t = atomic_load_explicit(&f->tab, memory_order_acquire);

		if (t) {
			o->tab = t;
			o->status = UST_LTTNG_CFI_READY;
		}
	} else if (st == F_WANTED) {
		o->status = UST_LTTNG_CFI_PENDING;
	}
}

static unsigned int page_slot(uintptr_t page)
{
	return (unsigned int)((page * 0x9e3779b97f4a7c15ULL) >> 58) % UNKNOWN_SLOTS;
}

bool ust_lttng_cfi_find(uintptr_t pc, struct ust_lttng_cfi_obj *o)
{
	uintptr_t page = pc >> 12;
	unsigned int slot = page_slot(page), seen;
	long long want;

	if (cfi_off)
		return false;
	if (reg_find(pc, o)) {
		fill_table(o);
		return true;
	}
	/* In no object we know: a dlopen() since the last scan, or JIT code. */
	if (atomic_load_explicit(&unknown_pages[slot], memory_order_relaxed) == page + 1 ||
	    !builder_alive())
		return false;
	seen = atomic_load(&refresh_seq);
	want = 0;
	if (!atomic_exchange(&want_refresh, 1) ||
	    !(want = atomic_load(&refresh_want_ns))) {
		want = mono_ns();
		atomic_store(&refresh_want_ns, want);
	}
	request();
	wait_past(&refresh_seq, seen, want + UST_LTTNG_CFI_WAIT_NS);
	if (atomic_load(&refresh_seq) != seen && reg_find(pc, o)) {
		fill_table(o);
		return true;
	}
	if (atomic_load(&refresh_seq) != seen)
		atomic_store_explicit(&unknown_pages[slot], page + 1, memory_order_relaxed);
	return false;
}
