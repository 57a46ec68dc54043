// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_bpfload: load a BPF object with its logs kept off the terminal (see
 * ustitch/bpfload.h).
 *
 * libbpf loads a program with the log buffer we give it at log level 0,
 * and when the kernel refuses the program it loads it again at level 1
 * into that buffer to say why; it prints that log itself only when the
 * buffer was its own.  So one buffer serves every program of the object:
 * only the refused program writes into it.  Its name comes from libbpf's
 * "prog 'NAME': BPF program load failed" message, caught by our print
 * callback with the others.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ustitch/bpfload.h"

#ifdef UST_HAVE_LIBBPF
#include <bpf/libbpf.h>

/* 16 MiB: a refusal at the instruction limit logs far more; its end says why. */
#define UST_BPFLOAD_LOG		(16u << 20)
#define UST_BPFLOAD_STATS_LOG	(64u << 10)

/* The load in progress (loads are not concurrent: one thread records). */
static struct ust_bpfload *ust_bpfload_cur;

static double ust_bpfload_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int ust_bpfload_print_cb(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	struct ust_bpfload *l = ust_bpfload_cur;
	static int verbose = -1;
	char line[1024];
	int n;

	if (verbose < 0)
		verbose = getenv("USTITCH_BPF_VERBOSE") && strcmp(getenv("USTITCH_BPF_VERBOSE"), "0");
	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n < 0)
		return 0;
	if (verbose)
		fprintf(stderr, "libbpf: %s", line);
	if (l) {
		size_t len = strlen(line);

		if (l->msgs_len + len + 1 > l->msgs_size) {
			size_t sz = l->msgs_size ? l->msgs_size * 2 : 4096;
			char *m;

			while (sz < l->msgs_len + len + 1)
				sz *= 2;
			m = realloc(l->msgs, sz);
			if (!m)
				return 0;
			l->msgs = m;
			l->msgs_size = sz;
		}
		memcpy(l->msgs + l->msgs_len, line, len + 1);
		l->msgs_len += len;
	} else if (!verbose && level == LIBBPF_WARN) {
		fprintf(stderr, "libbpf: %s", line);
	}
	return n;
}

int ust_bpfload_begin(struct ust_bpfload *l, struct bpf_object *obj, bool stats)
{
	struct bpf_program *p;
	int i = 0;

	memset(l, 0, sizeof(*l));
	l->obj = obj;
	l->stats = stats;
	libbpf_set_print(ust_bpfload_print_cb);
	if (stats) {
		int nr = 0;

		bpf_object__for_each_program(p, obj)
			nr++;
		l->pbuf_size = UST_BPFLOAD_STATS_LOG;
		l->pbuf = calloc((size_t)nr + 1, l->pbuf_size);
		if (!l->pbuf)
			return -ENOMEM;
	} else {
		l->buf_size = UST_BPFLOAD_LOG;
		/* Only touched when a program is refused: the pages stay unused. */
		l->buf = calloc(1, l->buf_size);
		if (!l->buf)
			return -ENOMEM;
	}
	bpf_object__for_each_program(p, obj) {
		if (stats) {
			/* BPF_LOG_STATS: the totals only; an error says why as well. */
			bpf_program__set_log_buf(p, l->pbuf + (size_t)i * l->pbuf_size, l->pbuf_size);
			bpf_program__set_log_level(p, 4);
		} else {
			bpf_program__set_log_buf(p, l->buf, l->buf_size);
		}
		i++;
	}
	ust_bpfload_cur = l;
	l->t0 = ust_bpfload_now();
	return 0;
}

/* The value after @key in @log ("processed 123 insns"), 0 if absent. */
static unsigned long ust_bpfload_num(const char *log, const char *key)
{
	const char *s = strstr(log, key);

	return s ? strtoul(s + strlen(key), NULL, 10) : 0;
}

