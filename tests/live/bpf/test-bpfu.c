// SPDX-License-Identifier: LGPL-2.1
/*
 * Live test of ust_bpfu on this kernel: run ust-live-chain, give its
 * getppid() entries and exits cookies through BPF, and check the records
 * byte for byte against the kernel's layouts and the stacks against the
 * program's known call chains, in five modes: stacks on the way back to
 * user space (no_exit_stacks: by BPF task_work where the kernel allows it,
 * else each event its own stack taken at the event), with the kernel's
 * exact frames, without following child processes, the immediate stacks,
 * and stacks at the system call's exit (the default).
 *
 * usage: test-bpfu PATH-TO-ust-live-chain
 * Needs root; exits 77 (skipped) without it or without BPF support.
 * Touches no tracefs setting: BPF tracepoint links only.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ustitch/abi.h"
#include "ustitch/bpfu.h"

#define ROUNDS		20
#define CALLS		3
#define COOKIE_TYPE	16
#define STACK_TYPE	15

static int fails;

#define CHECK(cond, ...)							\
	do {									\
		if (!(cond)) {							\
			if (++fails <= 40) {					\
				fprintf(stderr, "FAIL %s:%d: %s: ", __func__,	\
					__LINE__, #cond);			\
				fprintf(stderr, __VA_ARGS__);			\
				fputc('\n', stderr);				\
			}							\
		}								\
	} while (0)

struct map_ent {
	uint64_t start, end, pgoff, ino;
	unsigned int maj, min;
	char path[PATH_MAX];
};

struct cookie_ev {
	uint64_t cookie, ts;
	unsigned int cpu;
	pid_t tid, tgid;
};

struct stack_ev {
	uint64_t cookie, ts;
	unsigned int flags, nr;
	pid_t tid, tgid;
	uint64_t off[UST_BPFU_MAX_STACK], ino[UST_BPFU_MAX_STACK];
	uint32_t dev[UST_BPFU_MAX_STACK];
};

struct run {
	struct cookie_ev *ck;
	size_t nr_ck, cap_ck;
	struct stack_ev *st;
	size_t nr_st, cap_st;
	struct map_ent maps[256];
	int nr_maps;
	pid_t child;
	pid_t forked;	/* the child's child process, once seen */
	bool task_work;	/* the unwinder schedules BPF task_work here */
};

