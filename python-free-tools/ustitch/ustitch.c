// SPDX-License-Identifier: LGPL-2.1
/*
 * ustitch: the command-line front end.
 *   ustitch record ...   record like trace-cmd record, with deferred user stacks
 *   ustitch probe        what this kernel offers for them
 *   ustitch archive ...  the trace's files by build-id, for reports elsewhere
 *   ustitch reset        remove what recorders killed by SIGKILL left in tracefs
 */
#include <stdio.h>
#include <string.h>

#include "ustitch/capture.h"
#include "ustitch/probe.h"
#include "archive.h"
#include "rec.h"

static void usage(FILE *out)
{
	fputs("usage: ustitch <command> [options]\n"
	      "\n"
	      "  record   record a trace.dat like trace-cmd record, with deferred user stacks\n"
	      "           (-O userstacktrace_delay) on any kernel; see ustitch record --help\n"
	      "  probe    print which mechanisms this kernel offers, with a reason each\n"
	      "  archive  copy the files a trace's stacks touch (by build-id) next to it,\n"
	      "           for reports on another machine; see ustitch archive --help\n"
	      "  reset    remove the tracefs instances (ustitch-PID) of recorders that are\n"
	      "           gone (killed by SIGKILL); ustitch record also does it first\n"
	      "\n"
	      "Reports: trace-cmd report with plugin_ustitch.so installed.\n", out);
}

static int cmd_probe(void)
{
	struct ust_probe_report rep;

	ust_probe_run(&rep);
	return ust_probe_print(&rep, stdout) < 0 ? 1 : 0;
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
	struct rec_opts o;
	bool native = false;
	int r;

	r = rec_parse(argc, argv, &o);
	if (r)
		return r;
	r = rec_validate(&o, &native);
	if (r)
		return r;
	return rec_run(&o, native);
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
		return cmd_probe();
	if (!strcmp(argv[1], "reset") && argc == 2)
		return cmd_reset();
	if (!strcmp(argv[1], "archive"))
		return archive_main(argc - 1, argv + 1);
	fprintf(stderr, "ustitch: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
