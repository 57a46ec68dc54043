// SPDX-License-Identifier: LGPL-2.1
/*
 * ustitch: the command-line front end.
 *   ustitch record ...   record like trace-cmd record, with deferred user stacks
 *   ustitch probe        what this kernel offers for them
 *   ustitch archive ...  the trace's files by build-id, for reports elsewhere
 *   ustitch report ...   trace-cmd report with this ustitch's plugin
 *   ustitch reset        remove what recorders killed by SIGKILL left in tracefs
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ustitch/bpfload.h"
#include "ustitch/bpfu.h"
#include "ustitch/capture.h"
#include "ustitch/lh_bpf.h"
#include "ustitch/probe.h"
#include "ustitch/rec.h"
#include "archive.h"
#include "rec_cli.h"
#include "rec_compress.h"
#include "report_cmd.h"

static void usage(FILE *out)
{
	fputs("usage: ustitch <command> [options]\n"
	      "\n"
	      "  record   record a trace.dat like trace-cmd record, with deferred user stacks\n"
	      "           (-O userstacktrace_delay) on any kernel; see ustitch record --help\n"
	      "  probe    print which mechanisms this kernel offers, with a reason each,\n"
	      "           then what verifying ustitch's BPF programs costs on it\n"
	      "           (probe --no-verify: the mechanisms only)\n"
	      "  archive  copy the files a trace's stacks touch (by build-id) next to it,\n"
	      "           for reports on another machine; see ustitch archive --help\n"
	      "  report   trace-cmd report with this ustitch's plugin (no install needed):\n"
	      "           ustitch report [trace-cmd report options]; see ustitch report --help\n"
	      "  reset    remove the tracefs instances (ustitch-PID) of recorders that are\n"
	      "           gone (killed by SIGKILL); ustitch record also does it first\n"
	      "\n"
	      "Reports: ustitch report, or trace-cmd report with plugin_ustitch.so installed.\n", out);
}

/* One object's programs: their cost, or what the kernel refused. */
static void probe_object(const char *what, const struct ust_bpfload_report *r, int ret,
			 const char *err)
{
	unsigned long max = 0;
	int i;

	for (i = 0; i < r->nr; i++)
		if (r->progs[i].insns > max)
			max = r->progs[i].insns;
	printf("%s: %s", what, ret ? "REFUSED" : "loads");
	if (r->nr)
		printf(", at most %lu instructions (%.1f %% of the limit), loaded in %.2f s", max,
		       (double)max / 1e4, r->load_s);
	putchar('\n');
	ust_bpfload_print(r, "  ", stdout);
	if (ret)
		printf("  %s\n", err);
}

/*
 * The verifier's cost of every program `ustitch record` may load here:
 * each kernel explores programs its own way, and a stable update once
 * took the unwinder over the 1M-instruction limit.
 */
static void probe_verify(bool tracing)
{
	struct ust_bpfu_opts o = { .perf = true };
	struct ust_bpfload_report r;
	struct ust_lh_bpf_report lr;
	char what[640], err[1024];
	int ret;

	printf("\nBPF programs as ustitch record loads them, verified by this kernel "
	       "(processed instructions of its 1,000,000 limit, peak states, time):\n");
	ret = ust_bpfu_verify(&o, true, &r, what, sizeof(what), err, sizeof(err));
	probe_object(what, &r, ret, err);
	ret = ust_bpfu_verify(&o, false, &r, what, sizeof(what), err, sizeof(err));
	probe_object(what, &r, ret, err);
	ret = ust_lh_bpf_verify(tracing, &lr, err, sizeof(err));
	probe_object("the lock_held() filter", &lr.filter, ret && !lr.tracked ? ret : 0, err);
	if (lr.tracked)
		probe_object("held-lock tracking (fentry/fexit)", &lr.track, ret, err);
	else
		printf("held-lock tracking (fentry/fexit): not loaded: this kernel refuses tracing programs\n");
}

/* Deferred ftrace stacks: the BPF backport (the kernel's records, walked
 * by CFI), else the kernel's own events, else ftrace's immediate
 * userstacktrace (ust_rec_validate, ust_rec_run). */
