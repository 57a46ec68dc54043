// SPDX-License-Identifier: LGPL-2.1
/*
 * plugin_ustitch: libtraceevent plugin that teaches `trace-cmd report`
 * (and anything else built on libtraceevent) the deferred user stack
 * events of the kernel: ftrace/user_unwind_cookie and
 * ftrace/user_unwind_stack.
 *
 * Right after each event that asked for a user stack (at its cookie line)
 * the plugin prints that stack, stitched by cookie and symbolized.  The
 * stack record itself comes later in the file, so the plugin first scans
 * the same file once (ust_scan).  When it cannot (input on a pipe, a host
 * tool that is not trace-cmd), it prints each stack at its own line with
 * the events that requested it.
 *
 * `trace-cmd report -i a.dat -i b.dat` gives each input its own tep and
 * loads the plugin into each: the state below is per tep, and so per file
 * (its cookies, tasks, (device, inode) numbers, archive).  Which file a tep
 * reads is found while libtracecmd loads it (ust_report_input_opening).
 *
 * All decoding, stitching and symbolizing lives in libustitch; this file
 * only keeps per-tep state and talks to trace_seq.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include "ustitch/grow.h"
#include "ustitch/abi.h"
#include "ustitch/decode.h"
#include "ustitch/fold.h"
#include "ustitch/profiles.h"
#include "ustitch/render.h"
#include "ustitch/report.h"
#include "ustitch/report_opt.h"
#include "ustitch/res_debuginfod.h"
#include "ustitch/resolve.h"
#include "ustitch/scan.h"
#include "ustitch/stack_text.h"
#include "ustitch/stitch.h"
#include "ustitch/sb.h"
#include "ustitch/sym.h"

#define MAX_DIRS	16
#define MAX_CANDIDATES	UST_REPORT_MAX_INPUTS
#define FALLBACK_REQS	8

enum mode { MODE_UNKNOWN, MODE_STITCHED, MODE_FALLBACK };

/* Requests seen so far in fallback mode, by cookie. */
struct seen_req {
	uint64_t ts[FALLBACK_REQS];
	unsigned int nr;
};

/*
 * The file's timestamps as the host shows them: trace-cmd's --ts-offset,
 * --ts2secs and --align-ts move every record of one input (shown = raw *
 * scale + offset), and the first pass has the file's own.  Learnt from the
 * requests printed, so that a time the plugin prints from the first pass
 * reads like trace-cmd's.
 */
struct ts_map {
	unsigned int nr;		/* points seen: 0, 1 (offset known), 2 (scale too) */
	uint64_t raw0, shown0;
	double scale;
};

struct pstate {
	struct pstate *next;
	struct tep_handle *tep;
	struct ust_report_input in;	/* its file, when found at load time */
	bool has_input;
	struct ts_map tsm;
	struct ust_dec_layout lay;
	char lay_err[160];
	enum mode mode;
	char mode_why[256];
	struct ust_scan *scan;		/* owned, MODE_STITCHED */
	int page_size;			/* the trace.dat's, bounds each record; 0: unknown */
	struct ust_stack_text text;	/* stacks' text kept in scan */
	struct ust_res *res;
	struct ust_sym_cache *sym;
	struct ust_render rnd;
	bool stitch;
	struct ust_af mark;
	char mark_err[300];		/* a bad addr_filter, said once */
	char dbgd_err[256];		/* debuginfod wanted but unavailable: said at the end */
	struct ust_sb sb;
	struct ust_hmap seen;		/* cookie -> index into seen_reqs */
	struct seen_req *seen_reqs;
	size_t nr_seen, cap_seen;
	char *dirs_buf[2];
	const char *debug_dirs[MAX_DIRS], *search_dirs[MAX_DIRS];
	int nr_debug_dirs, nr_search_dirs;
};

static struct pstate *states;
static int options_users;
static bool stood_down;		/* a copy loaded later acts: this one is silent */
static int nr_inputs;		/* teps loaded so far: several -i when > 1 */

/*
 * Protected: an older plugin_ustitch.so in the system plugin directory is
 * loaded first (RTLD_GLOBAL) and would otherwise stand in for this array,
 * hiding every option it does not have.
 */