/* The last non-empty line of @s into @out. */
static void ust_bpfload_last_line(const char *s, size_t len, char *out, size_t outlen)
{
	size_t e = len, b;

	while (e > 0 && (s[e - 1] == '\n' || s[e - 1] == ' '))
		e--;
	b = e;
	while (b > 0 && s[b - 1] != '\n')
		b--;
	snprintf(out, outlen, "%.*s", (int)(e - b), s + b);
}

/*
 * Which line of a refusal says why: the verifier's last line, unless it
 * is only its statistics ("processed N insns ..."), then the one before.
 */
static void ust_bpfload_why(const char *log, char *out, size_t outlen)
{
	size_t len = strlen(log);

	ust_bpfload_last_line(log, len, out, outlen);
	while (len > 0 && (!strncmp(out, "processed ", 10) || !strncmp(out, "verification time", 17) ||
			   !strncmp(out, "stack depth", 11) || !out[0])) {
		const char *nl;

		/* Drop the last line and look again. */
		while (len > 0 && log[len - 1] == '\n')
			len--;
		nl = len ? memrchr(log, '\n', len) : NULL;
		len = nl ? (size_t)(nl - log) : 0;
		ust_bpfload_last_line(log, len, out, outlen);
	}
	/* "kfunc X failed callback verification": the line before says what failed. */
	if (strstr(out, "failed callback verification") && len) {
		char before[160], last[160];
		const char *nl;

		snprintf(last, sizeof(last), "%s", out);
		while (len > 0 && log[len - 1] == '\n')
			len--;
		nl = memrchr(log, '\n', len);
		ust_bpfload_last_line(log, nl ? (size_t)(nl - log) : 0, before, sizeof(before));
		if (before[0]) {
			size_t n = strlen(before);

			/* Built by hand: the parts may well be cut, and that is fine. */
			snprintf(out, outlen, "%s", before);
			if (n + 3 < outlen)
				snprintf(out + n, outlen - n, " (%.*s)", (int)(outlen - n - 4), last);
		}
	}
}

/*
 * The log file: the refused program's verifier log and libbpf's messages.
 * Named by what was refused, not by run: a kernel that refuses something
 * refuses it at every run, and the file of the last one is what to read.
 */
static void ust_bpfload_write(struct ust_bpfload *l, const char *what, const char *vlog,
			      struct ust_bpfload_report *rep)
{
	const char *dir = getenv("TMPDIR");
	char name[96];
	size_t i, n = 0;
	FILE *f;
	int fd;

	for (i = 0; what[i] && n + 1 < sizeof(name); i++) {
		char c = what[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '_' || c == '.')
			name[n++] = c;
		else if (n && name[n - 1] != '-')
			name[n++] = '-';
	}
	while (n && name[n - 1] == '-')
		n--;
	name[n] = '\0';
	snprintf(rep->log_path, sizeof(rep->log_path), "%s/ustitch-bpf-%u-%s-%s.log",
		 dir && *dir ? dir : "/tmp", (unsigned int)getuid(), name,
		 rep->refused[0] ? rep->refused : "load");
	/* Not through a link someone else left in /tmp. */
	fd = open(rep->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		rep->log_path[0] = '\0';
		return;
	}
	fprintf(f, "ustitch: loading %s, the kernel refused %s\n\n== libbpf\n%s\n== the verifier's log of %s\n%s\n",
		what, rep->refused[0] ? rep->refused : "(no program named)", l->msgs ? l->msgs : "",
		rep->refused[0] ? rep->refused : "it", vlog);
	fclose(f);
}

int ust_bpfload_end(struct ust_bpfload *l, int ret, const char *what,
		    struct ust_bpfload_report *rep, char *err, size_t errlen)
{
	struct ust_bpfload_report local;
	struct bpf_program *p;
	const char *vlog = "";
	int i = 0;

