// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_rec_run: the recording (ustitch record's).
 *
 *   kernel events --(private tracefs instances, raw pages)--> trace.dat
 *   BPF cookies/stacks --(ring buffer, spool)--> buffer "ustitch" of the
 *                                                same trace.dat
 *
 * The instances and BPF programs are removed on every way out: normal end,
 * SIGINT/SIGTERM/SIGHUP (the trace is still written), errors.  SIGKILL
 * leaves the instance, which the next run removes (its owner pid is gone);
 * BPF programs go with the process's file descriptors.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

#include "ustitch/abi.h"
#include "ustitch/addrfilter.h"
#include "ustitch/bpfu.h"
#include "ustitch/capture.h"
#include "ustitch/encode.h"
#include "ustitch/tdw.h"
#include "ustitch/rec.h"
#include "ustitch/sb.h"
#include "rec_priv.h"

#define PFX UST_REC_PFX

static volatile sig_atomic_t stop_sig, stop_sent;

/* @stop_sent: the signal came from kill(), not from the terminal, which
 * signals the command's process group itself. */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	stop_sig = sig;
	stop_sent = si->si_code == SI_USER || si->si_code == SI_QUEUE;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct run {
	struct ust_rec_opts *o;
	struct ust_cap *cap;
	struct ust_bpfu *bpfu;
	struct ust_rec_spool *spool;
	struct ust_rec_maps *maps;
	uint16_t cookie_id, stack_id, mapping_id, flags_id;
	unsigned long cookies, stacks, immediate;
	struct ust_rec_stack_counts walks;	/* how the stacks were taken */
	uint64_t drops_seen;
	int spool_err;
	struct ust_rec_ctx ctx;
	struct ust_hmap kaddrs;		/* ctx.kaddrs, when collected */
	struct ust_cap_buffer *cb;	/* the capture's view of o->bufs */
	bool bpf, spooling;		/* BPF makes stacks; a "ustitch" buffer */
	bool stacks_fallback;		/* ftrace's userstacktrace instead of BPF's */
	pid_t child;			/* the command, or -1 */
	int status;			/* its wait status, once it ended */
	int exec_errno;			/* why it could not be run, or 0 */
	int go_fd, err_fd;		/* its start and exec-failure pipes */
	int ep;				/* what the main loop waits on, or -1 */
	double t0;
	char pathbuf[4096];		/* the command's file */
};

static int print_stderr(enum ust_rec_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return vfprintf(stderr, fmt, ap);
}

static ust_rec_print_fn_t print_fn = print_stderr;

ust_rec_print_fn_t ust_rec_set_print(ust_rec_print_fn_t fn)
{
	ust_rec_print_fn_t old = print_fn;

	print_fn = fn;
	return old;
}

void ust_rec_pr(enum ust_rec_print_level level, const char *fmt, ...)
{
	va_list ap;

	if (!print_fn)
		return;
	va_start(ap, fmt);
	print_fn(level, fmt, ap);
	va_end(ap);
}

void ust_rec_add_source(struct ust_rec_opts *o, struct ust_rec_source *s)
{
	struct ust_rec_source **pp = &o->sources;

	while (*pp)
		pp = &(*pp)->next;
	s->next = NULL;
	*pp = s;
}

void ust_rec_free_sources(struct ust_rec_opts *o)
{
	struct ust_rec_source *src;

	/* Unlinked first: free() may free the source itself. */
	while ((src = o->sources)) {
		o->sources = src->next;
		if (src->ops->free)
			src->ops->free(src);
	}
	if (o->af) {	/* borrowed by the sources */
		ust_af_free(o->af);
		free(o->af);
		o->af = NULL;
	}
}

void ust_rec_opts_free(struct ust_rec_opts *o)
{
	int b, i;

	ust_rec_free_sources(o);
	for (b = 0; b < o->nr_bufs; b++) {
		struct ust_rec_buffer *rb = &o->bufs[b];

		for (i = 0; i < rb->nr_ev; i++) {
			free(rb->ev[i].system);
			free(rb->ev[i].event);
			free(rb->ev[i].filter);
		}
		free(rb->ev);
		for (i = 0; i < rb->nr_opts; i++)
			free(rb->opts[i]);
		free(rb->opts);
		free(rb->name);
	}
	free(o->bufs);
	free(o->pids);
	o->bufs = NULL;
	o->nr_bufs = 0;
	o->pids = NULL;
	o->nr_pids = 0;
}

int ust_rec_ctx_add_format(struct ust_rec_ctx *c, const char *system, const char *text)
{
	size_t ls = strlen(system), lt = strlen(text);
	char **n = realloc(c->formats, (size_t)(c->nr_formats + 1) * sizeof(*n));
	char *e;

	if (!n)
		return -1;
	c->formats = n;
	e = malloc(ls + lt + 2);
	if (!e)
		return -1;
	memcpy(e, system, ls + 1);
	memcpy(e + ls + 1, text, lt + 1);
	c->formats[c->nr_formats++] = e;
	return 0;
}

void ust_rec_ctx_kaddr(struct ust_rec_ctx *c, uint64_t addr)
{
	if (c->kaddrs && ust_hmap_put(c->kaddrs, addr, 1))
		c->kaddrs_lost = true;
}

int ust_rec_ctx_new_id(struct ust_rec_ctx *c)
{
	return c->next_id < 65000 ? c->next_id++ : -1;
}