__attribute__((visibility("protected")))
struct tep_plugin_option TEP_PLUGIN_OPTIONS[] = {
	{ .name = "stitch", .plugin_alias = "ustitch", .value = "1",
	  .description = "print each user stack right after the event that requested it (0: at its user_unwind_stack line)" },
	{ .name = "symbols", .plugin_alias = "ustitch", .value = "1",
	  .description = "symbolize frames (0: file offsets and object names only)" },
	{ .name = "lines", .plugin_alias = "ustitch", .value = "0",
	  .description = "add source file:line and inlined frames from DWARF" },
	{ .name = "raw", .plugin_alias = "ustitch", .value = "0",
	  .description = "also print each frame as the kernel records it (offset : inode : major:minor)" },
	{ .name = "max_frames", .plugin_alias = "ustitch", .value = "0",
	  .description = "print at most this many frames per stack (0: all)" },
	{ .name = "debug_dirs", .plugin_alias = "ustitch", .value = "",
	  .description = "colon-separated roots of separate debug files, tried before /usr/lib/debug" },
	{ .name = "search_dirs", .plugin_alias = "ustitch", .value = "",
	  .description = "colon-separated directories searched for the traced binaries (by device and inode)" },
	{ .name = "file", .plugin_alias = "ustitch", .value = "",
	  .description = "the trace.dat being reported, when it cannot be found on the command line" },
	{ .name = "folded", .plugin_alias = "ustitch", .value = "0",
	  .description = "at the end, the samples' stacks folded for flame graphs: 1 prints them, a path writes them there" },
	{ .name = "flamegraph", .plugin_alias = "ustitch", .value = "",
	  .description = "at the end, write the samples' flame graph (an interactive SVG) to this path" },
	{ .name = "flamegraph_icicle", .plugin_alias = "ustitch", .value = "0",
	  .description = "the flame graph upside down: callers at the top" },
	{ .name = "flamegraph_threads", .plugin_alias = "ustitch", .value = "0",
	  .description = "the flame graph's roots per thread (comm-TID), not per command name" },
	{ .name = "pprof", .plugin_alias = "ustitch", .value = "",
	  .description = "at the end, write the samples as a gzipped pprof profile (go tool pprof, Pyroscope, Parca) to this path" },
	{ .name = "weight", .plugin_alias = "ustitch", .value = "",
	  .description = "with pprof: one more sample type, this field of each event with a deferred stack summed (count of sys_enter_write: bytes written)" },
	{ .name = "top", .plugin_alias = "ustitch", .value = "0",
	  .description = "at the end, the N functions with the largest self and total share of the samples, as perf report" },
	{ .name = "addr_filter", .plugin_alias = "ustitch", .value = "",
	  .description = "mark frames in these ranges with =>* (filter|start|stop file:OFF[/SIZE]@PATH, file:SYMBOL@PATH, ...)" },
	{ .name = "archive", .plugin_alias = "ustitch", .value = "",
	  .description = "the trace's archive made by `ustitch archive` (default: TRACE.ustitch/ when it exists)" },
	{ .name = "by_handle", .plugin_alias = "ustitch", .value = "1",
	  .description = "open traced files by (device, inode) with open_by_handle_at (0: do not)" },
	{ .name = "debuginfod", .plugin_alias = "ustitch", .value = "",
	  .description = "fetch missing or stripped files by build-id from DEBUGINFOD_URLS (default: on when it is set; 0: off)" },
	{ .name = "demangle", .plugin_alias = "ustitch", .value = "1",
	  .description = "C++ and Rust names as perf prints them (0: as the symbol table spells them)" },
	{ .name = NULL }
};

const char *TEP_PLUGIN_ALIAS = "ustitch";

enum { OPT_STITCH, OPT_SYMBOLS, OPT_LINES, OPT_RAW, OPT_MAX_FRAMES, OPT_DEBUG_DIRS,
       OPT_SEARCH_DIRS, OPT_FILE, OPT_FOLDED, OPT_FLAMEGRAPH, OPT_FLAMEGRAPH_ICICLE,
       OPT_FLAMEGRAPH_THREADS, OPT_PPROF, OPT_WEIGHT, OPT_TOP, OPT_ADDR_FILTER, OPT_ARCHIVE, OPT_BY_HANDLE,
       OPT_DEBUGINFOD, OPT_DEMANGLE };

#define NR_OPTIONS	(sizeof(TEP_PLUGIN_OPTIONS) / sizeof(TEP_PLUGIN_OPTIONS[0]) - 1)

/*
 * What an option takes, for checking it (lib/report/report_opt.c): those
 * named here; any other is a boolean when its default is 0 or 1, else a
 * text.
 */
static const struct ust_ropt opt_kinds[] = {
	{ .name = "max_frames", .kind = UST_ROPT_COUNT, .takes = "a count, 0 for all" },
	{ .name = "folded", .kind = UST_ROPT_BOOL_OR_TEXT, .takes = "1, 0 or a path" },
	{ .name = "flamegraph", .kind = UST_ROPT_TEXT, .takes = "a path (PATH.svg)" },
	{ .name = "top", .kind = UST_ROPT_COUNT, .takes = "a count of functions" },
	{ .name = "pprof", .kind = UST_ROPT_TEXT, .takes = "a path (PATH.pb.gz)" },
	{ .name = "weight", .kind = UST_ROPT_TEXT, .takes = "a field of the events (count)" },
	{ .name = "debuginfod", .kind = UST_ROPT_BOOL, .takes = "1 or 0" },
};

static const char *opt_defaults[NR_OPTIONS];	/* before any -O was applied */
static char opt_errors[2048];			/* the mistakes, said once */
static bool opt_errors_said;

static int opt_argc;
static char **opt_argv;

/*
 * At dlopen(), before libtraceevent applies any -O to the table: the
 * defaults, and the process's arguments, which glibc hands to the
 * constructors of every object it loads (ust_report_opt_args: the -O
 * values trace-cmd cut off are found through them).
 */
__attribute__((constructor))
static void options_at_load(int argc, char **argv, char **envp)
{
	size_t i;

	(void)envp;
	for (i = 0; i < NR_OPTIONS; i++)
		opt_defaults[i] = TEP_PLUGIN_OPTIONS[i].value;
	opt_argc = argc;
	opt_argv = argv;
}

/*
 * Right after libtraceevent applied the -O options: a boolean given by
 * its name alone turned on, a value an option does not take back to its
 * default, unknown ustitch: names; the mistakes kept to be said once.
 */