static uint16_t get16(const unsigned char *b, size_t off)
{
	uint16_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static uint32_t get32(const unsigned char *b, size_t off)
{
	uint32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static uint64_t get64(const unsigned char *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* Everything is taken from the ftrace bytes, not from the rec fields. */
static int on_rec(const struct ust_bpfu_rec *r, void *ctx)
{
	struct run *run = ctx;
	const unsigned char *b = r->data;

	CHECK(b[2] == 0 && b[3] == 0, "common_flags %u preempt %u", b[2], b[3]);
	CHECK((pid_t)get32(b, 4) == r->tid, "common_pid %d tid %d", (int)get32(b, 4), r->tid);
	CHECK(get64(b, UST_ABI_COOKIE_OFF) == r->cookie, "cookie bytes");
	if (r->tgid != run->child && !run->forked)
		run->forked = r->tgid;
	CHECK(r->tgid == run->child || r->tgid == run->forked, "record of tgid %d, child %d",
	      r->tgid, run->child);
	if (r->kind == UST_BPFU_COOKIE) {
		struct cookie_ev *c;

		CHECK(r->size == 16, "cookie record size %zu", r->size);
		CHECK(get16(b, 0) == COOKIE_TYPE, "cookie type %u", get16(b, 0));
		if (run->nr_ck == run->cap_ck) {
			run->cap_ck = run->cap_ck ? 2 * run->cap_ck : 256;
			run->ck = realloc(run->ck, run->cap_ck * sizeof(*run->ck));
			if (!run->ck)
				abort();
		}
		c = &run->ck[run->nr_ck++];
		c->cookie = get64(b, UST_ABI_COOKIE_OFF);
		c->ts = r->ts;
		c->cpu = r->cpu;
		c->tid = (pid_t)get32(b, 4);
		c->tgid = r->tgid;
	} else {
		uint32_t sloc = get32(b, UST_ABI_STACK_LOC_OFF);
		uint32_t iloc = get32(b, UST_ABI_INODES_LOC_OFF);
		uint32_t dloc = get32(b, UST_ABI_DEV_LOC_OFF);
		unsigned int nr = UST_ABI_DATA_LOC_LEN(sloc) / 8, i;
		struct stack_ev *s;

		CHECK(r->kind == UST_BPFU_STACK, "kind %d", r->kind);
		CHECK(get16(b, 0) == STACK_TYPE, "stack type %u", get16(b, 0));
		CHECK(nr == r->nr && nr <= UST_BPFU_MAX_STACK, "nr %u rec %u", nr, r->nr);
		CHECK(get32(b, 28) == 0, "padding");
		CHECK(UST_ABI_DATA_LOC_OFF(sloc) == 32, "stack at %u", UST_ABI_DATA_LOC_OFF(sloc));
		CHECK(iloc == UST_ABI_DATA_LOC(32 + 8 * nr, 8 * nr), "inodes loc %#x nr %u", iloc, nr);
		CHECK(dloc == UST_ABI_DATA_LOC(32 + 16 * nr, 4 * nr), "dev loc %#x nr %u", dloc, nr);
		CHECK(r->size == 32 + 20 * (size_t)nr, "stack size %zu nr %u", r->size, nr);
		if (nr > UST_BPFU_MAX_STACK)
			nr = UST_BPFU_MAX_STACK;
		if (run->nr_st == run->cap_st) {
			run->cap_st = run->cap_st ? 2 * run->cap_st : 256;
			run->st = realloc(run->st, run->cap_st * sizeof(*run->st));
			if (!run->st)
				abort();
		}
		s = &run->st[run->nr_st++];
		s->cookie = get64(b, UST_ABI_COOKIE_OFF);
		s->ts = r->ts;
		s->flags = r->flags;
		s->nr = nr;
		s->tid = (pid_t)get32(b, 4);
		s->tgid = r->tgid;
		for (i = 0; i < nr; i++) {
			s->off[i] = get64(b, 32 + 8 * i);
			s->ino[i] = get64(b, 32 + 8 * nr + 8 * i);
			s->dev[i] = get32(b, 32 + 16 * nr + 4 * i);
		}
	}
	return 0;
}

static void read_maps(struct run *run)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", run->child);
	f = fopen(path, "r");
	CHECK(f, "open %s", path);
	if (!f)
		return;
	while (run->nr_maps < 256 && fgets(line, sizeof(line), f)) {
		struct map_ent *m = &run->maps[run->nr_maps];
		unsigned long long s, e, pg, ino;
		int n = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu %n", &s, &e, &pg, &m->maj, &m->min,
			   &ino, &n) < 6)
			continue;
		m->start = s;
		m->end = e;
		m->pgoff = pg;
		m->ino = ino;
		snprintf(m->path, sizeof(m->path), "%s", line + n);
		m->path[strcspn(m->path, "\n")] = '\0';
		run->nr_maps++;
	}
	fclose(f);
}

/* The mapped file holding file offset @off of (dev, ino), as maps says. */
static const struct map_ent *find_map(const struct run *run, uint32_t dev, uint64_t ino,
				      uint64_t off)
{
	int i;

	for (i = 0; i < run->nr_maps; i++) {
		const struct map_ent *m = &run->maps[i];

		if (m->ino == ino && m->maj == UST_ABI_KDEV_MAJOR(dev) &&
		    m->min == UST_ABI_KDEV_MINOR(dev) && off >= m->pgoff &&
		    off < m->pgoff + (m->end - m->start))
			return m;
	}
	return NULL;
}

