// SPDX-License-Identifier: LGPL-2.1
/*
 * ustitch record: the command line, spelled like trace-cmd record's,
 * into a struct ust_rec_opts (ust_rec_validate() then checks it against
 * this kernel).  Nothing here touches tracefs.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/abi.h"
#include "ustitch/rec.h"
#include "rec_cli.h"

#define PFX "ustitch record: "

/* getopt_long codes of the long options without a short one. */
#define OPT_CALL_GRAPH	0x100	/* as perf record's */
#define OPT_ADDR_FILTER	0x1700
#define OPT_UNWIND	0x1800
#define OPT_COMPRESSION	0x1900	/* as trace-cmd record's */
#define OPT_KALLSYMS	0x1a00

static void usage_addr_filter(FILE *out)
{
	fputs("  --addr-filter SPEC  keep only the events and samples of code in an address\n"
	      "                   range, in perf's language (repeatable; ranges add up):\n"
	      "                     filter file:SYMBOL@PATH     the user IP (at kernel entry, or\n"
	      "                       sampled) is in SYMBOL of PATH: any process, any address\n"
	      "                     filter file:OFF[/SIZE]@PATH  the same by file offset\n"
	      "                     filter kernel:SYMBOL|ADDR[/SIZE]  a sample's kernel IP is there\n"
	      "                     start file:SYM@PATH / stop file:SYM@PATH  a task's events\n"
	      "                       are kept from its call of a start until a stop (uprobes;\n"
	      "                       kernel: ranges by kprobes, where the kernel has them)\n"
	      "                   e.g. --addr-filter 'filter file:malloc@/lib/x86_64-linux-gnu/libc.so.6'\n"
	      "                   Filter ranges are ORed; the result is ANDed with each -f.\n"
	      "                   Tracepoint events are recorded through perf + BPF (\"ustitch\"\n"
	      "                   buffer); samples are filtered by BPF on the sampling event.\n",
	      out);
}

static void usage_perf(FILE *out)
{
	fputs("  -e NAME          a perf sampling event: cpu-clock, task-clock, page-faults, ...\n"
	      "                   (a name without ':'; samples go into the \"ustitch\" buffer)\n"
	      "  -F freq          samples per second (default 4000); -c period: every period events\n"
	      "  -g               with kernel and user stacks; user stacks deferred to the return\n"
	      "                   to user space, walked by CFI tables (BPF), else by perf's\n"
	      "                   defer_callchain (ustitch probe says which, and why)\n"
	      "  --call-graph M   defer (the kernel's own deferred callchains: frame pointers),\n"
	      "                   bpf (the BPF unwinder), fp (perf's immediate frame-pointer stacks)\n", out);
}

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
	      "                     userstacktrace_delay  deferred user stacks: the kernel's\n"
	      "                       records (ftrace/user_unwind_*) made by BPF, walking by\n"
	      "                       unwind tables, in a buffer named \"ustitch\"; the kernel's\n"
	      "                       own where BPF cannot, or with --unwind kernel\n"
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
	      "  -v, --verbose    the summary's details (how the stacks were taken, unwind\n"
	      "                   tables, what was lost where, the kernel's refusals)\n"
	      "  --compression ALG  compress the output as trace-cmd record does (trace.dat\n"
	      "                   version 7; ALG: any, none, or one of trace-cmd list -c),\n"
	      "                   by trace-cmd convert once the recording is complete\n"
	      "                   (default: any, when trace-cmd is installed; none writes\n"
	      "                   version 6, uncompressed)\n"
	      "  --kallsyms       keep the whole of /proc/kallsyms in the file (by default only\n"
	      "                   the symbols of the kernel addresses it holds: none when\n"
	      "                   no event shows one, such as system calls with user stacks)\n"
	      "  --unwind cfi|fp|kernel  how user stacks are walked: cfi (default) by BPF,\n"
	      "                   by unwind tables built from each file's .eh_frame, frame\n"
	      "                   pointers where a file has none; fp by frame pointers only\n"
	      "                   (the kernel's own walk where it has deferred stacks);\n"
	      "                   kernel: -O userstacktrace_delay records the kernel's own\n"
	      "                   deferred stacks (a kernel with that ftrace series), as\n"
	      "                   trace-cmd record does (frame pointers only)\n", out);
	usage_addr_filter(out);
	usage_perf(out);
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

/* A library's reason, as a line of ours.  2. */
static int fail_lib(const char *what, const char *err)
{
	fprintf(stderr, PFX "%s%s\n", what, err);
	return 2;
}

static struct ust_rec_buffer *cur_buf(struct ust_rec_opts *o)
{
	return &o->bufs[o->nr_bufs - 1];
}