static void check_options(void)
{
	struct ust_ropt ro[NR_OPTIONS];
	struct ust_sb msgs;
	static char args[65536];
	bool exact;
	size_t i, k, len = ust_report_opt_args(opt_argc, opt_argv, args, sizeof(args), &exact);

	for (i = 0; i < NR_OPTIONS; i++) {
		const char *def = opt_defaults[i] ? opt_defaults[i] : "";

		ro[i] = (struct ust_ropt){ .name = TEP_PLUGIN_OPTIONS[i].name, .def = def,
					   .value = TEP_PLUGIN_OPTIONS[i].value,
					   .kind = strcmp(def, "0") && strcmp(def, "1") ? UST_ROPT_TEXT : UST_ROPT_BOOL,
					   .takes = strcmp(def, "0") && strcmp(def, "1") ? "a text" : "1 or 0" };
		for (k = 0; k < sizeof(opt_kinds) / sizeof(opt_kinds[0]); k++)
			if (!strcmp(opt_kinds[k].name, ro[i].name)) {
				ro[i].kind = opt_kinds[k].kind;
				ro[i].takes = opt_kinds[k].takes;
			}
	}
	ust_sb_init(&msgs);
	if (ust_report_opt_check(TEP_PLUGIN_ALIAS, args, len, exact, ro, (int)NR_OPTIONS, &msgs) &&
	    !opt_errors[0])
		snprintf(opt_errors, sizeof(opt_errors), "%s", ust_sb_str(&msgs));
	ust_sb_fini(&msgs);
	for (i = 0; i < NR_OPTIONS; i++)
		TEP_PLUGIN_OPTIONS[i].value = ro[i].value;
}

/* On stderr, once per process, by the copy that acts. */
static void say_option_errors(void)
{
	if (opt_errors_said || stood_down || !opt_errors[0])
		return;
	opt_errors_said = true;
	fflush(stdout);
	fputs(opt_errors, stderr);
}

static const char *opt_str(int i)
{
	const char *v = TEP_PLUGIN_OPTIONS[i].value;

	return v ? v : "";
}

static bool opt_bool(int i)
{
	const char *v = opt_str(i);

	return strcmp(v, "0") && strcmp(v, "") && strcasecmp(v, "false") && strcasecmp(v, "no") &&
	       strcasecmp(v, "off");
}

static int split_dirs(char *s, const char **out, int max)
{
	int n = 0;
	char *save = NULL, *tok;

	for (tok = strtok_r(s, ":", &save); tok && n < max; tok = strtok_r(NULL, ":", &save))
		out[n++] = tok;
	return n;
}

static void put_ts(struct trace_seq *s, unsigned long long ts)
{
	trace_seq_printf(s, "%llu.%06llu", ts / 1000000000ULL, (ts % 1000000000ULL) / 1000ULL);
}

static void ts_learn(struct ts_map *m, uint64_t raw, uint64_t shown)
{
	if (!m->nr) {
		m->raw0 = raw;
		m->shown0 = shown;
		m->scale = 1.0;
		m->nr = 1;
	} else if (m->nr == 1 && raw != m->raw0) {
		m->scale = ((double)shown - (double)m->shown0) / ((double)raw - (double)m->raw0);
		m->nr = 2;
	}
}

static uint64_t ts_shown(const struct ts_map *m, uint64_t raw)
{
	double d;

	if (!m->nr)
		return raw;
	if (m->nr == 1 || m->scale == 1.0)	/* exact in integers: an offset only */
		return m->shown0 + (raw - m->raw0);
	d = (double)m->shown0 + ((double)raw - (double)m->raw0) * m->scale;
	return d < 0 ? 0 : (uint64_t)(d + 0.5);
}

/* ---- per-tep state ---------------------------------------------------- */

static struct pstate *state_of(struct tep_handle *tep)
{
	struct pstate *p;

	for (p = states; p; p = p->next)
		if (p->tep == tep)
			return p;
	return NULL;
}

static void state_free(struct pstate *p)
{
	if (p->scan) {
		ust_scan_fini(p->scan);
		free(p->scan);
	}
	ust_render_fini(&p->rnd);
	ust_res_free(p->res);
	ust_sym_cache_free(p->sym);
	ust_af_free(&p->mark);
	ust_sb_fini(&p->sb);
	ust_stack_text_fini(&p->text);
	ust_hmap_fini(&p->seen);
	free(p->seen_reqs);
	free(p->dirs_buf[0]);
	free(p->dirs_buf[1]);
	free(p);
}

/*
 * Rendered text kept per distinct stack, up to this much in all (the
 * stacks printed lately stay: lib/report/stack_text.c).  The tests set a
 * budget of a few stacks (USTITCH_RENDERED_BUDGET, bytes) to print through
 * the evictions.
 */
#define RENDERED_BUDGET	(64UL << 20)

static size_t rendered_budget(void)
{
	const char *v = getenv("USTITCH_RENDERED_BUDGET");

	return v && v[0] ? strtoul(v, NULL, 0) : RENDERED_BUDGET;
}

/* Options are read when the first record needs them: trace-cmd applies
 * -O options to the plugin before any record is printed. */
static void setup_render(struct pstate *p)
{
	struct ust_res_opts ro = { 0 };
	struct ust_sym_opts so = { 0 };
	long maxf;

	say_option_errors();
	p->stitch = opt_bool(OPT_STITCH);
	p->rnd.opts.symbols = opt_bool(OPT_SYMBOLS);
	p->rnd.opts.lines = opt_bool(OPT_LINES);
	p->rnd.opts.raw = opt_bool(OPT_RAW);
	maxf = strtol(opt_str(OPT_MAX_FRAMES), NULL, 10);	/* checked: a decimal count */
	p->rnd.opts.max_frames = maxf > 0 ? (unsigned int)maxf : 0;
	p->dirs_buf[0] = strdup(opt_str(OPT_DEBUG_DIRS));
	p->dirs_buf[1] = strdup(opt_str(OPT_SEARCH_DIRS));
	if (p->dirs_buf[0])
		p->nr_debug_dirs = split_dirs(p->dirs_buf[0], p->debug_dirs, MAX_DIRS);
	if (p->dirs_buf[1])
		p->nr_search_dirs = split_dirs(p->dirs_buf[1], p->search_dirs, MAX_DIRS);
	so.debug_dirs = p->debug_dirs;
	so.nr_debug_dirs = p->nr_debug_dirs;
	so.raw_names = !opt_bool(OPT_DEMANGLE);
	ro.extra_dirs = p->search_dirs;
	ro.nr_extra_dirs = p->nr_search_dirs;
	ro.no_handle = !opt_bool(OPT_BY_HANDLE);
	p->res = ust_res_new(&ro);
	/* debuginfod: as perf and gdb, on when DEBUGINFOD_URLS names servers. */
	if (p->res && (opt_str(OPT_DEBUGINFOD)[0] ? opt_bool(OPT_DEBUGINFOD) :
		       ust_res_debuginfod_wanted())) {
		if (ust_res_set_debuginfod(p->res, true, p->dbgd_err, sizeof(p->dbgd_err)) == 0) {
			so.fetch_debug = ust_res_debuginfod_fetch_debug;
			so.fetch_ctx = p->res;
		}
	}
	p->sym = ust_sym_cache_new(&so);
	p->rnd.res = p->res;
	p->rnd.sym = p->sym;
	if (opt_str(OPT_ADDR_FILTER)[0]) {
		char err[256];

		if (ust_af_parse(opt_str(OPT_ADDR_FILTER), NULL, &p->mark, err, sizeof(err)))
			snprintf(p->mark_err, sizeof(p->mark_err), "[ustitch: -O ustitch:addr_filter: %s]", err);
		else
			p->rnd.mark = &p->mark;
	}
}

