// SPDX-License-Identifier: LGPL-2.1
/*
 * ustitch report [trace-cmd report options]: `trace-cmd report` with the
 * plugin of this very ustitch, as `perf report` goes with `perf record`.
 *
 * The plugin is the one beside the binary in a build tree
 * (BINDIR/../plugins/traceevent/plugin_ustitch.so), else the one installed
 * with it (USTITCH_PLUGINDIR, meson's plugindir).  Its directory goes into
 * TRACEEVENT_PLUGIN_DIR, unless libtraceevent loads that directory anyway
 * (its system directory): a directory loaded twice would load the plugin
 * twice.  libtraceevent also loads other copies (the system directory's,
 * ~/.local/lib/traceevent/plugins/), and the copy loaded last would act:
 * USTITCH_PLUGIN names the file that must act, and every other copy
 * stands down (the plugin's claim_acting()).
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report_cmd.h"

#define PFX		"ustitch report: "
#define PLUGIN_FILE	"plugin_ustitch.so"

static void usage(FILE *out)
{
	fputs("usage: ustitch report [trace-cmd report options] [trace.dat]\n"
	      "\n"
	      "Runs trace-cmd report with this ustitch's own plugin (the build tree's, or\n"
	      "the one installed with it), whatever else libtraceevent finds: no\n"
	      "TRACEEVENT_PLUGIN_DIR needed.  Every argument goes to trace-cmd report, e.g.\n"
	      "  ustitch report -i trace.dat -O ustitch:lines=1\n"
	      "  ustitch report -O ustitch:folded=1\n", out);
}

static bool same_dir(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The plugin of this binary into @path (PATH_MAX): 0, or -1. */
static int find_plugin(char *path)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		exe[n] = '\0';
		snprintf(path, PATH_MAX, "%s/../plugins/traceevent/" PLUGIN_FILE, dirname(exe));
		if (!access(path, R_OK))
			return 0;
	}
	snprintf(path, PATH_MAX, "%s/" PLUGIN_FILE, USTITCH_PLUGINDIR);
	return access(path, R_OK) ? -1 : 0;
}

int report_main(int argc, char **argv)
{
	char plugin[PATH_MAX], real[PATH_MAX], tmp[PATH_MAX];
	const char *dir;
	char **args;
	int i, e;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (find_plugin(plugin)) {
		fprintf(stderr, PFX "no " PLUGIN_FILE " beside this ustitch (../plugins/traceevent/) "
			"nor in %s: build or install ustitch again\n", USTITCH_PLUGINDIR);
		return 1;
	}
	if (!realpath(plugin, real)) {
		fprintf(stderr, PFX "%s: %s\n", plugin, strerror(errno));
		return 1;
	}
	snprintf(tmp, sizeof(tmp), "%s", real);
	dir = dirname(tmp);
	if (!same_dir(dir, USTITCH_TEP_SYSDIR) && setenv("TRACEEVENT_PLUGIN_DIR", dir, 1))
		return 1;
	if (setenv("USTITCH_PLUGIN", real, 1))
		return 1;
	args = calloc((size_t)argc + 2, sizeof(*args));
	if (!args)
		return 1;
	args[0] = "trace-cmd";
	args[1] = "report";
	for (i = 1; i < argc; i++)
		args[i + 1] = argv[i];
	execvp(args[0], args);
	e = errno;
	fprintf(stderr, PFX "cannot run trace-cmd: %s%s\n", strerror(e),
		e == ENOENT ? " (Debian: apt install trace-cmd)" : "");
	free(args);
	return e == ENOENT ? 127 : 126;
}