static int add_buf(struct ust_rec_opts *o, const char *name)
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
static int opt_event(struct ust_rec_opts *o, const char *arg, bool *ftrace)
{
	char *spec = strdup(arg), *colon = strchr(spec, ':');
	int r;

	if (!spec[0] || (colon && (!colon[1] || colon == spec))) {
		free(spec);
		return fail("bad event '%s': expected system:event, system or event%s", arg, "");
	}
	if (!colon && ust_rec_perf_is_event(spec)) {
		/* perf's spelling: a sampling event, not ftrace's. */
		struct ust_rec_source *p = ust_rec_perf_source(o);
		char err[256];

		r = !p || ust_rec_perf_add_event(p, spec, err, sizeof(err)) ? 2 : 0;
		if (p && r)
			fail_lib("", err);
		free(spec);
		return r;
	}
	if (colon) {
		*colon = '\0';
		r = ust_rec_buffer_add_event(cur_buf(o), spec, colon + 1);
	} else {
		/* A bare name: a system, or an event of any system. */
		r = ust_rec_buffer_add_event(cur_buf(o), "", spec);
	}
	free(spec);
	if (r)
		return 2;
	*ftrace = true;
	return 0;
}

/* -f: the filter of the -e just before it. */
static int opt_filter(struct ust_rec_opts *o, const char *arg, bool after_event)
{
	struct ust_rec_buffer *b = cur_buf(o);

	if (!b->nr_ev || !after_event)
		return fail("-f '%s' must follow the -e it filters%s", arg, "");
	if (b->ev[b->nr_ev - 1].filter)
		return fail("a second -f '%s' for the same -e%s", arg, "");
	b->ev[b->nr_ev - 1].filter = strdup(arg);
	return 0;
}

/* -O: an ftrace option of the current buffer; userstacktrace_delay is ours. */
static int opt_option(struct ust_rec_opts *o, const char *arg)
{
	struct ust_rec_buffer *b = cur_buf(o);

	if (!strcmp(arg, UST_ABI_OPT_USERSTACKTRACE_DELAY))
		b->deferred = true;
	else if (!strcmp(arg, "no" UST_ABI_OPT_USERSTACKTRACE_DELAY))
		b->deferred = false;
	else if (add_str(&b->opts, &b->nr_opts, arg))
		return 2;
	return 0;
}

static int opt_buffer_kb(struct ust_rec_opts *o, const char *arg)
{
	char *end;
	long kb = strtol(arg, &end, 10);

	if (*end || kb <= 0)
		return fail("-b '%s': not a positive number of KiB%s", arg, "");
	o->buffer_kb = (size_t)kb;
	return 0;
}

static int opt_pid(struct ust_rec_opts *o, const char *arg)
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
static int opt_buffer(struct ust_rec_opts *o, const char *arg)
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

static int opt_tracer(struct ust_rec_opts *o, const char *arg)
{
	if (!strcmp(arg, "lockheld"))
		o->lockheld = true;
	else if (strcmp(arg, "nop"))
		return fail("-p %s: ustitch record uses no tracer plugin; only -p nop or -p lockheld is accepted%s",
			    arg, "");
	return 0;
}

/* --unwind cfi|fp|kernel: how user stacks are walked, and by whom. */
static int opt_unwind(struct ust_rec_opts *o, const char *arg)
{
	o->unwind_fp = o->unwind_kernel = false;
	if (!strcmp(arg, "fp"))
		o->unwind_fp = true;
	else if (!strcmp(arg, "kernel"))
		o->unwind_kernel = true;
	else if (strcmp(arg, "cfi"))
		return fail("--unwind %s: expected cfi (unwind tables from .eh_frame), fp (frame pointers only) or kernel (the kernel's own deferred stacks)%s",
			    arg, "");
	return 0;
}

/* --addr-filter SPEC: checked now, so that a bad one leaves no trace. */
static int opt_addr_filter(struct ust_rec_opts *o, const char *spec)
{
	char err[2048];

	if (ust_rec_addrfilter_add(o, spec, err, sizeof(err)))
		return fail_lib("--addr-filter: ", err);
	return 0;
}

static int parse_count(const char *opt, const char *arg, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || *end || !v || arg[0] == '-') {
		fprintf(stderr, PFX "%s '%s': not a positive number\n", opt, arg);
		return 2;
	}
	*out = v;
	return 0;
}

/* -F, -c, -g, --call-graph: the perf sampling source's.  0, or 2. */
static int opt_perf(struct ust_rec_opts *o, int opt, const char *arg)
{
	struct ust_rec_source *p = ust_rec_perf_source(o);
	uint64_t n;

	if (!p)
		return 2;
	switch (opt) {
	case 'F':
		if (parse_count("-F", arg, &n))
			return 2;
		ust_rec_perf_set_freq(p, n);
		return 0;
	case 'c':
		if (parse_count("-c", arg, &n))
			return 2;
		ust_rec_perf_set_period(p, n);
		return 0;
	case 'g':
		ust_rec_perf_set_call_graph(p, UST_REC_PERF_CG_DEFAULT);
		return 0;
	}
	if (!strcmp(arg, "defer")) {
		ust_rec_perf_set_call_graph(p, UST_REC_PERF_CG_DEFER);
	} else if (!strcmp(arg, "fp")) {
		ust_rec_perf_set_call_graph(p, UST_REC_PERF_CG_FP);
	} else if (!strcmp(arg, "bpf")) {
		ust_rec_perf_set_call_graph(p, UST_REC_PERF_CG_BPF);
	} else {
		fprintf(stderr, PFX "--call-graph %s: expected defer, fp or bpf%s\n", arg,
			!strncmp(arg, "dwarf", 5) || !strcmp(arg, "lbr") ?
			" (dwarf and lbr are not supported)" : "");
		return 2;
	}
	return 0;
}

