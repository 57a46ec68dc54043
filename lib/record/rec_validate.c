// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_rec_validate: the options checked against this kernel, event
 * patterns expanded.  Everything here only reads tracefs: options that
 * cannot be recorded must leave no trace of themselves.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracefs/tracefs.h>

#include "ustitch/abi.h"
#include "ustitch/bpfu.h"
#include "ustitch/near.h"
#include "ustitch/perf_attr.h"
#include "ustitch/probe.h"
#include "ustitch/rec.h"
#include "rec_priv.h"

/* Why @o cannot be recorded, into @err.  -EINVAL. */
__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errsz, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int ust_rec_buffer_add_event(struct ust_rec_buffer *b, const char *sys, const char *ev)
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

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* Expand one pattern into exact events, appended to @out. */
static int expand(const struct ust_rec_event *pat, struct ust_rec_buffer *out)
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
			if (ust_rec_buffer_add_event(out, sd->d_name, ed->d_name))
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

/*
 * The events nearest to a name that matched none (no glob in it): for
 * "system:event", every "system:event" of this kernel; for a bare name,
 * perf's event names, the systems and the events of every system.
 */
static int suggest(const struct ust_rec_event *pat, char *buf, size_t size)
{
	const char *tdir = tracefs_tracing_dir();
	char want[UST_NEAR_NAME_MAX], path[4096], name[600];
	struct ust_near near;
	struct dirent *sd, *ed;
	DIR *sdir, *edir;
	size_t i;

	buf[0] = '\0';
	if (strpbrk(pat->system, "*?[") || strpbrk(pat->event, "*?[") ||
	    snprintf(want, sizeof(want), "%s%s%s", pat->system, pat->system[0] ? ":" : "",
		     pat->event) >= (int)sizeof(want))
		return 0;
	ust_near_init(&near, want);
	for (i = 0; !pat->system[0] && ust_perf_event_name(i); i++)
		ust_near_add(&near, ust_perf_event_name(i));
	snprintf(path, sizeof(path), "%s/events", tdir);
	if (!(sdir = opendir(path)))
		return 0;
	while ((sd = readdir(sdir))) {
		if (sd->d_name[0] == '.')
			continue;
		if (!pat->system[0])
			ust_near_add(&near, sd->d_name);
		snprintf(path, sizeof(path), "%s/events/%s", tdir, sd->d_name);
		if (!(edir = opendir(path)))
			continue;
		while ((ed = readdir(edir))) {
			if (ed->d_name[0] == '.' || (ed->d_type != DT_DIR && ed->d_type != DT_UNKNOWN))
				continue;
			snprintf(name, sizeof(name), "%s%s%s", pat->system[0] ? sd->d_name : "",
				 pat->system[0] ? ":" : "", ed->d_name);
			ust_near_add(&near, name);
		}
		closedir(edir);
	}
	closedir(sdir);
	return ust_near_format(&near, buf, size);
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

int ust_rec_validate(struct ust_rec_opts *o, bool *native_deferred, char *err, size_t errsz)
{
	char reason[UST_PROBE_REASON_MAX];
	bool deferred = false, lh_stacks = false, kernel;
	int b, i, ret;

	if (!tracefs_tracing_dir() || !is_dir(tracefs_tracing_dir()))
		return fail(err, errsz, "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
	for (b = 0; b < o->nr_bufs; b++) {
		struct ust_rec_buffer *buf = &o->bufs[b], exp = { 0 };

		for (i = 0; i < buf->nr_ev; i++) {
			int n = expand(&buf->ev[i], &exp);

			if (n <= 0) {
				char pat[512], near[512];

				snprintf(pat, sizeof(pat), "%s%s%s", buf->ev[i].system,
					 buf->ev[i].system[0] ? ":" : "", buf->ev[i].event);
				if (suggest(&buf->ev[i], near, sizeof(near)))
					return fail(err, errsz, "no event '%s' (did you mean %s?)", pat, near);
				return fail(err, errsz, "no event matches '%s' on this kernel", pat);
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
		for (i = 0; i < buf->nr_ev; i++)
			if (buf->ev[i].filter &&
			    ust_rec_filter_fields(buf->ev[i].system, buf->ev[i].event, buf->ev[i].filter,
						  err, errsz))
				return -EINVAL;
		for (i = 0; i < buf->nr_opts; i++)
			if (!option_exists(buf->opts[i]))
				return fail(err, errsz, "-O %s: no such ftrace option on this kernel", buf->opts[i]);
		deferred |= buf->deferred;
	}
	/* Events filtered with lock_held() leave ftrace for perf + BPF. */
	ret = ust_rec_lockheld_claim(o, &lh_stacks, err, errsz);
	if (ret)
		return ret;
	*native_deferred = false;
	kernel = (deferred || o->unwind_kernel) &&
		 ust_probe_one(UST_PROBE_FTRACE_DEFERRED, reason, sizeof(reason));
	if (o->unwind_kernel && !kernel)
		return fail(err, errsz, "--unwind kernel: this kernel has no deferred user stacks of its own (%s)",
			    reason);
	if (deferred) {
		/*
		 * The kernel's own stacks where asked for, or where BPF cannot
		 * make them; else BPF's, whose walk reads unwind tables where
		 * the kernel's follows frame pointers only.
		 */
		if (kernel && (o->unwind_kernel || (o->unwind_fp && !lh_stacks) || !ust_bpfu_built() ||
			       !ust_bpfu_usable(reason, sizeof(reason)))) {
			/*
			 * lock_held() events are perf's: the kernel defers
			 * stacks for ftrace's events only, theirs are BPF's
			 * (by frame pointers with --unwind fp).
			 */
			if (lh_stacks)
				return fail(err, errsz, "%s: lock_held() filters record their events through perf, and the kernel's own deferred stacks come with ftrace's events only (their user stacks are BPF's walk: leave out --unwind kernel, or record those events in another run)",
					    o->unwind_kernel ? "--unwind kernel" : "-O userstacktrace_delay");
			*native_deferred = true;
		} else if (!ust_bpfu_built()) {
			return fail(err, errsz, "-O userstacktrace_delay: this kernel has no deferred user stacks (%s) and ustitch was built without BPF",
				    reason);
		} else if (!ust_bpfu_usable(reason, sizeof(reason))) {
			return fail(err, errsz, "-O userstacktrace_delay: BPF tracepoint programs are not usable here: %s", reason);
		} else if (o->clock_given && strcmp(o->clock, "mono")) {
			return fail(err, errsz, "-C %s: deferred stacks made by BPF need -C mono (BPF's clock)", o->clock);
		} else {
			o->clock = "mono";
		}
	}
	ret = ust_rec_perf_validate(o, err, errsz);
	if (ret)
		return ret;
	if (o->clock && !clock_exists(o->clock))
		return fail(err, errsz, "-C %s: no such trace clock on this kernel", o->clock);
	return 0;
}
