// SPDX-License-Identifier: LGPL-2.1
/*
 * ustitch record: the command line, spelled like trace-cmd record's, and
 * its validation against this kernel.  Everything here only reads tracefs:
 * a bad command line must leave no trace of itself.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

#include "ustitch/abi.h"
#include "ustitch/bpfu.h"
#include "ustitch/probe.h"
#include "ustitch/rec.h"
#include "rec_addrfilter.h"
#include "rec_lockheld.h"
#include "rec_perf.h"

#define PFX "ustitch record: "

void rec_usage(FILE *out)
{
	fputs("usage: ustitch record [options] [--] [command [args...]]\n"
	      "\n"
	      "Records like trace-cmd record into a trace.dat, through a private tracefs\n"
	      "instance (ustitch-<pid>) that is removed again on any exit.  With a command,\n"
	      "records until it exits (following it and its children); without, until\n"
	      "SIGINT or SIGTERM.\n"
	      "\n"
	      "  -e system:event  trace an event (repeatable; globs: -e 'syscalls:sys_enter_*',\n"
	      "                   a whole system: -e sched)\n"
	      "  -f filter        ftrace filter for the preceding -e; with lock_held(LOCK) terms\n"
	      "                   (lock_held_read/_write, LOCK:R/:W, !, &&, ||) the event is\n"
	      "                   recorded through perf with a BPF filter that keeps it only\n"
	      "                   while the current task holds LOCK, e.g.\n"
	      "                   -f 'gfp_flags & 0x400 && lock_held(mmap_lock:W)'\n"
	      "  -O option        set an ftrace option for the current buffer (noOPTION clears):\n"
	      "                     userstacktrace_delay  deferred user stacks: the kernel's own\n"
	      "                       events where it has them, else the same records made by BPF\n"
	      "                       (task_work) in a buffer named \"ustitch\"\n"
	      "                     stacktrace            kernel stacks (ftrace/kernel_stack)\n"
	      "  -o file          output (default: trace.dat)\n"
	      "  -C clock         trace clock (default: local; mono when BPF makes stacks)\n"
	      "  -b kb            per-CPU buffer size in KiB (also per CPU of the BPF ring of\n"
	      "                   deferred stacks)\n"
	      "  -P pid           trace only this process (repeatable)\n"
	      "  -B name          start an extra buffer: the following -e/-f/-O apply to it\n"
	      "  -p tracer        'nop' (the function tracers are not used), or 'lockheld':\n"
	      "                   use lock_held() filters (as trace-cmd's -p plugin flag: it\n"
	      "                   selects the machinery; any lock_held() filter implies it);\n"
	      "                   then some -f must use lock_held()\n"
	      "  -q               quiet: no status line, no summary\n"
	      "  --unwind cfi|fp  how BPF walks user stacks: cfi (default) by unwind tables\n"
	      "                   built from each file's .eh_frame, frame pointers where a\n"
	      "                   file has none; fp by frame pointers only, as the kernel does\n", out);
	rec_af_usage(out);
	rec_perf_usage(out);
	fputs("\n"
	      "Read the result with: trace-cmd report [-O ustitch:lines=1] trace.dat\n", out);
}

static int fail(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, PFX);
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	return 2;
}

static struct rec_buffer *cur_buf(struct rec_opts *o)
{
	return &o->bufs[o->nr_bufs - 1];
}

static int add_buf(struct rec_opts *o, const char *name)
{
	void *n = realloc(o->bufs, (size_t)(o->nr_bufs + 1) * sizeof(*o->bufs));

	if (!n)
		return -1;
	o->bufs = n;
	memset(&o->bufs[o->nr_bufs], 0, sizeof(o->bufs[0]));
	o->bufs[o->nr_bufs].name = name ? strdup(name) : NULL;
	o->nr_bufs++;
	return 0;
}

static int add_event(struct rec_buffer *b, const char *sys, const char *ev)
{
	void *n = realloc(b->ev, (size_t)(b->nr_ev + 1) * sizeof(*b->ev));

	if (!n)
		return -1;
	b->ev = n;
	b->ev[b->nr_ev].system = strdup(sys);
	b->ev[b->nr_ev].event = strdup(ev);
	b->ev[b->nr_ev].filter = NULL;
	b->nr_ev++;
	return 0;
}

static int add_str(char ***arr, int *nr, const char *s)
{
	void *n = realloc(*arr, (size_t)(*nr + 1) * sizeof(char *));

	if (!n)
		return -1;
	*arr = n;
	(*arr)[(*nr)++] = strdup(s);
	return 0;
}

/* -e: an ftrace event pattern for the current buffer, or a perf event
 * (perf's spelling: a name without "system:").  0, or 2. */