static void probe_ftrace_default(const struct ust_probe_report *rep)
{
	const struct ust_probe_item *it = rep->items;
	bool kernel = it[UST_PROBE_FTRACE_DEFERRED].available;

	printf("record -O userstacktrace_delay: ");
	if (it[UST_PROBE_BPF_TRACEPOINT].available)
		printf("the BPF backport, deferred: at system-call exits, else %s %s\n",
		       it[UST_PROBE_BPF_TASK_WORK].available ? "by BPF task_work" :
		       "at the event (no BPF task_work)",
		       kernel ? "[the kernel's own deferred stacks (ftrace/user_unwind_*) follow frame "
				"pointers only; --unwind kernel records those]" :
				"[no ftrace/user_unwind_* events in this kernel]");
	else if (kernel)
		printf("the kernel's own deferred user stacks (ftrace/user_unwind_*) "
		       "[the BPF unwinder does not load]\n");
	else
		printf("ftrace's own userstacktrace (at the event, by frame pointers) "
		       "[the BPF unwinder does not load]\n");
}

static int cmd_probe(int argc, char **argv)
{
	struct ust_probe_report rep;
	bool verify = !(argc > 1 && !strcmp(argv[1], "--no-verify"));

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: ustitch probe [--no-verify]\n"
		       "  says which kernel mechanisms ustitch record uses here and why;\n"
		       "  --no-verify: the mechanisms only, without loading every BPF program\n");
		return 0;
	}
	if (argc > 2 || (argc == 2 && verify)) {
		fprintf(stderr, "ustitch probe: unrecognized argument '%s' (see ustitch probe --help)\n",
			argv[argc > 2 ? 2 : 1]);
		return 2;
	}
	ust_probe_run(&rep);
	if (ust_probe_print(&rep, stdout) < 0)
		return 1;
	printf("\nWhat ustitch record uses here:\n");
	probe_ftrace_default(&rep);
	ust_rec_perf_probe_default(&rep, stdout);
	if (verify)
		probe_verify(rep.items[UST_PROBE_BPF_TRACING].available);
	return fflush(stdout) ? 1 : 0;
}

/* Unlike trace-cmd reset, only what ustitch left, and only of dead recorders:
 * other tracers, and recorders still running, keep theirs. */
static int cmd_reset(void)
{
	int n = ust_cap_remove_stale();

	printf("ustitch reset: removed %d stale ustitch instance%s of recorders that are gone\n",
	       n, n == 1 ? "" : "s");
	return 0;
}

static int cmd_record(int argc, char **argv)
{
	const char *compression;
	struct ust_rec_opts o;
	bool native = false, by_default = false;
	int r;

	r = rec_parse(argc, argv, &o, &compression);
	if (!r && !compression) {
		compression = "any";	/* rec_compress.c: the default */
		by_default = true;
	}
	if (!r) {
		r = rec_compress_check(compression, by_default);
		if (r == 1) {
			compression = NULL;	/* no trace-cmd to do it: uncompressed */
			r = 0;
		}
	}
	if (!r)
		r = rec_validate(&o, &native);
	if (!r) {
		int cmd_errno = 0;

		r = ust_rec_run(&o, native, &cmd_errno) ? 1 : 0;
		/* A command that never ran gets a shell's status. */
		if (cmd_errno)
			r = cmd_errno == ENOENT ? 127 : 126;
		else if (!r && compression) {
			/* Asked for, it is said and its failure is the command's. */
			int c = rec_compress(o.output, compression, o.quiet || (by_default && !o.verbose), o.out);

			if (!by_default)
				r = c;
		}
	}
	ust_rec_opts_free(&o);
	return r;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "probe"))
		return cmd_probe(argc - 1, argv + 1);
	if (!strcmp(argv[1], "reset") && argc == 2)
		return cmd_reset();
	if (!strcmp(argv[1], "archive"))
		return archive_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return report_main(argc - 1, argv + 1);
	fprintf(stderr, "ustitch: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
