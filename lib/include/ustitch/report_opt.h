/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_report_opt: a report plugin's -O options checked.  libtraceevent
 * takes any value for an option that has a default (and ignores the
 * option's name given alone), and keeps names no plugin has to itself:
 * each of those mistakes would otherwise do nothing and say nothing.
 */
#ifndef USTITCH_REPORT_OPT_H
#define USTITCH_REPORT_OPT_H

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
 * NUL-separated arguments, argv[0] first, as /proc/self/cmdline): an
 * "ALIAS:NAME" no option has, a boolean given by its name alone (made
 * "1"), a value the option does not take (given way to its default).
 * One line per mistake into @msgs ("ustitch: ...\n").  Returns how many.
 */
int ust_report_opt_check(const char *alias, const char *args, size_t len, struct ust_ropt *opts,
			 int nr, struct ust_sb *msgs);

/* This process's command line into @buf (NUL-terminated too): its length, or 0. */
size_t ust_report_opt_cmdline(char *buf, size_t size);

#endif