static int opt_event(struct rec_opts *o, const char *arg, bool *ftrace)
{
	char *spec = strdup(arg), *colon = strchr(spec, ':');
	int r;

	if (!spec[0] || (colon && (!colon[1] || colon == spec))) {
		free(spec);
		return fail("bad event '%s': expected system:event, system or event%s", arg, "");
	}
	if (!colon && rec_perf_is_event(spec)) {
		/* perf's spelling: a sampling event, not ftrace's. */
		r = rec_perf_add_event(o, spec);
		free(spec);
		return r;
	}
	if (colon) {
		*colon = '\0';
		r = add_event(cur_buf(o), spec, colon + 1);
	} else {
		/* A bare name: a system, or an event of any system. */
		r = add_event(cur_buf(o), "", spec);
	}
	free(spec);
	if (r)
		return 2;
	*ftrace = true;
	return 0;
}

/* -f: the filter of the -e just before it. */
static int opt_filter(struct rec_opts *o, const char *arg, bool after_event)
{
	struct rec_buffer *b = cur_buf(o);

	if (!b->nr_ev || !after_event)
		return fail("-f '%s' must follow the -e it filters%s", arg, "");
	if (b->ev[b->nr_ev - 1].filter)
		return fail("a second -f '%s' for the same -e%s", arg, "");
	b->ev[b->nr_ev - 1].filter = strdup(arg);
	return 0;
}

/* -O: an ftrace option of the current buffer; userstacktrace_delay is ours. */
static int opt_option(struct rec_opts *o, const char *arg)
{
	struct rec_buffer *b = cur_buf(o);

	if (!strcmp(arg, UST_ABI_OPT_USERSTACKTRACE_DELAY))
		b->deferred = true;
	else if (!strcmp(arg, "no" UST_ABI_OPT_USERSTACKTRACE_DELAY))
		b->deferred = false;
	else if (add_str(&b->opts, &b->nr_opts, arg))
		return 2;
	return 0;
}

static int opt_buffer_kb(struct rec_opts *o, const char *arg)
{
	char *end;
	long kb = strtol(arg, &end, 10);

	if (*end || kb <= 0)
		return fail("-b '%s': not a positive number of KiB%s", arg, "");
	o->buffer_kb = (size_t)kb;
	return 0;
}

static int opt_pid(struct rec_opts *o, const char *arg)
{
	char *end;
	long pid = strtol(arg, &end, 10);
	void *n;

	if (*end || pid <= 0)
		return fail("-P '%s': not a process id%s", arg, "");
	if (kill((pid_t)pid, 0) && errno == ESRCH)
		return fail("-P %s: no such process%s", arg, "");
	n = realloc(o->pids, (size_t)(o->nr_pids + 1) * sizeof(pid_t));
	if (!n)
		return 2;
	o->pids = n;
	o->pids[o->nr_pids++] = (pid_t)pid;
	return 0;
}

/* -B: start an extra buffer; the -e/-f/-O after it are its own. */
static int opt_buffer(struct rec_opts *o, const char *arg)
{
	int i;

	if (!arg[0] || strchr(arg, '/') || !strcmp(arg, "ustitch"))
		return fail("-B '%s': not a usable buffer name%s", arg,
			    !strcmp(arg, "ustitch") ? " (\"ustitch\" holds the BPF-made stacks)" : "");
	for (i = 1; i < o->nr_bufs; i++)
		if (!strcmp(o->bufs[i].name, arg))
			return fail("-B %s given twice%s", arg, "");
	return add_buf(o, arg) ? 2 : 0;
}

static int opt_tracer(struct rec_opts *o, const char *arg)
{
	if (!strcmp(arg, "lockheld"))
		o->lockheld = true;
	else if (strcmp(arg, "nop"))
		return fail("-p %s: ustitch record uses no tracer plugin; only -p nop or -p lockheld is accepted%s",
			    arg, "");
	return 0;
}