/* A bad option is said once, on the first line that would have used it. */
static void put_option_errors(struct pstate *p, struct trace_seq *s)
{
	if (!p->mark_err[0])
		return;
	trace_seq_printf(s, "\n%s", p->mark_err);
	p->mark_err[0] = '\0';
}

/*
 * The trace files this tep may read: its own input when the loader found
 * it, else -O ustitch:file or the command line's (lib/report/report.c).
 */
static int candidates(const struct pstate *p, char out[][UST_REPORT_PATH_MAX], int max)
{
	if (p->has_input && max > 0) {
		snprintf(out[0], UST_REPORT_PATH_MAX, "%s", p->in.path);
		return 1;
	}
	return ust_report_candidates(opt_str(OPT_FILE), out, max);
}

/*
 * The page size that bounds each record until (or without) a first pass:
 * the first candidate's, the file trace-cmd most likely reads; 0: none.
 */
static int candidate_page_size(const struct pstate *p)
{
	char cand[1][UST_REPORT_PATH_MAX];
	int ps = candidates(p, cand, 1) > 0 ? ust_scan_page_size(cand[0]) : 0;

	return ps > 0 ? ps : 0;
}

/* The file a message is about, when there are several: "NAME: ". */
static const char *file_prefix(const struct pstate *p, char *buf, size_t size)
{
	buf[0] = '\0';
	if (nr_inputs > 1 && p->has_input)
		snprintf(buf, size, "%s: ", p->in.path);
	return buf;
}

/* The trace is known: its archive's debug files join the symbolizer's roots
 * (no frame was symbolized yet). */
static void use_trace(struct pstate *p, const struct ust_scan *sc, const char *path)
{
	struct ust_sym_opts so = { 0 };
	struct ust_sym_cache *sym;
	const char *root;
	char err[512];

	ust_report_setup(p->res, sc, path, opt_str(OPT_ARCHIVE), err, sizeof(err));
	root = ust_res_debug_root(p->res);
	if (!root || p->nr_debug_dirs >= MAX_DIRS)
		return;
	p->debug_dirs[p->nr_debug_dirs++] = root;
	so.debug_dirs = p->debug_dirs;
	so.nr_debug_dirs = p->nr_debug_dirs;
	so.raw_names = !opt_bool(OPT_DEMANGLE);
	if (ust_res_debuginfod_on(p->res)) {
		so.fetch_debug = ust_res_debuginfod_fetch_debug;
		so.fetch_ctx = p->res;
	}
	sym = ust_sym_cache_new(&so);
	if (!sym)
		return;
	ust_sym_cache_free(p->sym);
	p->sym = sym;
	p->rnd.sym = sym;
}

/* -O ustitch:top=N: N, or 0. */
static long top_wanted(void)
{
	return strtol(opt_str(OPT_TOP), NULL, 10);	/* checked: a decimal count */
}

/* -O ustitch:folded=1|PATH asked for: the first pass collects the samples. */
static bool folded_wanted(void)
{
	const char *dest = opt_str(OPT_FOLDED), *svg = opt_str(OPT_FLAMEGRAPH);

	return (dest[0] && strcmp(dest, "0")) || svg[0] || top_wanted() > 0 || opt_str(OPT_PPROF)[0];
}

static bool scan_matches(const struct ust_scan *sc, const struct ust_dec_layout *lay,
			 struct tep_record *rec, int id)
{
	char what[160];
	uint64_t cookie;

	if (id == lay->cookie_id) {
		const struct ust_stitch_rq *r = ust_stitch_req_at(&sc->st, rec->offset);
		int size = ust_dec_rec_size(rec, sc->page_size, what, sizeof(what));

		return r && size >= 0 && !ust_dec_cookie(lay, rec->data, size, &cookie, what, sizeof(what)) &&
		       r->cookie == cookie;
	}
	return ust_stitch_stack_at(&sc->st, rec->offset) != NULL;
}

/* USTITCH_DEBUG: the process's CPU time, which other processes on the
 * machine do not inflate as they do the wall time. */