/* The function symbol covering file offset @off of @path (libelf). */
static int sym_at(const char *path, uint64_t off, char *name, size_t len)
{
	Elf_Scn *scn = NULL;
	uint64_t vaddr = 0;
	bool have = false;
	size_t i, nph;
	Elf *e;
	int fd, ret = -1;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_getphdrnum(e, &nph))
		goto out;
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && off >= ph.p_offset &&
		    off < ph.p_offset + ph.p_filesz) {
			vaddr = off - ph.p_offset + ph.p_vaddr;
			have = true;
			break;
		}
	}
	while (have && ret && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			if (vaddr >= sym.st_value && vaddr < sym.st_value + sym.st_size) {
				snprintf(name, len, "%s", elf_strptr(e, sh.sh_link, sym.st_name));
				ret = 0;
				break;
			}
		}
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

/* "file:symbol" of frame @i; return addresses are looked up at addr - 1. */
static void frame_name(const struct run *run, const struct stack_ev *s, unsigned int i,
		       char *out, size_t len)
{
	const struct map_ent *m = find_map(run, s->dev[i], s->ino[i], s->off[i]);
	char sym[128];
	const char *base;

	if (!m) {
		snprintf(out, len, "?:%#llx(ino %llu dev %u:%u)", (unsigned long long)s->off[i],
			 (unsigned long long)s->ino[i], UST_ABI_KDEV_MAJOR(s->dev[i]),
			 UST_ABI_KDEV_MINOR(s->dev[i]));
		return;
	}
	base = strrchr(m->path, '/');
	base = base ? base + 1 : m->path;
	if (sym_at(m->path, i ? s->off[i] - 1 : s->off[i], sym, sizeof(sym)))
		snprintf(sym, sizeof(sym), "?%#llx", (unsigned long long)s->off[i]);
	snprintf(out, len, "%.100s:%s", base, sym);
}