	ust_bpfload_cur = NULL;
	if (!rep)
		rep = &local;
	memset(rep, 0, sizeof(*rep));
	rep->load_s = ust_bpfload_now() - l->t0;
	/* libbpf names the program it failed on. */
	if (l->msgs) {
		const char *m = strstr(l->msgs, "prog '");

		for (; m; m = strstr(m + 1, "prog '")) {
			const char *e = strchr(m + 6, '\'');

			if (e && strstr(e, "load failed") && strstr(e, "load failed") < strchr(e, '\n')) {
				snprintf(rep->refused, sizeof(rep->refused), "%.*s", (int)(e - m - 6), m + 6);
				break;
			}
		}
	}
	bpf_object__for_each_program(p, l->obj) {
		struct ust_bpfload_prog *pr;
		const char *plog;

		if (!bpf_program__autoload(p)) {
			i++;
			continue;
		}
		plog = l->stats ? l->pbuf + (size_t)i * l->pbuf_size : "";
		i++;
		if (rep->nr >= UST_BPFLOAD_MAX_PROGS)
			continue;
		pr = &rep->progs[rep->nr++];
		snprintf(pr->name, sizeof(pr->name), "%s", bpf_program__name(p));
		pr->loaded = bpf_program__fd(p) >= 0;
		pr->insns = ust_bpfload_num(plog, "processed ");
		pr->peak_states = ust_bpfload_num(plog, "peak_states ");
		pr->total_states = ust_bpfload_num(plog, "total_states ");
		pr->verify_us = ust_bpfload_num(plog, "verification time ");
		if (l->stats && !strcmp(pr->name, rep->refused))
			vlog = plog;
	}
	if (ret < 0) {
		if (!l->stats)
			vlog = l->buf ? l->buf : "";
		if (vlog[0])
			ust_bpfload_why(vlog, rep->why, sizeof(rep->why));
		else if (l->msgs)	/* refused before the verifier: libbpf says why */
			ust_bpfload_why(l->msgs, rep->why, sizeof(rep->why));
		if (!rep->why[0])
			snprintf(rep->why, sizeof(rep->why), "%s", strerror(-ret));
		ust_bpfload_write(l, what, vlog, rep);
		if (err && errlen) {
			if (rep->refused[0])
				snprintf(err, errlen, "the kernel refused %s of %s: %s (%s%s)",
					 rep->refused, what, rep->why,
					 rep->log_path[0] ? "verifier log: " : "no log file: ",
					 rep->log_path[0] ? rep->log_path : strerror(errno));
			else
				snprintf(err, errlen, "loading %s: %s (%s%s)", what, rep->why,
					 rep->log_path[0] ? "log: " : "no log file: ",
					 rep->log_path[0] ? rep->log_path : strerror(errno));
		}
	}
	free(l->buf);
	free(l->pbuf);
	free(l->msgs);
	memset(l, 0, sizeof(*l));
	return ret;
}

#else /* !UST_HAVE_LIBBPF */

int ust_bpfload_begin(struct ust_bpfload *l, struct bpf_object *obj, bool stats)
{
	memset(l, 0, sizeof(*l));
	(void)obj, (void)stats;
	return -EOPNOTSUPP;
}

int ust_bpfload_end(struct ust_bpfload *l, int ret, const char *what,
		    struct ust_bpfload_report *rep, char *err, size_t errlen)
{
	(void)l;
	if (rep)
		memset(rep, 0, sizeof(*rep));
	if (err && errlen)
		snprintf(err, errlen, "loading %s: ustitch was built without libbpf", what);
	return ret;
}

#endif /* UST_HAVE_LIBBPF */

void ust_bpfload_print(const struct ust_bpfload_report *rep, const char *prefix, FILE *f)
{
	int i;

	for (i = 0; i < rep->nr; i++) {
		const struct ust_bpfload_prog *p = &rep->progs[i];

		if (!p->loaded && strcmp(p->name, rep->refused))
			continue;	/* not reached: the load stopped before it */
		fprintf(f, "%s%-26s %9lu insns %7lu peak states %9.1f ms%s\n", prefix, p->name, p->insns,
			p->peak_states, (double)p->verify_us / 1000.0,
			p->loaded ? "" : "  REFUSED");
	}
}