static double cpu_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void choose_mode(struct pstate *p, struct tep_record *rec, int id)
{
	char cand[MAX_CANDIDATES][UST_REPORT_PATH_MAX];
	int i, n;

	p->mode = MODE_FALLBACK;
	n = candidates(p, cand, MAX_CANDIDATES);
	if (!p->stitch) {
		snprintf(p->mode_why, sizeof(p->mode_why), "stitching off");
		if (n > 0)
			use_trace(p, NULL, cand[0]);
		return;
	}
	snprintf(p->mode_why, sizeof(p->mode_why), "no trace.dat on the command line to scan ahead (use -O ustitch:file=PATH)");
	for (i = 0; i < n; i++) {
		struct ust_scan *sc = calloc(1, sizeof(*sc));
		double cpu0 = cpu_seconds();
		char err[256];

		if (!sc)
			return;
		const struct ust_scan_opts so = {
			.flags = UST_SCAN_PROGRESS | (folded_wanted() ? UST_SCAN_SAMPLES : 0),
			.weight = opt_str(OPT_PPROF)[0] ? opt_str(OPT_WEIGHT) : NULL,
		};

		if (ust_scan_file_opts(sc, cand[i], &so, err, sizeof(err))) {
			snprintf(p->mode_why, sizeof(p->mode_why), "%s", err);
			free(sc);
			continue;
		}
		if (p->has_input && (sc->dev != p->in.dev || sc->ino != p->in.ino)) {
			snprintf(p->mode_why, sizeof(p->mode_why), "%.200s is no longer the file being reported", cand[i]);
			ust_scan_fini(sc);
			free(sc);
			continue;
		}
		if (!scan_matches(sc, &p->lay, rec, id)) {
			snprintf(p->mode_why, sizeof(p->mode_why), "%.200s does not hold this record", cand[i]);
			ust_scan_fini(sc);
			free(sc);
			continue;
		}
		p->scan = sc;
		p->mode = MODE_STITCHED;
		p->page_size = sc->page_size;
		use_trace(p, sc, NULL);
		if (getenv("USTITCH_DEBUG"))
			fprintf(stderr, "ustitch: first pass over %s: %lu records, %lu requests, %lu stacks in %.3f s (%.3f s of CPU)\n",
				sc->path, sc->records, sc->stats.requests, sc->stats.stacks, sc->seconds,
				cpu_seconds() - cpu0);
		return;
	}
}

/* @id < 0: a record that cannot tell which file this is (no mode choice). */
static struct pstate *prepare(struct tep_handle *tep, struct tep_record *rec, int id)
{
	struct pstate *p = state_of(tep);

	if (!p)
		return NULL;
	if (!p->res && !p->sym) {
		ust_dec_layout_init(&p->lay, tep, p->lay_err, sizeof(p->lay_err));
		setup_render(p);
		p->page_size = candidate_page_size(p);
	}
	if (p->mode == MODE_UNKNOWN && id >= 0)
		choose_mode(p, rec, id);
	return p;
}

/* ---- fallback bookkeeping ------------------------------------------- */

static void seen_add(struct pstate *p, uint64_t cookie, uint64_t ts)
{
	struct seen_req *r;
	uint64_t idx;

	if (!ust_hmap_get(&p->seen, cookie, &idx)) {
		if (p->nr_seen == p->cap_seen) {
			void *n = ust_grow(p->seen_reqs, &p->cap_seen, p->nr_seen + 1, sizeof(*p->seen_reqs), 64);

			if (!n)
				return;
			p->seen_reqs = n;
		}
		idx = p->nr_seen++;
		memset(&p->seen_reqs[idx], 0, sizeof(p->seen_reqs[idx]));
		if (ust_hmap_put(&p->seen, cookie, idx)) {
			p->nr_seen--;
			return;
		}
	}
	r = &p->seen_reqs[idx];
	if (r->nr < FALLBACK_REQS)
		r->ts[r->nr] = ts;
	r->nr++;
}

/* ---- handlers --------------------------------------------------------- */

/* " <user stack unwind, N frames[; how it was taken][, tail]>" */
static void put_header(struct pstate *p, struct trace_seq *s, unsigned int nr, uint32_t flags,
		       const char *tail)
{
	ust_sb_reset(&p->sb);
	ust_render_stack_flags(flags, &p->sb);
	trace_seq_printf(s, " <user stack unwind, %u frame%s%s%s>", nr, nr == 1 ? "" : "s",
			 ust_sb_str(&p->sb), tail);
}

static void put_frames(struct pstate *p, struct trace_seq *s, struct ust_stitch_stack *st)
{
	if (!st->nr)
		trace_seq_puts(s, "\n=> (no user frames)");
	else
		trace_seq_puts(s, ust_stack_text_get(&p->text, &p->scan->st, st->content, &p->rnd));
}

static int cookie_handler(struct trace_seq *s, struct tep_record *rec,
			  struct tep_event *ev, void *ctx)
{
	struct pstate *p = prepare(ev->tep, rec, ev->id);
	const struct ust_stitch_stack *bad;
	const struct ust_stitch_rq *req;
	struct ust_stitch_stack *st;
	char what[160];
	uint64_t cookie;
	int size;

	(void)ctx;
	if (!p)
		return 0;
	size = ust_dec_rec_size(rec, p->page_size, what, sizeof(what));
	if (size < 0 || ust_dec_cookie(&p->lay, rec->data, size, &cookie, what, sizeof(what))) {
		trace_seq_printf(s, "[ustitch: %s in user_unwind_cookie at ", what);
		put_ts(s, rec->ts);
		trace_seq_puts(s, "]");
		return 0;
	}
	trace_seq_printf(s, "cookie=%" PRIx64, cookie);
	if (!ust_abi_cookie_valid(cookie))
		trace_seq_puts(s, " [ustitch: invalid cookie (lowest bit clear, and no CPU + 1 in the low word)]");

