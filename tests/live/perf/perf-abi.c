// SPDX-License-Identifier: LGPL-2.1
/*
 * live-perf-abi: what a kernel with perf's deferred callchains really
 * writes, held field by field against what the project believes of it:
 * the attr bits and record layouts of kernel-bits/ (ustitch/abi.h), and the
 * fixture generator of the unit tests (synth.c), which writes the same
 * records from those beliefs.  Every record the kernel writes is rebuilt by
 * the generator from its decoded fields and must come out byte for byte the
 * same; the day a kernel changes the ABI, this fails and says where.
 *
 * Runs on itself: a cpu-clock sampling event on this task, while it spins
 * in abi_a() -> abi_b() -> abi_c() (built -O2 with frame pointers: the
 * kernel's deferred unwinder follows frame pointers only).  The deferred
 * stacks of samples in abi_c() must be that chain, return address by
 * return address.
 *
 * Exit status 0, 1 (some check failed), 77 (no defer_callchain here).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ustitch/abi.h"
#include "ustitch/perf.h"
#include "ustitch/perf_attr.h"
#include "ustitch/perf_ring.h"
#include "cpu_ms.h"
#include "synth.h"

static int fails;

static void check(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int cond, const char *fmt, ...)
{
	va_list ap;

	fputs(cond ? "ok - " : "FAIL - ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fails += !cond;
}

/* ---- the workload: a known chain of frames ------------------------------- */

volatile unsigned long abi_sink;
/* Return addresses into the callers, as each callee sees its own. */
static void *volatile ret_into_b, *volatile ret_into_a, *volatile ret_into_main;

__attribute__((noinline)) void abi_c(double ms)
{
	double until = cpu_ms() + ms;

	ret_into_b = __builtin_return_address(0);
	while (cpu_ms() < until)
		for (int i = 0; i < 200000; i++)
			abi_sink += (unsigned long)i * 3;
}

__attribute__((noinline)) void abi_b(double ms)
{
	ret_into_a = __builtin_return_address(0);
	abi_c(ms);
	abi_sink++;
}

__attribute__((noinline)) void abi_a(double ms)
{
	ret_into_main = __builtin_return_address(0);
	abi_b(ms);
	abi_sink++;
}

/* ---- one session ---------------------------------------------------------- */

#define MAX_COOKIES	8192

struct session {
	bool defer_output;
	unsigned long samples, deferred_samples, sample_mismatch, cookie_bad, cookie_cpu;
	unsigned long records, record_mismatch, parse_bad, chain_ok, chain_in_c;
	unsigned long unmatched_records, lost;
	uint64_t cookies[MAX_COOKIES];	/* of samples */
	unsigned int nr_cookies;
	uint64_t rec_cookies[MAX_COOKIES];	/* of deferred records */
	unsigned int nr_rec_cookies;
	int mark;			/* the layout the records use */
	char first_bad[200];
};

static struct ust_perf_layout lay;

static struct synth_id id_of(const struct ust_perf_event *ev)
{
	struct synth_id id = {
		.pid = ev->id.pid, .tid = ev->id.tid, .time = ev->id.time, .cpu = ev->id.cpu,
	};

	return id;
}

static void note_bad(struct session *s, const char *what)
{
	if (!s->first_bad[0])
		snprintf(s->first_bad, sizeof(s->first_bad), "%s", what);
}

static void on_sample(struct session *s, const void *rec, size_t size,
		      const struct ust_perf_event *ev)
{
	const struct ust_perf_chain *ch = &ev->u.sample.chain;
	uint64_t kern[256];
	struct synth_chain sc = { 0 };
	struct synth_id id = id_of(ev);
	static struct synth_rec r;
	size_t len;

	s->samples++;
	if (ch->user_kind != UST_PERF_USER_DEFERRED)
		return;
	s->deferred_samples++;
	if (ch->nr_kernel > 256)
		return;
	for (unsigned int i = 0; i < ch->nr_kernel; i++)
		kern[i] = ust_perf_ip(ch->kernel, i);
	sc.kernel = kern;
	sc.nr_kernel = ch->nr_kernel;
	sc.deferred = true;
	sc.cookie = ch->cookie;
	len = synth_sample(&r, lay.sample_type, ev->misc, &id, ev->u.sample.ip,
			   ev->u.sample.period, &sc);
	if (len != size || memcmp(r.b, rec, size)) {
		s->sample_mismatch++;
		note_bad(s, "a SAMPLE the generator writes differently");
	}
	if (!ust_abi_cookie_valid_mainline(ch->cookie) && !(ch->cookie & 1))
		s->cookie_bad++;
	/* Mainline's cookie: CPU + 1 in the low word, given in this entry. */
	if ((uint32_t)ch->cookie == ev->id.cpu + 1)
		s->cookie_cpu++;
	if (s->nr_cookies < MAX_COOKIES && (!s->nr_cookies || s->cookies[s->nr_cookies - 1] != ch->cookie))
		s->cookies[s->nr_cookies++] = ch->cookie;
}

