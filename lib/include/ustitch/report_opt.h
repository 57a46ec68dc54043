/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_report_opt: a report plugin's -O options checked.  libtraceevent
 * takes any value for an option that has a default (and ignores the
 * option's name given alone), and keeps names no plugin has to itself:
 * each of those mistakes would otherwise do nothing and say nothing.
 */
#ifndef USTITCH_REPORT_OPT_H
#define USTITCH_REPORT_OPT_H

#include <stdbool.h>
#include <stddef.h>

struct ust_sb;

enum ust_ropt_kind {
	UST_ROPT_TEXT,		/* any text; needs a value */
	UST_ROPT_BOOL,		/* 1/0 (true/false, yes/no, on/off); alone: 1 */
	UST_ROPT_COUNT,		/* a decimal count */
	UST_ROPT_BOOL_OR_TEXT,	/* 0, 1 or a text (a path); alone: 1 */
};

struct ust_ropt {
	const char *name;
	enum ust_ropt_kind kind;
	const char *takes;	/* for messages: "1 or 0", "a count, 0 for all" */
	const char *def;	/* what a bad value gives way to */
	const char *value;	/* in: as the host set it; out: the value to use */
};

/*
 * Check @opts (the options of plugin @alias, with the values the host
 * applied) and the -O arguments of the command line @args (@len bytes of
 * NUL-separated arguments, argv[0] first, as ust_report_opt_args()
 * gives): an "ALIAS:NAME" no option has, a boolean given by its name
 * alone (made "1"; only when @exact: else a value cut off by the host
 * could not be told from none), a value the option does not take (given
 * way to its default).  One line per mistake into @msgs ("ustitch:
 * ...\n").  Returns how many.
 */
int ust_report_opt_check(const char *alias, const char *args, size_t len, bool exact,
			 struct ust_ropt *opts, int nr, struct ust_sb *msgs);

/*
 * This process's arguments as its command line holds them now
 * (/proc/self/cmdline), into @buf: their length, or 0.  With the
 * process's @argc and @argv (a constructor's arguments), an argument the
 * host cut at its '=' (trace-cmd does, for -O) is whole again and
 * *@exact is set.
 */
size_t ust_report_opt_args(int argc, char *const *argv, char *buf, size_t size, bool *exact);

#endif