/* One option other than -e.  0, or 2 (printed). */
static int opt_one(struct ust_rec_opts *o, int c, const char *arg, bool after_event)
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
	case 'v':
		o->verbose = true;
		return 0;
	case OPT_ADDR_FILTER:
		return opt_addr_filter(o, arg);
	case OPT_UNWIND:
		return opt_unwind(o, arg);
	case OPT_KALLSYMS:
		o->kallsyms = true;
		return 0;
	case 'h':
		rec_usage(stdout);
		exit(0);
	case 'F':
	case 'c':
	case 'g':
	case OPT_CALL_GRAPH:
		return opt_perf(o, c, arg);
	default:
		return 2;
	}
}

/*
 * What getopt_long() could not take, as one line naming it (getopt's own
 * messages are off: they name argv[0], "record", and the usage after them
 * would scroll the line away).  @c is '?' or ':'.  2.
 */
static int bad_option(int c, char **argv, const struct option *longopts)
{
	const char *arg = argv[optind - 1];
	const struct option *lo;
	int len;

	if (!strncmp(arg, "--", 2)) {
		len = (int)strcspn(arg, "=");
		/* getopt_long() takes an unambiguous prefix too. */
		for (lo = longopts; lo->name; lo++)
			if (len > 2 && !strncmp(lo->name, arg + 2, (size_t)len - 2))
				break;
		if (lo->name && c == ':')
			fprintf(stderr, PFX "option '--%s' needs an argument", lo->name);
		else if (lo->name && lo->has_arg == no_argument)
			fprintf(stderr, PFX "option '--%s' takes no argument", lo->name);
		else
			fprintf(stderr, PFX "unrecognized option '%.*s'", len, arg);
	} else if (c == ':') {
		fprintf(stderr, PFX "option '-%c' needs an argument", optopt);
	} else {
		fprintf(stderr, PFX "unrecognized option '-%c'", optopt);
	}
	fputs(" (see ustitch record --help)\n", stderr);
	return 2;
}

/*
 * Every buffer records something.  The main one may hold samples only, or
 * nothing where -B buffers follow (trace-cmd record -B NAME -e ... records
 * that instance alone).
 */
static int check_buffers(struct ust_rec_opts *o)
{
	int b;

	for (b = 0; b < o->nr_bufs; b++)
		if (!o->bufs[b].nr_ev && !(b == 0 && (ust_rec_perf_wanted(o) || o->nr_bufs > 1)))
			return fail("%s%s has no events: give at least one -e",
				    o->bufs[b].name ? "buffer " : "the main buffer",
				    o->bufs[b].name ? o->bufs[b].name : "");
	return 0;
}

int rec_validate(struct ust_rec_opts *o, bool *native_deferred)
{
	char err[2048];

	if (ust_rec_validate(o, native_deferred, err, sizeof(err)))
		return fail_lib("", err);
	return 0;
}

int rec_parse(int argc, char **argv, struct ust_rec_opts *o, const char **compression)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
		{ "addr-filter", required_argument, NULL, OPT_ADDR_FILTER },
		{ "unwind", required_argument, NULL, OPT_UNWIND },
		{ "compression", required_argument, NULL, OPT_COMPRESSION },
		{ "kallsyms", no_argument, NULL, OPT_KALLSYMS },
		{ NULL, 0, NULL, 0 },
	};
	bool last_was_event = false;
	int c, r;

	memset(o, 0, sizeof(*o));
	*compression = NULL;
	o->output = "trace.dat";
	if (add_buf(o, NULL))
		return 2;
	optind = 1;
	opterr = 0;
	/* '+': stop at the command, as trace-cmd record does; ':': a missing
	 * argument is told from an unknown option. */
	while ((c = getopt_long(argc, argv, "+:e:f:O:o:C:b:P:B:p:qvhF:c:g", longopts, NULL)) != -1) {
		bool is_event = false;

		if (c == '?' || c == ':')
			return bad_option(c, argv, longopts);

		if (c == OPT_COMPRESSION) {
			*compression = optarg;
			continue;
		}
		r = c == 'e' ? opt_event(o, optarg, &is_event) : opt_one(o, c, optarg, last_was_event);
		if (r)
			return r;
		last_was_event = is_event;
	}
	if (optind < argc)
		o->cmd = argv + optind;
	return check_buffers(o);
}
