/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_bpfload: the one way ustitch loads a BPF object (its skeleton's
 * load, between ust_bpfload_begin() and ust_bpfload_end()).
 *
 * libbpf's messages and the verifier's log never reach the terminal: a
 * refusal becomes one line (which program, the verifier's last words) and
 * the whole log a file that line names, so that a kernel which refuses a
 * program costs its user one readable line, not a screenful.  Asked for,
 * each program's verification cost is measured as the kernel reports it
 * (BPF_LOG_STATS: processed instructions, states, verification time), for
 * `ustitch probe` and bench/verifier.
 *
 * libbpf prints through one process-wide callback: outside a load, its
 * warnings go to stderr as "libbpf: ..." (USTITCH_BPF_VERBOSE=1: all of
 * its messages, loads included).
 */
#ifndef USTITCH_BPFLOAD_H
#define USTITCH_BPFLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct bpf_object;

#define UST_BPFLOAD_MAX_PROGS	48

struct ust_bpfload_prog {
	char name[64];
	bool loaded;
	unsigned long insns;		/* processed instructions (the limit is 1M) */
	unsigned long peak_states;
	unsigned long total_states;
	unsigned long verify_us;	/* the kernel's verification time */
};

struct ust_bpfload_report {
	int nr;				/* programs the object loads (autoload) */
	struct ust_bpfload_prog progs[UST_BPFLOAD_MAX_PROGS];
	double load_s;			/* wall time of the whole load */
	char refused[64];		/* the program the kernel refused, or "" */
	char why[240];			/* the verifier's (or libbpf's) last line about it */
	char log_path[256];		/* where the whole log went, or "" */
};

/* A load in progress: on the caller's stack, from begin to end. */
struct ust_bpfload {
	struct bpf_object *obj;
	bool stats;
	char *buf;			/* the verifier log of a refused program */
	size_t buf_size;
	char *pbuf;			/* stats: a log per program */
	size_t pbuf_size;
	char *msgs;			/* libbpf's messages during the load */
	size_t msgs_len, msgs_size;
	double t0;
};

/*
 * Prepare @obj (opened, not loaded) for its load: the logs kept, and with
 * @stats each program's cost measured.  0 or -errno.
 */
int ust_bpfload_begin(struct ust_bpfload *l, struct bpf_object *obj, bool stats);

/*
 * After the load returned @ret: fills @rep (may be NULL) and, if @ret < 0,
 * @err with one line, "the kernel refused PROG of WHAT: WHY (verifier log:
 * PATH)", the log written to PATH ($TMPDIR, else /tmp).  Returns @ret.
 */
int ust_bpfload_end(struct ust_bpfload *l, int ret, const char *what,
		    struct ust_bpfload_report *rep, char *err, size_t errlen);

/* "name  insns  peak states  verification time", one line per program. */
void ust_bpfload_print(const struct ust_bpfload_report *rep, const char *prefix, FILE *out);

#endif
