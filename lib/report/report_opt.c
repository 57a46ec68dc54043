// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_report_opt: -O options of a report plugin, checked once they are
 * applied.  The values come from the host (what libtraceevent put in the
 * plugin's table).  Two things libtraceevent does not let a plugin see
 * are read from the command line instead: a name given without "=VALUE"
 * (for an option with a default it changes nothing and leaves no trace)
 * and a name the plugin does not have (kept in libtraceevent's private
 * list, which has no accessor; tep_plugin_add_option() returns 0 for it).
 * trace-cmd report passes each -O argument as given, "-O ARG" or "-OARG",
 * after cutting it at its '=' (a NUL in argv, which /proc/self/cmdline
 * shows): the arguments' own addresses tell a cut from two arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "ustitch/near.h"
#include "ustitch/report_opt.h"
#include "ustitch/sb.h"

static int by_address(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;

	return x < y ? -1 : x > y;
}

size_t ust_report_opt_args(int argc, char *const *argv, char *buf, size_t size, bool *exact)
{
	const char **starts;
	ssize_t n, len = 0;
	int fd, i;

	*exact = false;
	if (!size)
		return 0;
	buf[0] = '\0';
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while ((size_t)len < size - 1 && (n = read(fd, buf + len, size - 1 - (size_t)len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	if (argc < 1 || !argv || !len || !(starts = malloc((size_t)argc * sizeof(*starts))))
		return (size_t)len;
	/* Where each argument starts (getopt may have reordered argv, not the
	 * strings): a NUL before the next start was an '=' the host cut. */
	for (i = 0; i < argc; i++)
		starts[i] = argv[i];
	qsort(starts, (size_t)argc, sizeof(*starts), by_address);
	for (i = 0; i < argc; i++) {
		ptrdiff_t s = starts[i] - starts[0];
		ptrdiff_t e = i + 1 < argc ? starts[i + 1] - starts[0] - 1 : len - 1;

		if (s < 0 || e > len || s > e)
			break;
		for (; s < e; s++)
			if (!buf[s])
				buf[s] = '=';
	}
	*exact = i == argc;
	free(starts);
	return (size_t)len;
}

enum given { NOT_GIVEN, ALONE, WITH_VALUE };

static int find(const struct ust_ropt *opts, int nr, const char *name, size_t len)
{
	int i;

	for (i = 0; i < nr; i++)
		if (strlen(opts[i].name) == len && !strncmp(opts[i].name, name, len))
			return i;
	return -1;
}

static void unknown(const char *alias, const char *name, size_t len, const struct ust_ropt *opts,
		    int nr, struct ust_sb *msgs)
{
	char want[UST_NEAR_NAME_MAX], near[256];
	struct ust_near n;
	int i;

	snprintf(want, sizeof(want), "%.*s", (int)len, name);
	ust_near_init(&n, want);
	for (i = 0; i < nr; i++)
		ust_near_add(&n, opts[i].name);
	ust_sb_printf(msgs, "ustitch: unknown option %s:%.*s (", alias, (int)len, name);
	if (ust_near_format(&n, near, sizeof(near))) {
		ust_sb_printf(msgs, "did you mean %s?)\n", near);
		return;
	}
	ust_sb_puts(msgs, "options: ");
	for (i = 0; i < nr; i++)
		ust_sb_printf(msgs, "%s%s", i ? ", " : "", opts[i].name);
	ust_sb_puts(msgs, ")\n");
}

/*
 * How each option was last given on the command line.  libtraceevent
 * applies "ALIAS:NAME" first and a bare "NAME" (any plugin's) after it:
 * @pass 0 reads the former, 1 the latter.  Unknown "ALIAS:" names are
 * said; unknown bare names may be another plugin's.
 */
static int scan_args(const char *alias, const char *args, size_t len, int pass,
		     const struct ust_ropt *opts, int nr, enum given *given, struct ust_sb *msgs)
{
	const char *a = args, *end = args + len, *text, *name, *eq;
	size_t alen = strlen(alias);
	int bad = 0, i;

	if (a < end)
		a += strlen(a) + 1;	/* argv[0] */
	for (; a < end; a += strlen(a) + 1) {
		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "-O")) {
			a += strlen(a) + 1;
			if (a >= end)
				break;
			text = a;
		} else if (!strncmp(a, "-O", 2)) {
			text = a + 2;
		} else {
			continue;
		}
		eq = strchr(text, '=');
		name = strchr(text, ':');
		if (name && (!eq || name < eq)) {
			if (pass != 0 || (size_t)(name - text) != alen || strncmp(text, alias, alen))
				continue;
			name++;
		} else {
			if (pass != 1)
				continue;
			name = text;
		}
		i = find(opts, nr, name, eq ? (size_t)(eq - name) : strlen(name));
		if (i >= 0) {
			given[i] = eq ? WITH_VALUE : ALONE;
		} else if (pass == 0) {
			unknown(alias, name, eq ? (size_t)(eq - name) : strlen(name), opts, nr, msgs);
			bad++;
		}
	}
	return bad;
}

static bool is_bool(const char *v, bool *on)
{
	static const char *const yes[] = { "1", "true", "yes", "on", NULL };
	static const char *const no[] = { "0", "false", "no", "off", NULL };
	int i;

	for (i = 0; yes[i]; i++)
		if (!strcasecmp(v, yes[i]))
			return (*on = true);
	for (i = 0; no[i]; i++)
		if (!strcasecmp(v, no[i]))
			return !(*on = false);
	return false;
}

static bool is_count(const char *v)
{
	char *e;

	errno = 0;
	return v[0] >= '0' && v[0] <= '9' && (strtoul(v, &e, 10), !*e && !errno);
}

/* Is @o's value one it takes?  Else the line saying so. */
static bool value_ok(const char *alias, const struct ust_ropt *o, struct ust_sb *msgs)
{
	const char *v = o->value ? o->value : "";
	bool on;

	switch (o->kind) {
	case UST_ROPT_BOOL:
		if (is_bool(v, &on) || (!v[0] && o->def && !o->def[0]))
			return true;
		ust_sb_printf(msgs, "ustitch: -O %s:%s=%s: not a boolean (%s takes %s)\n", alias, o->name,
			      v, o->name, o->takes);
		return false;
	case UST_ROPT_COUNT:
		if (is_count(v))
			return true;
		ust_sb_printf(msgs, "ustitch: -O %s:%s=%s: not a number (%s takes %s)\n", alias, o->name,
			      v, o->name, o->takes);
		return false;
	case UST_ROPT_TEXT:
	case UST_ROPT_BOOL_OR_TEXT:
		break;
	}
	return true;
}

int ust_report_opt_check(const char *alias, const char *args, size_t len, bool exact,
			 struct ust_ropt *opts, int nr, struct ust_sb *msgs)
{
	enum given *given = calloc((size_t)nr + 1, sizeof(*given));
	int bad, i;

	if (!given)
		return 0;
	bad = scan_args(alias, args, len, 0, opts, nr, given, msgs);
	bad += scan_args(alias, args, len, 1, opts, nr, given, msgs);
	for (i = 0; i < nr; i++) {
		struct ust_ropt *o = &opts[i];

		if (given[i] == ALONE && exact) {
			if (o->kind == UST_ROPT_BOOL || o->kind == UST_ROPT_BOOL_OR_TEXT) {
				o->value = "1";		/* as -O fgraph:tailprint turns it on */
				continue;
			}
			ust_sb_printf(msgs, "ustitch: -O %s:%s: needs a value (%s takes %s)\n", alias,
				      o->name, o->name, o->takes);
			bad++;
			continue;
		}
		if (!value_ok(alias, o, msgs)) {
			o->value = o->def;
			bad++;
		}
	}
	free(given);
	return bad;
}