static void on_deferred(struct session *s, const void *rec, size_t size,
			const struct ust_perf_event *ev)
{
	struct synth_id id = id_of(ev);
	static struct synth_rec r;
	uint64_t ips[512], nr_raw;
	unsigned int n = ev->u.deferred.nr;
	size_t len;

	s->records++;
	if (n > 512)
		return;
	/* Which layout: nr counts a PERF_CONTEXT_USER in front, or not. */
	memcpy(&nr_raw, (const uint8_t *)rec + 16, 8);
	s->mark = nr_raw == n ? UST_ABI_PERF_DEFERRED_USER_MARK_MAINLINE :
		  UST_ABI_PERF_DEFERRED_USER_MARK_SEED;
	for (unsigned int i = 0; i < n; i++)
		ips[i] = ust_perf_ip(ev->u.deferred.ips, i);
	len = synth_deferred_abi(&r, lay.sample_type, &id, ev->u.deferred.cookie, ips, n, s->mark);
	if (len != size || memcmp(r.b, rec, size)) {
		s->record_mismatch++;
		note_bad(s, "a CALLCHAIN_DEFERRED the generator writes differently");
	}
	if (s->nr_rec_cookies < MAX_COOKIES)
		s->rec_cookies[s->nr_rec_cookies++] = ev->u.deferred.cookie;
	/* In abi_c (ips[0], the sampled PC): its callers, frame by frame. */
	if (n >= 4 && ips[1] == (uint64_t)(uintptr_t)ret_into_b) {
		s->chain_in_c++;
		if (ips[2] == (uint64_t)(uintptr_t)ret_into_a &&
		    ips[3] == (uint64_t)(uintptr_t)ret_into_main)
			s->chain_ok++;
	}
}

static int on_record(const void *rec, size_t size, void *ctx)
{
	struct session *s = ctx;
	struct ust_perf_event ev;
	char what[160];
	uint32_t type;

	memcpy(&type, rec, 4);
	if (type == PERF_RECORD_LOST) {
		s->lost++;
		return 0;
	}
	if (type != PERF_RECORD_SAMPLE && type != UST_ABI_PERF_RECORD_CALLCHAIN_DEFERRED)
		return 0;
	if (ust_perf_parse(&lay, rec, size, &ev, what, sizeof(what))) {
		s->parse_bad++;
		note_bad(s, what);
		return 0;
	}
	if (type == PERF_RECORD_SAMPLE)
		on_sample(s, rec, size, &ev);
	else
		on_deferred(s, rec, size, &ev);
	return 0;
}