static int spawn(struct run *run, const char *prog, bool fork_too, int *go_fd)
{
	int in[2], out[2];
	char buf[16] = "";
	ssize_t n;

	if (pipe(in) || pipe(out))
		return -1;
	run->child = fork();
	if (run->child < 0)
		return -1;
	if (!run->child) {
		char rounds[16], calls[16];

		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		snprintf(rounds, sizeof(rounds), "%d", ROUNDS);
		snprintf(calls, sizeof(calls), "%d", CALLS);
		execl(prog, prog, rounds, calls, fork_too ? "fork" : (char *)NULL, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	n = read(out[0], buf, sizeof(buf) - 1);
	close(out[0]);
	if (n != 6 || strcmp(buf, "ready\n")) {
		close(in[1]);
		return -1;
	}
	*go_fd = in[1];
	return 0;
}

struct mode {
	const char *name;
	struct ust_bpfu_opts opts;
	bool fork;			/* ust-live-chain forks a child process */
	const char *const *chain_main;	/* expected frames, main thread */
	const char *const *chain_thread;
	const char *const *chain_forked;
	int depth;
	bool arm_exit;			/* stacks taken at the system call's exit (not no_exit_stacks) */
	bool lossy;			/* a one-page ring, read every 20 ms */
};

/*
 * The lossy mode: records were dropped (the ring full), and a stack sent
 * as its task's last one again (UST_BPFU_F_AGAIN) whose last one was
 * dropped must be lost with it, never given another's frames.  Every
 * stack that arrives is its cookie's, the exact chain.
 */
static void check_lossy(const struct run *run, const struct mode *md, const char *prog_base,
			const struct ust_bpfu_stats *st)
{
	size_t i, j, matched = 0;
	int k;

	for (i = 0; i < run->nr_st; i++) {
		const struct stack_ev *s = &run->st[i];
		const char *const *want = s->tgid != run->child ? md->chain_forked :
					  s->tid == run->child ? md->chain_main : md->chain_thread;
		bool ok = want != NULL, known = false;

		for (j = 0; j < run->nr_ck && !known; j++)
			known = run->ck[j].cookie == s->cookie && run->ck[j].tid == s->tid;
		for (k = 0; ok && k < md->depth; k++) {
			char got[256], exp[128];

			frame_name(run, s, (unsigned int)k, got, sizeof(got));
			snprintf(exp, sizeof(exp), "%s:%s", k ? prog_base : "libc.so.6", want[k]);
			ok = k < (int)s->nr && !strcmp(got, exp);
		}
		CHECK(known, "%s: stack of cookie %#llx, which no event of its task had", md->name,
		      (unsigned long long)s->cookie);
		matched += ok;
	}
	CHECK(matched == run->nr_st, "%s: %zu of %zu stacks are the exact chain", md->name, matched,
	      run->nr_st);
	CHECK(st->drops > 0, "%s: no record was dropped: the mode tests nothing", md->name);
	printf("%s: %llu records dropped, %zu stacks arrived, each the exact chain; %llu sent again, %llu of them lost with the stack they repeat\n",
	       md->name, (unsigned long long)st->drops, run->nr_st, (unsigned long long)st->repeats,
	       (unsigned long long)st->repeats_lost);
}

static void check_run(const struct run *run, const struct mode *md, const char *prog_base,
		      const struct ust_bpfu_stats *st)
{
	const bool forked = md->fork && !md->opts.no_children;
	/* getppid() calls of the followed threads */
	const int calls = (forked ? 3 : 2) * ROUNDS * CALLS;
	/* Without task_work, an entry's stack not taken at its exit is taken at its event. */
	const bool imm = md->opts.immediate || (md->opts.no_exit_stacks && !run->task_work);
	size_t i, j, distinct = 0, matched = 0;
	unsigned int shown = 0;

	/* Cookies: the kernel's layout; enter and exit of one call share one. */
	for (i = 0; i < run->nr_ck; i++) {
		const struct cookie_ev *c = &run->ck[i];
		size_t same = 0, first = i;

		CHECK((c->cookie & 1) != 0, "cookie %#llx lowest bit",
		      (unsigned long long)c->cookie);
		CHECK(((c->cookie >> 1) & UST_ABI_COOKIE_CTR_MASK) != 0, "cookie %#llx counter 0",
		      (unsigned long long)c->cookie);
		for (j = 0; j < run->nr_ck; j++) {
			if (run->ck[j].cookie != c->cookie)
				continue;
			if (!same++)
				first = j;
			CHECK(run->ck[j].tid == c->tid, "cookie %#llx on tids %d and %d",
			      (unsigned long long)c->cookie, c->tid, run->ck[j].tid);
		}
		if (first != i)
			continue;
		distinct++;
		/* The first event of the entry allocated it, on its CPU. */
		CHECK(ust_abi_cookie_cpu(c->cookie) == c->cpu, "cookie %#llx allocated on cpu %u",
		      (unsigned long long)c->cookie, c->cpu);
		CHECK(same == (imm ? 1u : 2u) || (!imm && same == 1 && st->missed), "cookie %#llx in %zu events",
		      (unsigned long long)c->cookie, same);
	}
	/*
	 * A run the kernel skipped (st->missed: on a preempt=full kernel, a
	 * tracing program still running on that CPU, or a map update of user
	 * space's preempted there while it keeps them off) is an event
	 * without its cookie, or an entry whose exit took no stack (stale):
	 * counted, never another entry's.  Rare: none on most kernels; on
	 * 7.3 under QEMU's emulation, where a program runs long enough to be
	 * preempted often, up to 40 % of one mode's runs were seen skipped.
	 */
	CHECK(st->missed <= (uint64_t)calls / 2, "%llu runs skipped", (unsigned long long)st->missed);
	CHECK(run->nr_ck + st->missed >= 2 * (size_t)calls && run->nr_ck <= 2 * (size_t)calls,
	      "%zu cookie records, want %d (%llu runs skipped)", run->nr_ck, 2 * calls,
	      (unsigned long long)st->missed);
	CHECK(distinct + st->missed >= (size_t)(imm ? 2 * calls : calls) &&
	      distinct <= (size_t)(imm ? 2 * calls : calls), "%zu cookies", distinct);
	CHECK(run->nr_st + st->stale == distinct && st->stale <= st->missed,
	      "%zu stacks for %zu cookies (%llu stale)", run->nr_st, distinct,
	      (unsigned long long)st->stale);

	/* Stacks: one per cookie, after it, the known chain. */
	for (i = 0; i < run->nr_st; i++) {
		const struct stack_ev *s = &run->st[i];
		const struct cookie_ev *c = NULL;
		const char *const *want = s->tgid != run->child ? md->chain_forked :
					  s->tid == run->child ? md->chain_main : md->chain_thread;
		size_t dup = 0;
		bool ok = true;
		int k;

		CHECK(want, "stack of an unexpected process %d", s->tgid);
		if (!want)
			continue;
		for (j = 0; j < run->nr_ck && !c; j++)
			if (run->ck[j].cookie == s->cookie)
				c = &run->ck[j];
		for (j = 0; j < run->nr_st; j++)
			dup += run->st[j].cookie == s->cookie;
		CHECK(c, "stack for unknown cookie %#llx", (unsigned long long)s->cookie);
		CHECK(dup == 1, "cookie %#llx has %zu stacks", (unsigned long long)s->cookie, dup);
		if (!c)
			continue;
		CHECK(s->tid == c->tid, "stack tid %d cookie tid %d", s->tid, c->tid);
		CHECK(s->ts >= c->ts, "stack before its cookie");
		CHECK(!!(s->flags & UST_BPFU_STACK_IMMEDIATE) == imm, "flags %#x", s->flags);
		/*
		 * kernel_frames: the kernel's own walk, frame pointers only.
		 * Otherwise CFI tables from the first frame to the outermost
		 * one, with no frame-pointer frame and no [sp] guess.
		 */
		if (md->opts.kernel_frames)
			CHECK((s->flags & (UST_BPFU_STACK_FP | UST_BPFU_STACK_CFI |
					   UST_BPFU_STACK_LEAF_RET)) == UST_BPFU_STACK_FP,
			      "flags %#x", s->flags);
		else
			CHECK((s->flags & (UST_BPFU_STACK_FP | UST_BPFU_STACK_CFI |
					   UST_BPFU_STACK_BOTTOM | UST_BPFU_STACK_LEAF_RET |
					   UST_BPFU_STACK_NO_TABLE)) ==
			      (UST_BPFU_STACK_CFI | UST_BPFU_STACK_BOTTOM),
			      "flags %#x", s->flags);
		CHECK(!(s->flags & (UST_BPFU_STACK_TRUNCATED | UST_BPFU_STACK_RAW |
				    UST_BPFU_STACK_SCHED_FAIL | UST_BPFU_STACK_EXIT |
				    UST_BPFU_STACK_LATE)),
		      "flags %#x", s->flags);
		CHECK(s->nr > (unsigned int)md->depth, "%u frames", s->nr);
		for (k = 0; k < md->depth && k < (int)s->nr; k++) {
			char got[256], exp[128];

			frame_name(run, s, (unsigned int)k, got, sizeof(got));
			snprintf(exp, sizeof(exp), "%s:%s", k ? prog_base : "libc.so.6", want[k]);
			if (strcmp(got, exp)) {
				ok = false;
				CHECK(0, "%s: tid %d frame %d is %s, want %s", md->name, s->tid, k, got,
				      exp);
			}
		}
		if (ok)
			matched++;
		if (!ok && shown++ < 2) {
			for (k = 0; k < (int)s->nr && k < 8; k++) {
				char got[256];

				frame_name(run, s, (unsigned int)k, got, sizeof(got));
				fprintf(stderr, "   #%d %s\n", k, got);
			}
		}
	}
	CHECK(matched == run->nr_st, "%zu of %zu stacks match", matched, run->nr_st);

	CHECK(!!run->forked == forked, "records of the forked child: %d", run->forked);
	CHECK(st->children == (forked ? 1u : 0u), "children %llu", (unsigned long long)st->children);
	CHECK(st->filter_full == 0, "filter full");
	CHECK(st->records == run->nr_ck + run->nr_st, "records %llu",
	      (unsigned long long)st->records);
	CHECK(st->bad_records == 0, "bad records %llu", (unsigned long long)st->bad_records);
	/* Every getppid() entry's stack at its exit when armed (its stack is resident); none else. */
	if (md->arm_exit)
		CHECK((st->exit_walks + st->exit_faults == run->nr_st ||
		       (st->missed && st->exit_walks + st->exit_faults + st->missed >= run->nr_st)) &&
		      st->exit_walks > 0,
		      "exit walks %llu, faults %llu, stacks %zu", (unsigned long long)st->exit_walks,
		      (unsigned long long)st->exit_faults, run->nr_st);
	else
		CHECK(st->exit_walks == 0, "exit walks %llu unarmed", (unsigned long long)st->exit_walks);
	CHECK(st->events == run->nr_ck, "BPF events %llu", (unsigned long long)st->events);
	CHECK(st->cookies == distinct, "BPF cookies %llu", (unsigned long long)st->cookies);
	CHECK(st->stacks == run->nr_st, "BPF stacks %llu", (unsigned long long)st->stacks);
	CHECK(st->drops == 0 && st->no_storage == 0 && st->sched_fail == 0 && st->orphan == 0 &&
	      st->truncated == 0 && st->vma_fail == 0 && st->exit_stacks == 0 && st->late == 0 &&
	      st->stale <= st->missed,
	      "drops %llu no_storage %llu sched_fail %llu orphan %llu truncated %llu vma_fail %llu exit %llu late %llu stale %llu",
	      (unsigned long long)st->drops, (unsigned long long)st->no_storage,
	      (unsigned long long)st->sched_fail, (unsigned long long)st->orphan,
	      (unsigned long long)st->truncated, (unsigned long long)st->vma_fail,
	      (unsigned long long)st->exit_stacks, (unsigned long long)st->late,
	      (unsigned long long)st->stale);
	printf("%s%s: %zu cookie records, %zu cookies, %zu stacks, %zu match the chain, %llu runs skipped by the kernel%s%s\n",
	       md->name, md->opts.no_exit_stacks && !run->task_work ? " (no task_work: at the event)" : "",
	       run->nr_ck, distinct, run->nr_st, matched, (unsigned long long)st->missed,
	       st->missed ? ", most of " : "", st->missed_by);
}

static void run_mode(const struct mode *md, const char *prog, const char *prog_base)
{
	struct ust_bpfu_opts o = md->opts;
	struct ust_bpfu_stats st;
	struct run run = { 0 };
	struct ust_bpfu *u;
	char err[256];
	int go = -1, status = 0, ret;
	pid_t w = 0;

	o.cookie_type = COOKIE_TYPE;
	o.stack_type = STACK_TYPE;
	u = ust_bpfu_open(&o, err, sizeof(err));
	CHECK(u, "%s: open: %s", md->name, err);
	if (!u)
		return;
	CHECK(ust_bpfu_deferred(u) == !md->opts.immediate, "%s: deferred %d (%s)", md->name,
	      ust_bpfu_deferred(u), ust_bpfu_why_immediate(u));
	run.task_work = ust_bpfu_task_work(u);
	CHECK(!strcmp(ust_bpfu_why_immediate(u),
		      md->opts.immediate ? "immediate stacks requested" : ""),
	      "why immediate: %s", ust_bpfu_why_immediate(u));
	if (spawn(&run, prog, md->fork, &go)) {
		CHECK(0, "%s: starting %s", md->name, prog);
		ust_bpfu_close(u);
		return;
	}
	read_maps(&run);
	CHECK(ust_bpfu_follow(u, run.child) == 0, "follow");
	/* Its tables now, as the recorder loads a -P process's: every stack is by CFI. */
	CHECK(ust_bpfu_tables_pid(u, run.child) == 0, "tables of the child's maps");
	ret = ust_bpfu_attach(u, "syscalls", "sys_enter_getppid");
	CHECK(ret == 0, "attach sys_enter_getppid: %s", strerror(-ret));
	ret = ust_bpfu_attach(u, "syscalls", "sys_exit_getppid");
	CHECK(ret == 0, "attach sys_exit_getppid: %s", strerror(-ret));
	/* Always: the sys_exit_* events get their cookies from it. */
	ret = ust_bpfu_arm_exit(u);
	CHECK(ret == 0, "arm exit: %s", strerror(-ret));
	CHECK(write(go, "g", 1) == 1, "go");
	close(go);
	/* Read every 20 ms only: a round of the program's first calls overflows the page. */
	while (md->lossy && w != run.child) {
		usleep(20000);
		ust_bpfu_consume(u, on_rec, &run);
		w = waitpid(run.child, &status, WNOHANG);
		if (w < 0)
			break;
	}
	while (w != run.child) {
		ret = ust_bpfu_poll(u, 50, on_rec, &run);
		CHECK(ret >= 0 || ret == -EINTR, "poll: %s", strerror(-ret));
		if (ret < 0 && ret != -EINTR)
			kill(run.child, SIGKILL);
		w = waitpid(run.child, &status, WNOHANG);
		if (w < 0)
			break;
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	ret = ust_bpfu_consume(u, on_rec, &run);
	CHECK(ret >= 0, "consume: %s", strerror(-ret));
	CHECK(ust_bpfu_get_stats(u, &st) == 0, "stats");
	ust_bpfu_close(u);
	if (md->lossy)
		check_lossy(&run, md, prog_base, &st);
	else
		check_run(&run, md, prog_base, &st);
	free(run.ck);
	free(run.st);
}

int main(int argc, char **argv)
{
	static const char *const main_chain[] = { "getppid", "ust_live_c", "ust_live_b",
						  "ust_live_a", "main" };
	static const char *const thread_chain[] = { "getppid", "ust_live_c", "ust_live_b",
						    "ust_live_a", "ust_live_thread" };
	static const char *const forked_chain[] = { "getppid", "ust_live_c", "ust_live_b",
						    "ust_live_a", "ust_live_forked" };
	static const char *const kmain_chain[] = { "getppid", "ust_live_b", "ust_live_a", "main" };
	static const char *const kthread_chain[] = { "getppid", "ust_live_b", "ust_live_a",
						     "ust_live_thread" };
	const struct mode modes[] = {
		{ "later", { .no_exit_stacks = true }, true, main_chain, thread_chain,
		  forked_chain, 5, false, false },
		{ "later kernel_frames", { .kernel_frames = true, .no_exit_stacks = true }, false,
		  kmain_chain, kthread_chain, NULL, 4, false, false },
		{ "later no_children", { .no_children = true, .no_exit_stacks = true }, true,
		  main_chain, thread_chain, NULL, 5, false, false },
		{ "immediate", { .immediate = true }, true, main_chain, thread_chain, forked_chain, 5,
		  false, false },
		{ "sys_exit", { 0 }, true, main_chain, thread_chain, forked_chain, 5, true, false },
		{ "lossy", { .ringbuf_bytes = 4096 }, true, main_chain, thread_chain, forked_chain, 5,
		  true, true },
	};
	char prog[PATH_MAX];
	const char *base;
	size_t i;

	if (argc != 2 || !realpath(argv[1], prog)) {
		fprintf(stderr, "usage: %s PATH-TO-ust-live-chain\n", argv[0]);
		return 2;
	}
	if (geteuid() != 0 || !ust_bpfu_built()) {
		printf("skipped: needs root and BPF support\n");
		return 77;
	}
	elf_version(EV_CURRENT);
	base = strrchr(prog, '/') + 1;
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		run_mode(&modes[i], prog, base);
	if (fails)
		fprintf(stderr, "%d check(s) failed\n", fails);
	return fails ? 1 : 0;
}