/* Ids for the events this kernel lacks: above every id it uses. */
static void pick_ids(struct run *r)
{
	char path[4096];
	struct dirent *sd, *ed;
	DIR *sdir, *edir;
	int max = 0;

	snprintf(path, sizeof(path), "%s/events", tracefs_tracing_dir());
	sdir = opendir(path);
	while (sdir && (sd = readdir(sdir))) {
		if (sd->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/events/%s", tracefs_tracing_dir(), sd->d_name);
		edir = opendir(path);
		while (edir && (ed = readdir(edir))) {
			char idpath[4096 + 512], buf[32];
			int fd, id;
			ssize_t n;

			if (ed->d_name[0] == '.')
				continue;
			snprintf(idpath, sizeof(idpath), "%s/%s/id", path, ed->d_name);
			fd = open(idpath, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (n <= 0)
				continue;
			buf[n] = '\0';
			id = atoi(buf);
			if (id > max)
				max = id;
		}
		if (edir)
			closedir(edir);
	}
	if (sdir)
		closedir(sdir);
	r->cookie_id = (uint16_t)(max + 1);
	r->stack_id = (uint16_t)(max + 2);
	r->mapping_id = max + 3 < UST_ABI_ID_USER_MAPPING ? UST_ABI_ID_USER_MAPPING : (uint16_t)(max + 3);
	r->flags_id = (uint16_t)(max + 4);
	r->ctx.next_id = max + 5;
}

/* A followed process's new program, by path: its mapping record can name
 * it though the process is gone when its stacks come. */
static void on_exec(pid_t tgid, const char *path, uint32_t kdev, uint64_t ino, void *ctx)
{
	struct run *r = ctx;

	(void)tgid;
	ust_rec_maps_note_exec(r->maps, path, kdev, ino);
}

static int on_bpf_record(const struct ust_bpfu_rec *rec, void *ctx)
{
	struct run *r = ctx;

	if (rec->kind == UST_BPFU_STACK) {
		unsigned int i;

		/* The files first, so that any reader sees them before the stack. */
		for (i = 0; i < rec->nr; i++)
			ust_rec_maps_note_file(r->maps, r->spool, rec->tgid, rec->cpu, rec->ts,
					   rec->devs[i], rec->inodes[i]);
		r->stacks++;
		ust_rec_tables_count(&r->walks, rec->flags);
		if (rec->flags & UST_BPFU_STACK_IMMEDIATE)
			r->immediate++;
		/* How it was taken: by what, and where the kernel would have deferred it. */
		if (ust_rec_tables_flags_record(r->spool, r->flags_id, rec))
			r->spool_err = errno ? errno : EIO;
	} else {
		r->cookies++;
		ust_rec_maps_note_task(r->maps, rec->tgid);
	}
	if (ust_rec_spool_add(r->spool, rec->cpu, rec->ts, rec->data, rec->size))
		r->spool_err = errno ? errno : EIO;
	return 0;
}

/*
 * Records the BPF side could not hand over (ring buffer full): mark them
 * in the "ustitch" buffer at the time they were noticed, so that the
 * report says "lost" for the stacks that never arrived before that time.
 */
static void note_drops(struct run *r)
{
	struct ust_bpfu_stats st;
	struct timespec t;

	if (!r->bpfu || ust_bpfu_get_stats(r->bpfu, &st) || st.drops <= r->drops_seen)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t);
	ust_rec_spool_add_lost(r->spool, 0, (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec,
			   st.drops - r->drops_seen);
	r->drops_seen = st.drops;
}

/* What the run's sources (perf samples, lock_held() events) recorded so far. */
static void source_counts(struct run *r, struct ust_rec_counts *n)
{
	struct ust_rec_source *src;

	memset(n, 0, sizeof(*n));
	for (src = r->o->sources; src; src = src->next)
		if (src->ops->counts)
			src->ops->counts(src, n);
}

/* ", " between the counts of one part, "; " between parts. */
static void count_to(struct ust_sb *sb, const char **sep, unsigned long long n, const char *one,
		     const char *many)
{
	ust_sb_printf(sb, "%s%llu %s", *sep, n, n == 1 ? one : many);
	*sep = ", ";
}

/*
 * The live line, on a terminal: what the trace holds so far, by what the
 * run records: samples for a sampling run, else events, and the stacks.
 */
static void show_status(struct run *r, double t0, bool final)
{
	FILE *out = ust_rec_out(r->o);
	struct ust_bpfu_stats st = { 0 };
	struct ust_rec_counts n;
	unsigned long events = 0;
	bool ftrace = false;
	const char *sep = "";
	struct ust_sb sb;
	int b;

	source_counts(r, &n);
	for (b = 0; b < r->o->nr_bufs; b++) {
		ftrace |= r->o->bufs[b].nr_ev > 0;
		events += ust_cap_events(r->cap, b);
	}
	if (r->bpfu)
		ust_bpfu_get_stats(r->bpfu, &st);
	ust_sb_init(&sb);
	if (ust_rec_perf_wanted(r->o))
		count_to(&sb, &sep, n.samples, "sample", "samples");
	if (ftrace || (!n.kept && !ust_rec_perf_wanted(r->o)))
		count_to(&sb, &sep, events, "event", "events");
	if (n.filtered)
		count_to(&sb, &sep, n.kept, "event kept", "events kept");
	if (r->bpfu)
		count_to(&sb, &sep, r->stacks, "user stack", "user stacks");
	if (st.drops + n.lost)
		count_to(&sb, &sep, st.drops + n.lost, "lost", "lost");
	fprintf(out, "\r" PFX "%s, %.1f s%s", ust_sb_str(&sb), now_s() - t0, final ? "\n" : "  ");
	ust_sb_fini(&sb);
}

/* The counts of the capture, taken before its instances go. */
struct tally {
	unsigned long *events;		/* per ftrace buffer */
	unsigned long long *lost;
};

/* 0, or -1 without memory. */
static int take_tally(struct run *r, struct tally *t)
{
	int b, cpu;

	t->events = calloc((size_t)r->o->nr_bufs, sizeof(*t->events));
	t->lost = calloc((size_t)r->o->nr_bufs, sizeof(*t->lost));
	if (!t->events || !t->lost)
		return -1;
	for (b = 0; b < r->o->nr_bufs; b++) {
		t->events[b] = ust_cap_events(r->cap, b);
		for (cpu = 0; cpu < ust_cap_nr_cpus(r->cap); cpu++) {
			struct ust_cap_lost l;

			if (!ust_cap_lost(r->cap, b, cpu, &l, NULL, 0))
				t->lost[b] += l.overrun + l.dropped;
		}
	}
	return 0;
}

/*
 * One line: what the file holds, per buffer: each ftrace buffer's events,
 * and the "ustitch" buffer's samples, kept events and user stacks; what
 * was lost where.  How, and the rest, with -v (verbose()).
 */
static void summary(struct run *r, const char *file, const struct tally *t)
{
	struct ust_bpfu_stats st = { 0 };
	struct ust_rec_counts n;
	const char *part = "", *sep;
	struct ust_sb sb;
	int b;

	source_counts(r, &n);
	if (r->bpfu)
		ust_bpfu_get_stats(r->bpfu, &st);
	ust_sb_init(&sb);
	for (b = 0; b < r->o->nr_bufs; b++) {
		if (!r->o->bufs[b].nr_ev && !t->events[b])
			continue;	/* -g alone: no ftrace event asked for */
		ust_sb_puts(&sb, part);
		sep = "";
		count_to(&sb, &sep, t->events[b], "event", "events");
		if (t->lost[b])
			count_to(&sb, &sep, t->lost[b], "lost", "lost");
		if (r->o->bufs[b].name)
			ust_sb_printf(&sb, " (buffer %s)", r->o->bufs[b].name);
		else
			ust_sb_puts(&sb, " (main buffer)");
		part = "; ";
	}
	if (r->spooling) {
		ust_sb_puts(&sb, part);
		sep = "";
		if (ust_rec_perf_wanted(r->o)) {
			count_to(&sb, &sep, n.samples, "sample", "samples");
			if (n.sample_stacks_asked)
				ust_sb_printf(&sb, ", %lu with user stacks", n.sample_stacks);
		}
		if (n.filtered || n.kept) {
			count_to(&sb, &sep, n.kept, "event kept", "events kept");
			ust_sb_printf(&sb, " of %lu filtered", n.filtered);
		}
		if (r->bpfu)
			count_to(&sb, &sep, r->stacks, "user stack", "user stacks");
		if (st.drops + n.lost)
			count_to(&sb, &sep, st.drops + n.lost, "lost", "lost");
		if (!*sep)
			ust_sb_puts(&sb, "nothing");
		ust_sb_puts(&sb, " (buffer ustitch)");
	}
	fprintf(ust_rec_out(r->o), PFX "wrote %s: %s\n", file, sb.len ? ust_sb_str(&sb) : "nothing");
	ust_sb_fini(&sb);
}

/* ustitch record -v: how the stacks were made, where records were lost. */
static void verbose(struct run *r)
{
	FILE *out = ust_rec_out(r->o);
	struct ust_bpfu_stats st = { 0 };
	struct ust_rec_source *src;
	int b, cpu;

	if (ust_cap_pages(r->cap))
		fprintf(out, PFX "ftrace buffers: %lu page%s\n", ust_cap_pages(r->cap),
			ust_cap_pages(r->cap) == 1 ? "" : "s");
	if (r->bpfu) {
		ust_bpfu_get_stats(r->bpfu, &st);
		fprintf(out, PFX "BPF: %lu cookies, %lu user stacks (%s), %lu files\n",
			r->cookies, r->stacks, !ust_bpfu_deferred(r->bpfu) ? "immediate, as asked" :
			ust_bpfu_task_work(r->bpfu) ? "deferred: at system-call exits, else by BPF task_work" :
			"deferred: at system-call exits, else at the event (no BPF task_work)",
			ust_rec_maps_count(r->maps));
	}
	if (r->stacks_fallback)
		fprintf(out, PFX "user stacks: ftrace's own userstacktrace (at the event, by frame pointers): the BPF unwinder did not load\n");
	for (b = 0; b < r->o->nr_bufs; b++) {
		for (cpu = 0; cpu < ust_cap_nr_cpus(r->cap); cpu++) {
			struct ust_cap_lost l;

			if (ust_cap_lost(r->cap, b, cpu, &l, NULL, 0) || (!l.overrun && !l.dropped))
				continue;
			fprintf(out, PFX "%s%s CPU %d: %llu events lost (%llu overwritten, %llu dropped)\n",
				r->o->bufs[b].name ? "buffer " : "main buffer",
				r->o->bufs[b].name ? r->o->bufs[b].name : "", cpu,
				l.overrun + l.dropped, l.overrun, l.dropped);
		}
	}
	if (st.drops)
		fprintf(out, PFX "BPF ring buffer: %llu records lost (the report marks their stacks lost)\n",
			(unsigned long long)st.drops);
	if (st.missed)
		fprintf(out, PFX "BPF: the kernel skipped %llu runs of the programs (most of %s: still running on that CPU when another task came), each an event without its stack\n",
			(unsigned long long)st.missed, st.missed_by);
	if (r->bpfu)
		ust_rec_tables_summary(r->bpfu, &r->walks, out);
	for (src = r->o->sources; src; src = src->next)
		if (src->ops->summary)
			src->ops->summary(src, out);
}

/* Fork the command stopped on a pipe: it runs once tracing is on. */
static pid_t spawn(char **cmd, int *go_fd, int *err_fd)
{
	int go[2], er[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) || pipe2(er, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char b;
		int e;

		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		close(go[1]);
		close(er[0]);
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		execvp(cmd[0], cmd);
		e = errno;
		if (write(er[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(er[1]);
	*go_fd = go[1];
	*err_fd = er[0];
	return pid;
}

/*
 * What the kernel refused, and what records instead.  With -v the reasons
 * (the verifier's line, not its log).  Else a refusal found now is one
 * short line; one remembered from earlier this boot, or a kernel without
 * the task_work kfuncs, says nothing: that line would open every
 * recording, always the same, and the stacks are still whole (taken at
 * the event, where task_work would have deferred them; the report marks
 * them).  ustitch probe says all of it on demand.
 */
static void say_notes(struct run *r)
{
	unsigned int k = ust_bpfu_note_kinds(r->bpfu);

	if (!ust_bpfu_notes(r->bpfu)[0] || r->o->quiet)
		return;
	if (r->o->verbose) {
		ust_rec_info(PFX "BPF: %s\n", ust_bpfu_notes(r->bpfu));
		return;
	}
	if (k & UST_BPFU_NOTE_TW_REFUSED)
		ust_rec_info(PFX "BPF: this kernel refuses BPF task_work: stacks of events other than system calls are taken at the event (-v: why)\n");
	if (k & UST_BPFU_NOTE_NO_CFI)
		ust_rec_info(PFX "BPF: this kernel refuses the CFI walk: user stacks by frame pointers only (-v: why)\n");
}

/*
 * The BPF unwinder, loaded before the capture starts: where the kernel
 * loads none of its variants, the deferred buffers fall back to ftrace's
 * own userstacktrace (at the event, by frame pointers), and the recording
 * goes on.  0 or -1.
 */
static int open_bpf(struct run *r)
{
	struct ust_bpfu_opts bo = { 0 };
	char err[1024];
	int b;

	bo.cookie_type = r->cookie_id;
	bo.stack_type = r->stack_id;
	/* Testing aid: the fallback of kernels without BPF task_work. */
	bo.immediate = getenv("USTITCH_FORCE_IMMEDIATE") != NULL;
	bo.no_cfi = r->o->unwind_fp;
	/*
	 * -b sizes the BPF ring too, as much per CPU as each tracefs buffer
	 * gets: one ring serves every CPU, and a busy machine fills 8 MiB of
	 * stack records (a few KiB each) before the reader gets a CPU.
	 */
	if (r->o->buffer_kb)
		bo.ringbuf_bytes = r->o->buffer_kb * 1024 * (size_t)sysconf(_SC_NPROCESSORS_CONF);
	/* The whole machine but the recorder (see start_capture()). */
	if (ust_rec_whole_machine(r->o))
		bo.ignore_tgid = (uint32_t)getpid();
	/* Only the programs start_bpf() attaches, and lock_held()'s handover. */
	bo.no_tracepoints = bo.no_sys_enter = true;
	bo.no_later = !r->o->sources;
	for (b = 0; b < r->o->nr_bufs; b++) {
		const struct ust_rec_buffer *rb = &r->o->bufs[b];
		int i;

		for (i = 0; rb->deferred && i < rb->nr_ev; i++) {
			const char *sys = rb->ev[i].system, *ev = rb->ev[i].event;

			if (!strcmp(sys, "syscalls") && !strncmp(ev, "sys_enter_", 10))
				bo.no_sys_enter = false;
			else if (strcmp(sys, "syscalls") || strncmp(ev, "sys_exit_", 9))
				bo.no_tracepoints = false;
		}
	}
	r->bpfu = ust_bpfu_open(&bo, err, sizeof(err));
	if (r->bpfu) {
		ust_bpfu_on_exec(r->bpfu, on_exec, r);
		say_notes(r);
		return 0;
	}
	ust_rec_warn(PFX "BPF: %s\n", err);
	ust_rec_warn(PFX "user stacks: ftrace's own userstacktrace instead (taken at the event, by frame pointers)\n");
	r->bpf = false;
	r->stacks_fallback = true;
	for (b = 0; b < r->o->nr_bufs; b++) {
		struct ust_rec_buffer *rb = &r->o->bufs[b];
		char **n;

		if (!rb->deferred)
			continue;
		n = realloc(rb->opts, (size_t)(rb->nr_opts + 1) * sizeof(char *));
		if (!n)
			return -1;
		rb->opts = n;
		rb->opts[rb->nr_opts] = strdup(UST_ABI_OPT_USERSTACKTRACE);
		if (!rb->opts[rb->nr_opts])
			return -1;
		rb->nr_opts++;
		r->cb[b].options = (const char *const *)rb->opts;
		r->cb[b].nr_options = rb->nr_opts;
	}
	return 0;
}

/* The traced processes followed, the deferred buffers' events attached.  0 or -1. */
static int start_bpf(struct run *r, pid_t child)
{
	int b, i;

	if (child > 0 && ust_bpfu_follow(r->bpfu, child))
		goto fail;
	for (i = 0; i < r->o->nr_pids; i++)
		if (ust_bpfu_follow(r->bpfu, r->o->pids[i]))
			goto fail;
	ust_rec_tables_preload(r->bpfu, r->o);
	/* Attached after the ftrace events were enabled: on a shared
	 * tracepoint the earlier probe runs first, so each event's own
	 * record is written before its cookie. */
	for (b = 0; b < r->o->nr_bufs; b++) {
		if (!r->o->bufs[b].deferred)
			continue;
		for (i = 0; i < r->o->bufs[b].nr_ev; i++) {
			const struct ust_rec_event *e = &r->o->bufs[b].ev[i];

			if (ust_bpfu_attach(r->bpfu, e->system, e->event)) {
				ust_rec_warn(PFX "BPF: cannot attach to %s:%s: %s\n", e->system, e->event,
					strerror(errno));
				return -1;
			}
		}
	}
	return 0;
fail:
	ust_rec_warn(PFX "BPF: cannot follow the traced processes: %s\n", strerror(errno));
	return -1;
}

static int write_ustitch_buffer(struct run *r)
{
	struct ust_tdw *w = ust_cap_writer(r->cap);
	const char *keys[] = { "ftrace/user_unwind_cookie", "ftrace/user_unwind_stack",
			       "ustitch/user_mapping", "ustitch/stack_flags" };
	int ids[] = { r->cookie_id, r->stack_id, r->mapping_id, r->flags_id };
	int i, buf, ret;

	/* finish() reports errno. */
	for (i = 0; i < r->ctx.nr_formats; i++) {
		const char *sys = r->ctx.formats[i];

		ret = ust_tdw_add_format(w, sys, sys + strlen(sys) + 1, NULL, 0);
		if (ret < 0) {
			errno = -ret;
			return -1;
		}
	}
	for (i = 0; i < 4; i++) {
		char *text = ust_enc_format_with_id(keys[i], ids[i]);

		if (!text)
			return -1;
		ret = ust_tdw_add_format(w, i < 2 ? "ftrace" : "ustitch", text, NULL, 0);
		if (ret < 0) {
			free(text);
			errno = -ret;
			return -1;
		}
		free(text);
	}
	buf = ust_tdw_add_buffer(w, "ustitch", NULL, 0);
	if (buf < 0) {
		errno = -buf;
		return -1;
	}
	return ust_rec_spool_write(r->spool, w, buf, ust_cap_nr_cpus(r->cap));
}

/*
 * An epoll set of what the main loop waits on, or -1 (then it sleeps its
 * rounds out): the BPF ring buffer (libbpf's own epoll fd nests) and the
 * sources' wakeup fds.  Without them a fast event stream overflows a
 * source's perf buffers between two rounds.
 */
static int wait_set(struct run *r, struct ust_rec_opts *o)
{
	struct epoll_event e = { .events = EPOLLIN };
	struct ust_rec_source *src;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0)
		return -1;
	if (r->bpfu && epoll_ctl(ep, EPOLL_CTL_ADD, ust_bpfu_fd(r->bpfu), &e))
		goto fail;
	for (src = o->sources; src; src = src->next)
		if (src->ops->wait_fds && src->ops->wait_fds(src, ep))
			goto fail;
	return ep;
fail:
	close(ep);
	return -1;
}

/* ---- the run, step by step ------------------------------------------ */

/* SIGINT, SIGTERM and SIGHUP end the recording; the trace is still written. */
static void catch_signals(void)
{
	struct sigaction sa = { 0 };

	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Instances left by recorders that were SIGKILLed. */
static void remove_stale(struct run *r)
{
	int stale = ust_cap_remove_stale();

	if (stale && !r->o->quiet)
		fprintf(ust_rec_out(r->o), PFX "removed %d stale ustitch instance%s of recorders that are gone\n",
			stale, stale == 1 ? "" : "s");
}

/*
 * The capture's view of each buffer: its events and options.  Deferred
 * stacks are the kernel's own options when it has them (@native), else
 * BPF's.  0 or -1.
 */
static int plan_buffers(struct run *r, bool native)
{
	struct ust_rec_opts *o = r->o;
	int b;

	r->cb = calloc((size_t)o->nr_bufs, sizeof(*r->cb));
	if (!r->cb)
		return -1;
	for (b = 0; b < o->nr_bufs; b++) {
		struct ust_rec_buffer *rb = &o->bufs[b];
		struct ust_cap_event *ev = calloc((size_t)rb->nr_ev, sizeof(*ev));
		int i;

		if (!ev)
			return -1;
		r->cb[b].events = ev;
		for (i = 0; i < rb->nr_ev; i++) {
			ev[i].system = rb->ev[i].system;
			ev[i].event = rb->ev[i].event;
			ev[i].filter = rb->ev[i].filter;
		}
		if (rb->deferred && native) {
			/* The kernel's own: userstacktrace + userstacktrace_delay. */
			char **n = realloc(rb->opts, (size_t)(rb->nr_opts + 2) * sizeof(char *));

			if (!n)
				return -1;
			rb->opts = n;
			rb->opts[rb->nr_opts++] = strdup(UST_ABI_OPT_USERSTACKTRACE_DELAY);
			rb->opts[rb->nr_opts++] = strdup(UST_ABI_OPT_USERSTACKTRACE);
		} else if (rb->deferred) {
			r->bpf = true;
		}
		r->cb[b].name = rb->name;
		r->cb[b].nr_events = rb->nr_ev;
		r->cb[b].options = (const char *const *)rb->opts;
		r->cb[b].nr_options = rb->nr_opts;
	}
	/* The records' type ids first: the unwinder writes them. */
	if (r->bpf || o->sources)
		pick_ids(r);
	if (r->bpf && open_bpf(r))
		return -1;
	r->spooling = r->bpf || o->sources;
	return 0;
}

/* The command, forked and held until tracing is on.  0 or -1. */
static int start_command(struct run *r)
{
	if (!r->o->cmd)
		return 0;
	r->child = spawn(r->o->cmd, &r->go_fd, &r->err_fd);
	if (r->child < 0) {
		ust_rec_warn(PFX "cannot start %s: %s\n", r->o->cmd[0], strerror(errno));
		return -1;
	}
	return 0;
}

/* The tracefs instances, following the command.  0 or -1. */
static int start_capture(struct run *r)
{
	struct ust_rec_opts *o = r->o;
	struct ust_cap_opts co = { 0 };
	char err[512];

	co.buffers = r->cb;
	co.nr_buffers = o->nr_bufs;
	co.clock = o->clock;
	co.buffer_kb = o->buffer_kb;
	co.pids = o->pids;
	co.nr_pids = o->nr_pids;
	/*
	 * As trace-cmd record: recording the whole machine leaves out the
	 * recorder, whose reads and writes of the trace would otherwise be
	 * most of it (and, with stacks, feed on themselves).
	 */
	if (ust_rec_whole_machine(o))
		co.notrace_pid = getpid();
	r->cap = ust_cap_start(o->output, &co, err, sizeof(err));
	if (!r->cap) {
		ust_rec_warn(PFX "%s\n", err);
		return -1;
	}
	if (r->child > 0 && ust_cap_follow(r->cap, r->child, NULL, 0)) {
		ust_rec_warn(PFX "cannot follow pid %d\n", (int)r->child);
		return -1;
	}
	return 0;
}

/* The spool of the "ustitch" buffer, its mapping records, the BPF unwinder.  0 or -1. */
static int start_spool(struct run *r)
{
	struct ust_rec_opts *o = r->o;

	if (!r->spooling)
		return 0;
	r->spool = ust_rec_spool_new();
	r->maps = ust_rec_maps_new(r->mapping_id,
			       o->cmd ? ust_rec_tables_cmd_path(o->cmd[0], r->pathbuf, sizeof(r->pathbuf)) : NULL);
	if (!r->spool || !r->maps || (r->bpf && start_bpf(r, r->child)))
		return -1;
	return 0;
}

/* Does any ftrace buffer record events?  Else the sources write all of the file. */
static bool ftrace_events(const struct run *r)
{
	int b;

	for (b = 0; b < r->o->nr_bufs; b++)
		if (r->o->bufs[b].nr_ev)
			return true;
	return false;
}

/*
 * May an ftrace buffer's records show kernel addresses?  Kernel stacks
 * (-O stacktrace), the ftrace system's own events, or a field printed as a
 * kernel symbol (%pS and its kin in the print format).  A recording of
 * system calls with deferred user stacks shows none: its kallsyms (some
 * 5 MB) would only weigh on the file and on every report of it.
 */
static bool ftrace_shows_kaddrs(const struct run *r)
{
	static const char *const sym_fmts[] = { "%pS", "%ps", "%pB", "%pF", "%pf" };
	const struct ust_rec_buffer *b;
	char *text, *fmt;
	bool shows;
	int i, k;
	size_t f;

	for (k = 0; k < r->o->nr_bufs; k++) {
		b = &r->o->bufs[k];
		for (i = 0; i < b->nr_opts; i++)
			if (!strcmp(b->opts[i], "stacktrace"))
				return true;
		for (i = 0; i < b->nr_ev; i++) {
			if (!strcmp(b->ev[i].system, "ftrace"))
				return true;
			text = ust_cap_read_format(b->ev[i].system, b->ev[i].event);
			if (!text)
				return true;	/* cannot tell */
			fmt = strstr(text, "\nprint fmt:");
			shows = !fmt;
			for (f = 0; fmt && f < sizeof(sym_fmts) / sizeof(sym_fmts[0]); f++)
				shows |= strstr(fmt, sym_fmts[f]) != NULL;
			free(text);
			if (shows)
				return true;
		}
	}
	return false;
}

/*
 * Are the sources' kernel addresses the file's only ones?  No ftrace
 * buffer shows any (ftrace_shows_kaddrs()), each source reports every one
 * it writes (perf sampling: ips and callchains), and kallsyms was not
 * asked for whole (--kallsyms).
 */
static bool kaddrs_known(const struct run *r)
{
	const struct ust_rec_source *src;

	if (r->o->kallsyms || ftrace_shows_kaddrs(r))
		return false;
	for (src = r->o->sources; src; src = src->next)
		if (!src->ops->kaddrs_all)
			return false;
	return r->o->sources != NULL || ftrace_events(r);
}

/* The file's kallsyms cut to the sources' kernel addresses, when known. */
static void set_kaddrs(struct run *r)
{
	uint64_t *a, key, v;
	size_t pos = 0, n = 0;

	if (!r->ctx.kaddrs || r->ctx.kaddrs_lost)
		return;
	a = malloc((r->kaddrs.len ? r->kaddrs.len : 1) * sizeof(*a));
	if (!a)
		return;		/* kallsyms whole */
	while (ust_hmap_next(&r->kaddrs, &pos, &key, &v))
		a[n++] = key;
	ust_cap_take_kernel_addrs(r->cap, a, n, !ftrace_events(r));
}

/* The extra producers (perf sampling, lock_held(), --addr-filter).  0 or -1. */
static int start_sources(struct run *r)
{
	struct ust_rec_source *src;
	char err[512];

	r->ctx.o = r->o;
	r->ctx.spool = r->spool;
	r->ctx.maps = r->maps;
	r->ctx.bpfu = r->bpfu;
	r->ctx.child = r->child;
	r->ctx.cookie_id = r->cookie_id;
	r->ctx.stack_id = r->stack_id;
	r->ctx.mapping_id = r->mapping_id;
	r->ctx.flags_id = r->flags_id;
	r->ctx.cap = r->cap;
	if (kaddrs_known(r)) {
		ust_hmap_init(&r->kaddrs);
		r->ctx.kaddrs = &r->kaddrs;
	}
	for (src = r->o->sources; src; src = src->next) {
		if (src->ops->start(src, &r->ctx, err, sizeof(err))) {
			ust_rec_warn(PFX "%s: %s\n", src->ops->name, err);
			return -1;
		}
	}
	return 0;
}

/* Tracing on, then the command runs (or the user is told how to stop).  0 or -1. */
static int go(struct run *r)
{
	int e = 0;

	/* What the main loop waits on: the BPF ring and the sources' buffers. */
	r->ep = wait_set(r, r->o);
	/* Last: its sys_exit program must run after every program giving cookies. */
	if (r->bpfu && ust_bpfu_arm_exit(r->bpfu))
		ust_rec_warn(PFX "BPF: stacks at system call exits unavailable, task_work for all\n");
	ust_cap_on(r->cap);
	r->t0 = now_s();
	if (r->child <= 0) {
		if (!r->o->quiet)
			fprintf(ust_rec_out(r->o), PFX "recording; stop with Ctrl-C (SIGINT) or SIGTERM\n");
		return 0;
	}
	if (write(r->go_fd, "g", 1) != 1)
		return -1;
	close(r->go_fd);
	r->go_fd = -1;
	/* The exec either closes the pipe (success) or reports errno. */
	if (read(r->err_fd, &e, sizeof(e)) == (ssize_t)sizeof(e)) {
		ust_rec_warn(PFX "cannot run %s: %s\n", r->o->cmd[0], strerror(e));
		waitpid(r->child, NULL, 0);
		r->child = -1;
		r->exec_errno = e;
		return -1;
	}
	close(r->err_fd);
	r->err_fd = -1;
	return 0;
}

/* One round's reading: BPF records, the sources, the ftrace buffers.
 * 0, 1 to end the recording, -1 to abort it. */
static int drain(struct run *r, bool *busy)
{
	struct ust_rec_source *src;
	char err[512];

	if (r->bpfu && ust_bpfu_consume(r->bpfu, on_bpf_record, r) < 0)
		return 1;
	note_drops(r);
	*busy = false;
	for (src = r->o->sources; src; src = src->next) {
		int pr = src->ops->poll ? src->ops->poll(src, &r->ctx) : 0;

		if (pr < 0) {
			ust_rec_warn(PFX "%s: reading failed\n", src->ops->name);
			return -1;
		}
		*busy |= pr > 0;
	}
	if (ust_cap_drain(r->cap, err, sizeof(err)) < 0) {
		ust_rec_warn(PFX "%s\n", err);
		return -1;
	}
	return 0;
}

/* Until a signal, or the command's exit.  0, or -1 to abort. */
/*
 * Test aid: USTITCH_TEST_READ_DELAY=MS: the first round waits MS ms before
 * reading anything, as a recorder behind a burst of records (a slow guest)
 * reads a short command's records after it is gone (tests/live/cfi's
 * script test: its stacks must still be whole and named).
 */
static void test_read_delay(void)
{
	const char *v = getenv("USTITCH_TEST_READ_DELAY");
	long ms = v ? strtol(v, NULL, 10) : 0;

	if (ms > 0 && ms <= 10000)
		usleep((useconds_t)ms * 1000);
}

static int poll_loop(struct run *r)
{
	bool busy = false, tty = isatty(fileno(ust_rec_out(r->o))) && !r->o->quiet;
	double last = 0;

	test_read_delay();
	while (!stop_sig) {
		/* Short rounds: the kernel's per-CPU buffers fill fast; shorter
		 * still while a source says its buffers are filling up. */
		int wait_ms = busy ? 2 : 50, d;
		struct epoll_event ev[8];

		if (r->ep >= 0 ? epoll_wait(r->ep, ev, 8, wait_ms) < 0 && errno != EINTR :
				 usleep((useconds_t)wait_ms * 1000) < 0 && errno != EINTR)
			break;
		d = drain(r, &busy);
		if (d)
			return d < 0 ? -1 : 0;
		if (r->child > 0 && waitpid(r->child, &r->status, WNOHANG) == r->child) {
			r->child = -1;
			break;
		}
		if (tty && now_s() - last >= 0.5) {
			show_status(r, r->t0, false);
			last = now_s();
		}
	}
	/* A recorder told to stop (kill) passes it on: waiting for a long
	 * command would not stop it. */
	if (stop_sig && stop_sent && r->child > 0)
		kill(r->child, stop_sig);
	return 0;
}

/* Tracing off, the sources stopped, the last BPF records read. */
static void stop_all(struct run *r)
{
	struct ust_rec_source *src;

	ust_cap_off(r->cap);
	for (src = r->o->sources; src; src = src->next)
		if (src->ops->stop)
			src->ops->stop(src, &r->ctx);
	if (r->bpfu) {
		/* Stacks of the last kernel entries arrive after the events. */
		usleep(20000);
		/* With the stacks still waiting for a table (finished by frame pointers). */
		ust_bpfu_flush(r->bpfu, on_bpf_record, r);
		note_drops(r);
	}
	if (isatty(fileno(ust_rec_out(r->o))) && !r->o->quiet)
		show_status(r, r->t0, true);
}

/*
 * The "ustitch" buffer, the last pages, the summary (just before the file
 * is written: its counts are final), then the file completed.  0 or -1.
 */
static int finish(struct run *r)
{
	struct tally t = { 0 };
	char err[512];
	int ret = -1;

	if (r->spool_err || (r->spooling && write_ustitch_buffer(r))) {
		ust_rec_warn(PFX "writing the BPF records failed: %s\n",
			strerror(r->spool_err ? r->spool_err : errno));
		return -1;
	}
	if (ust_cap_flush(r->cap, err, sizeof(err))) {
		ust_rec_warn(PFX "%s\n", err);
		return -1;
	}
	if (!r->o->quiet) {
		if (take_tally(r, &t)) {
			ust_rec_warn(PFX "out of memory\n");
			goto out;
		}
		summary(r, r->o->output, &t);
		ust_rec_filter_hint(r->o, t.events, ust_rec_out(r->o));
		ust_rec_addrfilter_hint(r->o, ust_rec_out(r->o));
		if (r->o->verbose)
			verbose(r);
	}
	set_kaddrs(r);
	ret = ust_cap_finish(r->cap, err, sizeof(err));
	r->cap = NULL;
	if (ret)
		ust_rec_warn(PFX "%s\n", err);
out:
	free(t.events);
	free(t.lost);
	return ret ? -1 : 0;
}

/* Everything undone; after a failure, no trace is left (ust_cap_abort). */
static void clean_up(struct run *r)
{
	struct ust_rec_opts *o = r->o;
	int b;

	if (r->ep >= 0)
		close(r->ep);
	ust_rec_free_sources(o);
	for (b = 0; b < r->ctx.nr_formats; b++)
		free(r->ctx.formats[b]);
	free(r->ctx.formats);
	if (r->ctx.kaddrs)
		ust_hmap_fini(&r->kaddrs);
	ust_bpfu_close(r->bpfu);
	ust_cap_abort(r->cap);
	ust_rec_spool_free(r->spool);
	ust_rec_maps_free(r->maps);
	if (r->child > 0) {
		/* The command must not outlive a recorder that failed. */
		if (r->go_fd >= 0)
			kill(r->child, SIGKILL);
		waitpid(r->child, &r->status, 0);
	}
	if (r->go_fd >= 0)
		close(r->go_fd);
	if (r->err_fd >= 0)
		close(r->err_fd);
	for (b = 0; r->cb && b < o->nr_bufs; b++)
		free((void *)r->cb[b].events);
	free(r->cb);
}

int ust_rec_run(struct ust_rec_opts *o, bool native, int *cmd_errno)
{
	struct run r = { .o = o, .go_fd = -1, .err_fd = -1, .ep = -1, .child = -1 };
	int ret = -EIO;

	catch_signals();
	remove_stale(&r);
	if (!plan_buffers(&r, native) && !start_command(&r) && !start_capture(&r) &&
	    !start_spool(&r) && !start_sources(&r) && !go(&r) && !poll_loop(&r)) {
		stop_all(&r);
		/* As trace-cmd record: the command's own exit status is not ours. */
		if (!finish(&r))
			ret = 0;
	}
	clean_up(&r);
	/* The command's own exit status is not ours (as trace-cmd record),
	 * but a crash is worth saying; one that never ran gets a shell's. */
	if (!ret && WIFSIGNALED(r.status))
		ust_rec_warn(PFX "%s was killed by signal %d (%s)\n", o->cmd[0],
			WTERMSIG(r.status), strsignal(WTERMSIG(r.status)));
	if (cmd_errno)
		*cmd_errno = r.exec_errno;
	return ret;
}