static bool has(const uint64_t *v, unsigned int n, uint64_t x)
{
	for (unsigned int i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static void attr_of(struct perf_event_attr *a, bool defer_output)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->sample_period = 2000000;		/* every 2 ms of CPU */
	a->sample_type = SYNTH_SAMPLE_TYPE;
	a->sample_id_all = 1;
	a->disabled = 1;
	a->exclude_hv = 1;
	ust_perf_attr_set_defer(a);
	if (defer_output)
		ust_perf_attr_set_defer_output(a);
}

static int run(struct session *s, double ms)
{
	struct perf_event_attr a;
	struct ust_perf_ring ring;
	int fd, ret;

	attr_of(&a, s->defer_output);
	fd = ust_perf_open(&a, 0, -1, -1, 0);
	if (fd < 0) {
		printf("FAIL - perf_event_open: %s\n", strerror(-fd));
		return -1;
	}
	ret = ust_perf_ring_mmap(&ring, fd, 256);
	if (ret) {
		printf("FAIL - mapping the ring: %s\n", strerror(-ret));
		close(fd);
		return -1;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	abi_a(ms);
	/* The last sample's stack is made on the way back from this call. */
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	usleep(1000);
	ust_perf_ring_read(&ring, on_record, s);
	ust_perf_ring_fini(&ring);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 400;
	static struct session with, without;
	struct perf_event_attr a;
	unsigned long paired = 0, orphans = 0;
	char err[160];
	int fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* The attr bits, counted after sigtrap as kernel-bits/ says. */
	attr_of(&a, false);
	fd = ust_perf_open(&a, 0, -1, -1, 0);
	if (fd < 0) {
		printf("skip: this kernel refuses defer_callchain (%s)\n", strerror(-fd));
		return 77;
	}
	close(fd);
	check(1, "defer_callchain (bit %d after sigtrap) accepted",
	      UST_ABI_PERF_ATTR_DEFER_CALLCHAIN_AFTER_SIGTRAP);
	attr_of(&a, true);
	fd = ust_perf_open(&a, 0, -1, -1, 0);
	with.defer_output = fd >= 0;
	if (fd >= 0)
		close(fd);
	printf("# defer_output (bit %d after sigtrap): %s\n",
	       UST_ABI_PERF_ATTR_DEFER_OUTPUT_AFTER_SIGTRAP,
	       with.defer_output ? "accepted (mainline 6.19+)" : "refused (the seed's interface)");
	attr_of(&a, with.defer_output);
	/* The next bit must still be reserved: ours are where the kernel's are. */
	{
		unsigned int next = with.defer_output ? UST_ABI_PERF_ATTR_DEFER_OUTPUT_AFTER_SIGTRAP + 1 :
				     UST_ABI_PERF_ATTR_DEFER_CALLCHAIN_AFTER_SIGTRAP + 1;
		struct perf_event_attr b = a;

		ust_perf_attr_set(&b, next);
		fd = ust_perf_open(&b, 0, -1, -1, 0);
		check(fd == -EINVAL, "the bit after the last defer bit is reserved (EINVAL): %s",
		      fd >= 0 ? "accepted" : strerror(-fd));
		if (fd >= 0)
			close(fd);
		check(ust_perf_attr_is_set(&a, UST_ABI_PERF_ATTR_DEFER_CALLCHAIN_AFTER_SIGTRAP),
		      "ust_perf_attr_is_set() reads defer_callchain back");
	}
	if (ust_perf_layout_init(&lay, SYNTH_SAMPLE_TYPE, true, err, sizeof(err))) {
		printf("FAIL - %s\n", err);
		return 1;
	}

	if (run(&with, ms))
		return 1;
	printf("# with%s defer_output: %lu samples (%lu deferred), %lu deferred records, %lu lost marks\n",
	       with.defer_output ? "" : "out", with.samples, with.deferred_samples, with.records,
	       with.lost);
	check(with.samples >= 50, "samples: %lu (>= 50)", with.samples);
	check(with.deferred_samples == with.samples,
	      "every sample's user part is PERF_CONTEXT_USER_DEFERRED and a cookie: %lu of %lu",
	      with.deferred_samples, with.samples);
	check(with.parse_bad == 0, "records ust_perf_parse() refuses: %lu%s%s", with.parse_bad,
	      with.first_bad[0] ? ", first: " : "", with.first_bad);
	check(with.sample_mismatch == 0,
	      "SAMPLE records the fixture generator writes differently: %lu of %lu",
	      with.sample_mismatch, with.deferred_samples);
	check(with.records > 0, "PERF_RECORD_CALLCHAIN_DEFERRED (type %d) records: %lu",
	      UST_ABI_PERF_RECORD_CALLCHAIN_DEFERRED, with.records);
	check(with.record_mismatch == 0,
	      "CALLCHAIN_DEFERRED records the fixture generator writes differently: %lu of %lu",
	      with.record_mismatch, with.records);
	printf("# the deferred records' layout: %s\n",
	       with.mark == UST_ABI_PERF_DEFERRED_USER_MARK_MAINLINE ?
	       "frames alone (mainline)" : "PERF_CONTEXT_USER in front (the seed's)");
	check(with.cookie_bad == 0, "cookies of neither layout: %lu", with.cookie_bad);
	if (with.defer_output)
		check(with.cookie_cpu == with.deferred_samples,
		      "mainline cookies carry the sample's CPU + 1 in the low word: %lu of %lu",
		      with.cookie_cpu, with.deferred_samples);
	for (unsigned int i = 0; i < with.nr_cookies; i++) {
		if (has(with.rec_cookies, with.nr_rec_cookies, with.cookies[i]))
			paired++;
		else
			orphans++;
	}
	/* The last entry's stack may come after the ring was read. */
	check(orphans <= 1, "sample cookies with a deferred record: %lu, without: %lu (<= 1)",
	      paired, orphans);
	{
		unsigned long strays = 0;

		for (unsigned int i = 0; i < with.nr_rec_cookies; i++)
			strays += !has(with.cookies, with.nr_cookies, with.rec_cookies[i]);
		check(strays == 0, "deferred records whose cookie no sample had: %lu", strays);
	}
	check(with.chain_in_c >= with.records / 2,
	      "deferred stacks from inside abi_c: %lu of %lu (>= half)", with.chain_in_c,
	      with.records);
	check(with.chain_ok == with.chain_in_c,
	      "of those, abi_c <- abi_b <- abi_a <- main return address by return address: %lu of %lu",
	      with.chain_ok, with.chain_in_c);

	if (with.defer_output) {
		/* Mainline: the records go to events with defer_output only. */
		without.defer_output = false;
		if (run(&without, ms / 2))
			return 1;
		check(without.deferred_samples > 0 && without.records == 0,
		      "without defer_output: %lu samples with cookies, %lu deferred records (0)",
		      without.deferred_samples, without.records);
	}
	printf("%s\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