/* --unwind cfi|fp: how the BPF side walks user stacks. */
static int opt_unwind(struct rec_opts *o, const char *arg)
{
	if (!strcmp(arg, "cfi"))
		o->unwind_fp = false;
	else if (!strcmp(arg, "fp"))
		o->unwind_fp = true;
	else
		return fail("--unwind %s: expected cfi (unwind tables from .eh_frame) or fp (frame pointers only)%s",
			    arg, "");
	return 0;
}

/* One option other than -e.  0, or 2 (printed). */
static int opt_one(struct rec_opts *o, int c, const char *arg, bool after_event)
{
	switch (c) {
	case 'f':
		return opt_filter(o, arg, after_event);
	case 'O':
		return opt_option(o, arg);
	case 'o':
		o->output = arg;
		return 0;
	case 'C':
		o->clock = arg;
		o->clock_given = true;
		return 0;
	case 'b':
		return opt_buffer_kb(o, arg);
	case 'P':
		return opt_pid(o, arg);
	case 'B':
		return opt_buffer(o, arg);
	case 'p':
		return opt_tracer(o, arg);
	case 'q':
		o->quiet = true;
		return 0;
	case REC_AF_OPT:
		return rec_af_option(o, arg) ? 2 : 0;
	case REC_OPT_UNWIND:
		return opt_unwind(o, arg);
	case 'h':
		rec_usage(stdout);
		exit(0);
	case 'F':
	case 'c':
	case 'g':
	case REC_PERF_OPT_CALL_GRAPH:
		return rec_perf_option(o, c, arg) ? 2 : 0;
	default:
		rec_usage(stderr);
		return 2;
	}
}

/* Every buffer records something (the main one may hold samples only). */
static int check_buffers(struct rec_opts *o)
{
	int b;

	for (b = 0; b < o->nr_bufs; b++)
		if (!o->bufs[b].nr_ev && !(b == 0 && rec_perf_wanted(o)))	/* samples only */
			return fail("%s%s has no events: give at least one -e",
				    o->bufs[b].name ? "buffer " : "the main buffer",
				    o->bufs[b].name ? o->bufs[b].name : "");
	return 0;
}

int rec_parse(int argc, char **argv, struct rec_opts *o)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "call-graph", required_argument, NULL, REC_PERF_OPT_CALL_GRAPH },
		{ "addr-filter", required_argument, NULL, REC_AF_OPT },
		{ "unwind", required_argument, NULL, REC_OPT_UNWIND },
		{ NULL, 0, NULL, 0 },
	};
	bool last_was_event = false;
	int c, r;

	memset(o, 0, sizeof(*o));
	o->output = "trace.dat";
	if (add_buf(o, NULL))
		return 2;
	optind = 1;
	/* '+': stop at the command, as trace-cmd record does. */
	while ((c = getopt_long(argc, argv, "+e:f:O:o:C:b:P:B:p:qhF:c:g", longopts, NULL)) != -1) {
		bool is_event = false;

		r = c == 'e' ? opt_event(o, optarg, &is_event) : opt_one(o, c, optarg, last_was_event);
		if (r)
			return r;
		last_was_event = is_event;
	}
	if (optind < argc)
		o->cmd = argv + optind;
	return check_buffers(o);
}

/* ---- validation ------------------------------------------------------ */

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* Expand one pattern into exact events, appended to @out. */
static int expand(const struct rec_event *pat, struct rec_buffer *out)
{
	const char *tdir = tracefs_tracing_dir();
	char path[4096];
	struct dirent *sd;
	DIR *sdir;
	int n = 0;

	snprintf(path, sizeof(path), "%s/events", tdir);
	sdir = opendir(path);
	if (!sdir)
		return -1;
	while ((sd = readdir(sdir))) {
		const char *evpat = pat->event;
		struct dirent *ed;
		DIR *edir;

		if (sd->d_name[0] == '.')
			continue;
		if (pat->system[0]) {
			if (fnmatch(pat->system, sd->d_name, 0))
				continue;
		} else if (!fnmatch(pat->event, sd->d_name, 0)) {
			evpat = "*";	/* "-e sched": the whole system */
		}
		snprintf(path, sizeof(path), "%s/events/%s", tdir, sd->d_name);
		if (!is_dir(path) || !(edir = opendir(path)))
			continue;
		while ((ed = readdir(edir))) {
			char epath[4096 + 512];

			if (ed->d_name[0] == '.' || fnmatch(evpat, ed->d_name, 0))
				continue;
			snprintf(epath, sizeof(epath), "%s/%s/format", path, ed->d_name);
			if (access(epath, R_OK))
				continue;
			if (add_event(out, sd->d_name, ed->d_name))
				break;
			if (pat->filter)
				out->ev[out->nr_ev - 1].filter = strdup(pat->filter);
			n++;
		}
		closedir(edir);
	}
	closedir(sdir);
	return n;
}