	if (p->mode != MODE_STITCHED) {
		seen_add(p, cookie, rec->ts);
		trace_seq_puts(s, " (user stack printed at its user_unwind_stack line)");
		return 0;
	}
	req = ust_stitch_req_at(&p->scan->st, rec->offset);
	if (!req || req->cookie != cookie) {
		trace_seq_puts(s, " [ustitch: record not found in the first pass]");
		return 0;
	}
	ts_learn(&p->tsm, req->ts, rec->ts);
	st = ust_stitch_req_stack(&p->scan->st, req);
	if (!st && (bad = ust_stitch_bad_for(&p->scan->st, cookie))) {
		trace_seq_printf(s, "\n[ustitch: user stack for cookie %" PRIx64 " is unusable: %s in user_unwind_stack at ",
				 cookie, bad->bad);
		put_ts(s, ts_shown(&p->tsm, bad->ts));
		trace_seq_puts(s, "]");
		return 0;
	}
	if (!st) {
		trace_seq_printf(s, "\n[ustitch: user stack for cookie %" PRIx64 " never arrived: %s]",
				 cookie, ust_stitch_lost_after(&p->scan->st, req->ts) ?
				 "events were lost after it" :
				 "the trace ended before the task returned to user space");
		return 0;
	}
	if (req->req_pid >= 0 && st->pid != req->req_pid) {
		trace_seq_printf(s, "\n[ustitch: stack for cookie %" PRIx64 " belongs to task %d, not to the requesting task %d: not shown]",
				 cookie, st->pid, req->req_pid);
		return 0;
	}
	put_header(p, s, st->nr, st->flags, "");
	put_option_errors(p, s);
	put_frames(p, s, st);
	return 0;
}

static void put_bad_stack(struct trace_seq *s, const char *what, unsigned long long ts)
{
	trace_seq_printf(s, "[ustitch: %s in user_unwind_stack at ", what);
	put_ts(s, ts);
	trace_seq_puts(s, "]");
}

/* A stack the first pass decoded and stitched: printed from its frames. */
static void put_scanned_stack(struct pstate *p, struct trace_seq *s, struct ust_stitch_stack *st)
{
	trace_seq_printf(s, "cookie=%" PRIx64, st->cookie);
	if (st->nr_req) {
		char tail[64];

		/* Already shown at its requests: say so, do not repeat. */
		snprintf(tail, sizeof(tail), ", shown at %u event%s", st->nr_req,
			 st->nr_req == 1 ? "" : "s");
		put_header(p, s, st->nr, st->flags, tail);
		return;
	}
	put_header(p, s, st->nr, st->flags, "");
	if (st->nr_foreign)
		trace_seq_printf(s, "\n[ustitch: cookie %" PRIx64 " was requested only by another task's events: not stitched]",
				 st->cookie);
	else
		trace_seq_printf(s, "\n[ustitch: no event in this trace requested cookie %" PRIx64 "]", st->cookie);
	put_frames(p, s, st);
}

/* Without a first pass (or a record it did not see): decoded here. */
static void put_decoded_stack(struct pstate *p, struct trace_seq *s, struct tep_record *rec)
{
	struct ust_dec_stack ds;
	char what[160];
	int size = ust_dec_rec_size(rec, p->page_size, what, sizeof(what));

	if (size < 0 || ust_dec_stack(&p->lay, rec->data, size, &ds, what, sizeof(what))) {
		put_bad_stack(s, what, rec->ts);
		return;
	}
	trace_seq_printf(s, "cookie=%" PRIx64, ds.cookie);
	if (p->mode == MODE_STITCHED) {
		put_header(p, s, ds.nr, 0, "");
		trace_seq_printf(s, "\n[ustitch: no event in this trace requested cookie %" PRIx64 "]", ds.cookie);
	} else {
		uint64_t idx;

		trace_seq_printf(s, " <user stack unwind, %u frame%s>", ds.nr, ds.nr == 1 ? "" : "s");
		if (ust_hmap_get(&p->seen, ds.cookie, &idx)) {
			const struct seen_req *r = &p->seen_reqs[idx];
			unsigned int i;

			trace_seq_printf(s, " requested by %u event%s at", r->nr, r->nr == 1 ? "" : "s");
			for (i = 0; i < r->nr && i < FALLBACK_REQS; i++) {
				trace_seq_puts(s, " ");
				put_ts(s, r->ts[i]);
			}
			if (r->nr > FALLBACK_REQS)
				trace_seq_puts(s, " ...");
		} else {
			trace_seq_printf(s, "\n[ustitch: no event in this trace requested cookie %" PRIx64 "]", ds.cookie);
		}
	}
	ust_sb_reset(&p->sb);
	if (!ds.nr) {
		ust_sb_puts(&p->sb, "\n=> (no user frames)");
	} else {
		struct ust_dec_frame *f = malloc(ds.nr * sizeof(*f));
		unsigned int i;

		if (!f)
			return;
		for (i = 0; i < ds.nr; i++)
			ust_dec_frame_at(&ds, i, &f[i]);
		ust_render_frames(&p->rnd, f, ds.nr, p->lay.has_files, &p->sb);
		free(f);
	}
	trace_seq_puts(s, ust_sb_str(&p->sb));
}

static int stack_handler(struct trace_seq *s, struct tep_record *rec,
			 struct tep_event *ev, void *ctx)
{
	struct pstate *p = prepare(ev->tep, rec, ev->id);
	struct ust_stitch_stack *st = NULL;

	(void)ctx;
	if (!p)
		return 0;
	/* The first pass decoded this very record (the file offset is its identity). */
	if (p->mode == MODE_STITCHED)
		st = ust_stitch_stack_at(&p->scan->st, rec->offset);
	if (st)
		ts_learn(&p->tsm, st->ts, rec->ts);
	if (st && st->bad)
		put_bad_stack(s, st->bad, rec->ts);
	else if (st)
		put_scanned_stack(p, s, st);
	else
		put_decoded_stack(p, s, rec);
	return 0;
}

/* Mapping records: shown with their build-id, and fed to the resolver so
 * that printing at the stack line (no first pass) resolves them too. */
static int mapping_handler(struct trace_seq *s, struct tep_record *rec,
			   struct tep_event *ev, void *ctx)
{
	struct pstate *p = prepare(ev->tep, rec, -1);
	struct ust_dec_mapping m;
	char what[160];
	size_t i;
	int size;

	(void)ctx;
	if (!p)
		return 0;
	size = ust_dec_rec_size(rec, p->page_size, what, sizeof(what));
	if (size < 0 || ust_dec_mapping(&p->lay, rec->data, size, &m, what, sizeof(what))) {
		trace_seq_printf(s, "[ustitch: %s in user_mapping at ", what);
		put_ts(s, rec->ts);
		trace_seq_puts(s, "]");
		return 0;
	}
	trace_seq_printf(s, "dev=%u:%u ino=%" PRIu64 " build_id=", UST_ABI_KDEV_MAJOR(m.kdev),
			 UST_ABI_KDEV_MINOR(m.kdev), m.ino);
	for (i = 0; i < m.build_id_len; i++)
		trace_seq_printf(s, "%02x", m.build_id[i]);
	if (!m.build_id_len)
		trace_seq_puts(s, "none");
	trace_seq_printf(s, " path=%s", m.path);
	if (p->mode != MODE_STITCHED)	/* else the first pass fed them all */
		ust_res_add_mapping(p->res, m.kdev, m.ino, m.path, m.build_id, m.build_id_len);
	return 0;
}

/* Which input this tep is for: not one an earlier tep already has. */
static void find_input(struct pstate *p)
{
	int skip[UST_REPORT_MAX_INPUTS], n = 0;
	struct pstate *q;

	for (q = states; q && n < UST_REPORT_MAX_INPUTS; q = q->next)
		if (q->has_input)
			skip[n++] = q->in.fd;
	p->has_input = !ust_report_input_opening(&p->in, skip, n);
}

static void unregister_handlers(struct tep_handle *tep)
{
	tep_unregister_event_handler(tep, -1, UST_ABI_SYSTEM_FTRACE,
				     UST_ABI_EV_UNWIND_COOKIE, cookie_handler, NULL);
	tep_unregister_event_handler(tep, -1, UST_ABI_SYSTEM_FTRACE,
				     UST_ABI_EV_UNWIND_STACK, stack_handler, NULL);
	tep_unregister_event_handler(tep, -1, UST_ABI_SYSTEM_USTITCH,
				     UST_ABI_EV_USER_MAPPING, mapping_handler, NULL);
}

/*
 * Two copies of this plugin in one process (one installed in the system
 * directory, a build's named by $TRACEEVENT_PLUGIN_DIR): libtraceevent
 * loads both, system directory first, and lets later directories override
 * earlier ones.  So the copy loaded last acts and every earlier one stands
 * down: no handler, no end-of-report output.  The copies find each other
 * through the first one loaded (RTLD_GLOBAL makes its symbol the one every
 * copy's dlsym(RTLD_DEFAULT) sees), which keeps the chain of stand-downs.
 */
typedef void (*ust_stand_down_fn)(void);

static void stand_down(void)
{
	struct pstate *p;

	stood_down = true;
	for (p = states; p; p = p->next)
		unregister_handlers(p->tep);
}

__attribute__((visibility("protected")))
void ustitch_plugin_acting(ust_stand_down_fn newest)
{
	static ust_stand_down_fn acting;

	if (acting && acting != newest)
		acting();
	acting = newest;
}

/*
 * ustitch report names the copy that must act in $USTITCH_PLUGIN (the one
 * beside it, or installed with it): whichever loads last, every other
 * copy stands down at once and claims nothing.
 */
static bool named_elsewhere(void)
{
	const char *want = getenv("USTITCH_PLUGIN");
	struct stat a, b;
	Dl_info self;

	if (!want || !want[0] || !dladdr((void *)named_elsewhere, &self) || !self.dli_fname)
		return false;
	if (stat(want, &a) || stat(self.dli_fname, &b))
		return false;
	return a.st_dev != b.st_dev || a.st_ino != b.st_ino;
}

/* Act, making the copy that acted stand down; false: this copy stands down. */
static bool claim_acting(void)
{
	void (*first)(ust_stand_down_fn) =
		(void (*)(ust_stand_down_fn))dlsym(RTLD_DEFAULT, "ustitch_plugin_acting");

	if (named_elsewhere()) {
		stood_down = true;
		return false;
	}
	(first ? first : ustitch_plugin_acting)(stand_down);
	return true;
}

/*
 * Plugins are loaded before the file's event formats are read, so the
 * handlers are registered by name (libtraceevent binds them when the
 * formats arrive) and the layout is resolved at the first record.
 */
int TEP_PLUGIN_LOADER(struct tep_handle *tep)
{
	struct pstate *p;

	if (stood_down || !claim_acting())
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -1;
	p->tep = tep;
	find_input(p);
	nr_inputs++;
	ust_sb_init(&p->sb);
	ust_stack_text_init(&p->text, rendered_budget());
	ust_hmap_init(&p->seen);
	if (options_users++ == 0) {
		tep_plugin_add_options("ustitch", TEP_PLUGIN_OPTIONS);
		check_options();
	}
	p->next = states;
	states = p;
	tep_register_event_handler(tep, -1, UST_ABI_SYSTEM_FTRACE, UST_ABI_EV_UNWIND_COOKIE,
				   cookie_handler, NULL);
	tep_register_event_handler(tep, -1, UST_ABI_SYSTEM_FTRACE, UST_ABI_EV_UNWIND_STACK,
				   stack_handler, NULL);
	tep_register_event_handler(tep, -1, UST_ABI_SYSTEM_USTITCH, UST_ABI_EV_USER_MAPPING,
				   mapping_handler, NULL);
	return 0;
}