static bool option_exists(const char *name)
{
	char path[4096];

	if (!strncmp(name, "no", 2) && strlen(name) > 2) {
		snprintf(path, sizeof(path), "%s/options/%s", tracefs_tracing_dir(), name + 2);
		if (!access(path, F_OK))
			return true;
	}
	snprintf(path, sizeof(path), "%s/options/%s", tracefs_tracing_dir(), name);
	return !access(path, F_OK);
}

static bool clock_exists(const char *clock)
{
	char *text = tracefs_instance_file_read(NULL, "trace_clock", NULL), *tok, *save = NULL;
	bool found = false;

	if (!text)
		return false;
	for (tok = strtok_r(text, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		size_t l = strlen(tok);

		if (tok[0] == '[' && l > 2 && tok[l - 1] == ']') {
			tok[l - 1] = '\0';
			tok++;
		}
		if (!strcmp(tok, clock))
			found = true;
	}
	free(text);
	return found;
}

int rec_validate(struct rec_opts *o, bool *native_deferred)
{
	bool deferred = false;
	int b, i;

	if (!tracefs_tracing_dir() || !is_dir(tracefs_tracing_dir()))
		return fail("tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)%s%s", "", "");
	for (b = 0; b < o->nr_bufs; b++) {
		struct rec_buffer *buf = &o->bufs[b], exp = { 0 };

		for (i = 0; i < buf->nr_ev; i++) {
			int n = expand(&buf->ev[i], &exp);

			if (n <= 0) {
				char pat[512];

				snprintf(pat, sizeof(pat), "%s%s%s", buf->ev[i].system,
					 buf->ev[i].system[0] ? ":" : "", buf->ev[i].event);
				return fail("no event matches '%s' on this kernel%s", pat, "");
			}
		}
		for (i = 0; i < buf->nr_ev; i++) {
			free(buf->ev[i].system);
			free(buf->ev[i].event);
			free(buf->ev[i].filter);
		}
		free(buf->ev);
		buf->ev = exp.ev;
		buf->nr_ev = exp.nr_ev;
		for (i = 0; i < buf->nr_opts; i++)
			if (!option_exists(buf->opts[i]))
				return fail("-O %s: no such ftrace option on this kernel%s", buf->opts[i], "");
		deferred |= buf->deferred;
	}
	/* Events filtered with lock_held() leave ftrace for perf + BPF. */
	if (rec_lockheld_claim(o))
		return 2;
	*native_deferred = false;
	if (deferred) {
		char reason[UST_PROBE_REASON_MAX];

		if (ust_probe_one(UST_PROBE_FTRACE_DEFERRED, reason, sizeof(reason))) {
			*native_deferred = true;
		} else if (!ust_bpfu_built()) {
			return fail("-O userstacktrace_delay: this kernel has no deferred user stacks (%s) and ustitch was built without BPF%s",
				    reason, "");
		} else if (!ust_probe_one(UST_PROBE_BPF_TRACEPOINT, reason, sizeof(reason))) {
			return fail("-O userstacktrace_delay: BPF tracepoint programs are not usable here: %s%s", reason, "");
		} else if (o->clock_given && strcmp(o->clock, "mono")) {
			return fail("-C %s: deferred stacks made by BPF need -C mono (BPF's clock)%s", o->clock, "");
		} else {
			o->clock = "mono";
		}
	}
	if (rec_perf_validate(o))
		return 2;
	if (o->clock && !clock_exists(o->clock))
		return fail("-C %s: no such trace clock on this kernel%s", o->clock, "");
	return 0;
}