/* -O ustitch:folded=1|PATH: after the last record (trace-cmd unloads the
 * plugin when it closes the file, after the report). */
static void fold_at_end(struct pstate *p)
{
	const char *dest = opt_str(OPT_FOLDED), *svg = opt_str(OPT_FLAMEGRAPH);
	struct ust_fold_names names = { p->res, p->sym };
	char cand[MAX_CANDIDATES][UST_REPORT_PATH_MAX];

	if (!folded_wanted())
		return;
	if (!p->scan && candidates(p, cand, MAX_CANDIDATES) < 1) {
		fprintf(stderr, "ustitch: %s: no trace.dat on the command line (use -O ustitch:file=PATH)\n",
			svg[0] ? "flame graph" : "folded stacks");
		return;
	}
	if (nr_inputs > 1 && p->has_input) {	/* one block per input: say whose */
		fflush(stdout);
		printf("# ustitch: %s\n", p->in.path);
	}
	struct ust_profiles_opts po = {
		.folded = dest[0] && strcmp(dest, "0") ? dest : NULL,
		.flamegraph = svg[0] ? svg : NULL,
		.icicle = opt_bool(OPT_FLAMEGRAPH_ICICLE),
		.per_thread = opt_bool(OPT_FLAMEGRAPH_THREADS),
		.pprof = opt_str(OPT_PPROF)[0] ? opt_str(OPT_PPROF) : NULL,
		.lines = opt_bool(OPT_LINES),
		.weight = opt_str(OPT_WEIGHT)[0] ? opt_str(OPT_WEIGHT) : NULL,
		.top = (unsigned int)(top_wanted() > 100000 ? 100000 : top_wanted() > 0 ? top_wanted() : 0),
		.subtitle = p->scan ? p->scan->path : cand[0],
	};

	ust_profiles_report(&po, po.subtitle, p->scan, &names);
}

/* Does any other input have user stack records?  Then this one's lack is news. */
static bool others_have_stacks(const struct pstate *p)
{
	const struct pstate *q;

	for (q = states; q; q = q->next)
		if (q != p && q->mode != MODE_UNKNOWN)
			return true;
	return false;
}

/*
 * What is said once per input, on stderr after the report: the resolver's
 * summary (missing capability, uncertain files), why its stacks could not
 * be stitched, and, among several inputs, one without any user stack.
 * Each line names the file when there are several.
 */
static void say_at_end(struct pstate *p)
{
	char pre[UST_REPORT_PATH_MAX + 2];
	const char *line, *nl;

	file_prefix(p, pre, sizeof(pre));
	ust_sb_reset(&p->sb);
	if (p->dbgd_err[0])
		ust_sb_printf(&p->sb, "ustitch: %s\n", p->dbgd_err);
	ust_res_summary(p->res, &p->sb);
	if (p->mode == MODE_FALLBACK && p->stitch && p->mode_why[0])
		ust_sb_printf(&p->sb, "ustitch: user stacks printed at their user_unwind_stack lines: %s\n",
			      p->mode_why);
	if (p->mode == MODE_UNKNOWN && nr_inputs > 1 && others_have_stacks(p))
		ust_sb_printf(&p->sb, "ustitch: no user stacks: none of its records shown is a user_unwind_cookie or user_unwind_stack\n");
	if (!ust_sb_str(&p->sb)[0])
		return;
	fflush(stdout);
	for (line = ust_sb_str(&p->sb); *line; line = nl) {
		nl = strchr(line, '\n');
		nl = nl ? nl + 1 : line + strlen(line);
		if (pre[0] && !strncmp(line, "ustitch: ", 9))
			fprintf(stderr, "ustitch: %s%.*s", pre, (int)(nl - line - 9), line + 9);
		else
			fprintf(stderr, "%.*s", (int)(nl - line), line);
	}
}

/*
 * USTITCH_DEBUG: which file of the plugin acted (with two copies loaded,
 * the others stood down), and the bytes the distinct stacks hold (frames,
 * their index, rendered text): bench/report tells them from what each
 * request costs.
 */
static void debug_at_end(const struct pstate *p)
{
	const struct ust_stitch *st = p->scan ? &p->scan->st : NULL;
	Dl_info self;

	if (!getenv("USTITCH_DEBUG"))
		return;
	if (dladdr((void *)debug_at_end, &self) && self.dli_fname)
		fprintf(stderr, "ustitch: acting copy: %s\n", self.dli_fname);
	if (!st)
		return;
	fprintf(stderr, "ustitch: distinct stacks: %lu, %lu frames, %zu bytes\n", st->nr_contents,
		st->nr_frames, st->nr_frames * sizeof(struct ust_dec_frame) +
		st->cap_contents * sizeof(*st->contents) +
		st->content_by_hash.cap * (sizeof(uint64_t) * 2 + 1) +
		ust_stack_text_peak_bytes(&p->text));
}

int TEP_PLUGIN_UNLOADER(struct tep_handle *tep)
{
	struct pstate **pp, *p;

	for (pp = &states; (p = *pp); pp = &p->next) {
		if (p->tep != tep)
			continue;
		*pp = p->next;
		if (!stood_down) {
			say_option_errors();	/* no record needed the options */
			unregister_handlers(tep);
			fold_at_end(p);
			say_at_end(p);
			debug_at_end(p);
		}
		if (--options_users == 0)
			tep_plugin_remove_options(TEP_PLUGIN_OPTIONS);
		state_free(p);
		if (!states)
			nr_inputs = 0;
		return 0;
	}
	return 0;
}
