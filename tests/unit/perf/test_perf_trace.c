// SPDX-License-Identifier: LGPL-2.1
/*
 * Samples as trace records: the ustitch/sample encoder against
 * libtraceevent's reading of its format, kernel_stack in the layout of a
 * kernel format text, and a whole trace.dat (ust_tdw) folded into
 * flame-graph lines and printed by the real trace-cmd with the plugin.
 *
 * usage: test_perf_trace [trace-cmd plugin-dir]   (without them the
 * trace-cmd part is skipped)
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <traceevent/event-parse.h>

#include "ustitch/abi.h"
#include "ustitch/encode.h"
#include "ustitch/fold.h"
#include "ustitch/kbits.h"
#include "ustitch/perf_enc.h"
#include "ustitch/perf_maps.h"
#include "ustitch/scan.h"
#include "ustitch/tdw.h"

static const char *trace_cmd, *plugin_dir;
static char dir[64];

#define ID_SAMPLE	65020
#define ID_COOKIE	16
#define ID_STACK	15
#define ID_KSTACK	4
#define TID		4242

/* Known user code: this binary's own functions, found through /proc. */
__attribute__((noinline)) void ust_fold_leaf(void);
__attribute__((noinline)) void ust_fold_root(void);
__attribute__((noinline)) void ust_fold_leaf(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void ust_fold_root(void)
{
	ust_fold_leaf();
	__asm__ volatile("" ::: "memory");
}

static void test_sample_format(void **state)
{
	struct ust_perf_enc_sample_rec s = { .type = ID_SAMPLE, .pid = 77, .ip = 0xffffffff81001234ULL,
					 .period = 1001001, .event = "cpu-clock",
					 .mode = PERF_RECORD_MISC_KERNEL,
					 .ustack = UST_PERF_ENC_USTACK_LOST, .kernel_frames = 3 };
	const char *text = ust_kbits_get(UST_PERF_ENC_SAMPLE_KEY);
	struct tep_handle *tep = tep_alloc();
	struct tep_record rec = { 0 };
	struct tep_event *ev;
	unsigned long long v;
	unsigned char buf[128];
	int len, n;
	void *str;

	(void)state;
	assert_non_null(text);
	assert_int_equal(tep_parse_event(tep, text, strlen(text), "ustitch"), 0);
	ev = tep_find_event_by_name(tep, "ustitch", "sample");
	assert_non_null(ev);
	assert_int_equal(ev->id, ID_SAMPLE);
	len = ust_perf_enc_sample(buf, sizeof(buf), &s);
	assert_int_equal(len, 32 + 10);
	rec.data = buf;
	rec.size = len;
	assert_int_equal(tep_read_number_field(tep_find_field(ev, "ip"), buf, &v), 0);
	assert_int_equal(v, s.ip);
	assert_int_equal(tep_read_number_field(tep_find_field(ev, "period"), buf, &v), 0);
	assert_int_equal(v, s.period);
	assert_int_equal(tep_read_number_field(tep_find_field(ev, "mode"), buf, &v), 0);
	assert_int_equal(v, PERF_RECORD_MISC_KERNEL);
	assert_int_equal(tep_read_number_field(tep_find_field(ev, "user_stack"), buf, &v), 0);
	assert_int_equal(v, UST_PERF_ENC_USTACK_LOST);
	assert_int_equal(tep_read_number_field(tep_find_field(ev, "kernel_frames"), buf, &v), 0);
	assert_int_equal(v, 3);
	str = tep_get_field_raw(NULL, ev, "event", &rec, &n, 0);
	assert_non_null(str);
	assert_string_equal((const char *)str, "cpu-clock");
	assert_int_equal(ust_perf_enc_sample(buf, 40, &s), -ENOSPC);
	tep_free(tep);
}

static void test_kstack_format(void **state)
{
	const uint64_t k[3] = { 0xffffffff81001010ULL, 0xffffffff81002010ULL, 0xffffffff81003010ULL };
	struct ust_perf_enc_kstack_fmt f;
	unsigned char buf[128];
	char err[160];
	int32_t n;
	uint64_t a;

	(void)state;
	assert_int_equal(ust_perf_enc_kstack_fmt_init(&f, ust_kbits_get("ftrace/kernel_stack"), err,
						  sizeof(err)), 0);
	assert_int_equal(f.type, ID_KSTACK);
	assert_int_equal(f.size_off, 8);
	assert_int_equal(f.caller_off, 16);
	assert_int_equal(ust_perf_enc_kstack(&f, buf, sizeof(buf), 9, (const uint8_t *)k, 3), 16 + 24);
	memcpy(&n, buf + 8, 4);
	assert_int_equal(n, 3);
	memcpy(&a, buf + 16 + 16, 8);
	assert_int_equal(a, k[2]);
	assert_int_equal(ust_perf_enc_kstack_fmt_init(&f, "name: kernel_stack\nID: 4\nformat:\n", err,
						  sizeof(err)), -EINVAL);
}

/* ---- a trace with samples ---------------------------------------------- */

static void event(struct ust_tdw *w, int buf, int cpu, uint64_t ts, const void *d, int len)
{
	char err[512];

	assert_true(len > 0);
	if (ust_tdw_event(w, buf, cpu, ts, d, (size_t)len, err, sizeof(err)))
		fail_msg("%s", err);
}

static char *format_with(const char *key, int id)
{
	char *t = ust_enc_format_with_id(key, id);

	assert_non_null(t);
	return t;
}

static const uint64_t K[2] = { 0xffffffff81001010ULL, 0xffffffff81002010ULL };

/* sample, kernel_stack, cookie: one sample's records, at one time. */
static void put_sample(struct ust_tdw *w, int buf, int cpu, uint64_t ts, unsigned int ustack,
		       uint64_t cookie, bool with_cookie)
{
	struct ust_perf_enc_sample_rec s = { .type = ID_SAMPLE, .pid = TID, .ip = K[0], .period = 1000,
					 .event = "cpu-clock", .mode = PERF_RECORD_MISC_KERNEL,
					 .ustack = ustack, .kernel_frames = 2 };
	struct ust_perf_enc_kstack_fmt f;
	unsigned char b[256];
	char err[160];

	assert_int_equal(ust_perf_enc_kstack_fmt_init(&f, ust_kbits_get("ftrace/kernel_stack"), err,
						  sizeof(err)), 0);
	event(w, buf, cpu, ts, b, ust_perf_enc_sample(b, sizeof(b), &s));
	event(w, buf, cpu, ts, b, ust_perf_enc_kstack(&f, b, sizeof(b), TID, (const uint8_t *)K, 2));
	if (with_cookie)
		event(w, buf, cpu, ts, b, ust_enc_unwind_cookie(b, sizeof(b), ID_COOKIE, TID, cookie));
}

static const char *write_trace(void)
{
	static char path[128];
	static const char kallsyms[] =
		"ffffffff81001000 T do_syscall_64\n"
		"ffffffff81002000 T entry_SYSCALL_64\n"
		"ffffffff81003000 T zz_end\n";
	struct ust_tdw_opts o = { .nr_cpus = 2, .clock = "mono", .uname = "Linux test 6.18 x86_64" };
	struct ust_perf_maps *m = ust_perf_maps_new();
	struct ust_dec_frame fr[2];
	struct ust_tdw *w;
	unsigned char b[512];
	char *t;
	int ub;

	snprintf(path, sizeof(path), "%s/samples.dat", dir);
	w = ust_tdw_open(path, &o, NULL, 0);
	assert_non_null(w);
	assert_int_equal(ust_tdw_add_format(w, "ftrace", ust_kbits_get("ftrace/kernel_stack"), NULL, 0), 0);
	assert_int_equal(ust_tdw_add_format(w, "ftrace", ust_kbits_get("ftrace/user_unwind_cookie"), NULL, 0), 0);
	assert_int_equal(ust_tdw_add_format(w, "ftrace", ust_kbits_get("ftrace/user_unwind_stack"), NULL, 0), 0);
	t = format_with(UST_PERF_ENC_SAMPLE_KEY, ID_SAMPLE);
	assert_int_equal(ust_tdw_add_format(w, "ustitch", t, NULL, 0), 0);
	free(t);
	/* As ustitch record's traces: the stacks are not the kernel's own. */
	t = format_with("ustitch/stack_flags", ID_SAMPLE + 1);
	assert_int_equal(ust_tdw_add_format(w, "ustitch", t, NULL, 0), 0);
	free(t);
	assert_int_equal(ust_tdw_set_kallsyms(w, kallsyms, strlen(kallsyms), NULL, 0), 0);
	assert_int_equal(ust_tdw_add_cmdline(w, TID, "ust-sampled", NULL, 0), 0);
	ub = ust_tdw_add_buffer(w, "ustitch", NULL, 0);
	assert_true(ub > 0);

	/* Two samples of one kernel entry, on both CPUs; one stack for them. */
	put_sample(w, ub, 0, 1000, UST_PERF_ENC_USTACK_DEFERRED, 0x101, true);
	put_sample(w, ub, 1, 1100, UST_PERF_ENC_USTACK_DEFERRED, 0x101, true);
	/* The user stack, as the kernel's unwinder reports frames. */
	assert_int_equal(ust_perf_maps_proc(m, (uint32_t)getpid(), 0), 0);
	assert_true(ust_perf_maps_resolve(m, (uint32_t)getpid(),
					  (uint64_t)(uintptr_t)&ust_fold_leaf, &fr[0]));
	assert_true(ust_perf_maps_resolve(m, (uint32_t)getpid(),
					  (uint64_t)(uintptr_t)&ust_fold_root + 5, &fr[1]));
	event(w, ub, 1, 1500, b, ust_perf_enc_unwind_stack(b, sizeof(b), ID_STACK, TID, 0x101, fr, 2));
	/* A sample whose stack was lost: records lost after it. */
	put_sample(w, ub, 0, 2000, UST_PERF_ENC_USTACK_LOST, 0x103, true);
	assert_int_equal(ust_tdw_lost(w, ub, 0, 3, NULL, 0), 0);
	/* A cookie of the same task at another time is not the sample's. */
	put_sample(w, ub, 1, 3000, UST_PERF_ENC_USTACK_NONE, 0, false);
	event(w, ub, 1, 3100, b, ust_enc_unwind_cookie(b, sizeof(b), ID_COOKIE, TID, 0x101));
	put_sample(w, ub, 0, 4000, UST_PERF_ENC_USTACK_NONE, 0, false);
	assert_int_equal(ust_tdw_close(w, NULL, 0), 0);
	ust_perf_maps_free(m);
	return path;
}

static void test_fold(void **state)
{
	const char *path = write_trace();
	struct ust_fold *f = ust_fold_new();
	char err[256], out[4096] = "", expect[1024];
	FILE *mem = fmemopen(out, sizeof(out) - 1, "w");

	(void)state;
	assert_int_equal(ust_fold_file(f, path, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(ust_fold_total(f), 5);
	assert_int_equal(ust_fold_print(f, mem), 3);
	fclose(mem);
	snprintf(expect, sizeof(expect),
		 "ust-sampled;[user stack lost];entry_SYSCALL_64_[k];do_syscall_64_[k] 1\n"
		 "ust-sampled;entry_SYSCALL_64_[k];do_syscall_64_[k] 2\n"
		 "ust-sampled;ust_fold_root;ust_fold_leaf;entry_SYSCALL_64_[k];do_syscall_64_[k] 2\n");
	assert_string_equal(out, expect);
	ust_fold_free(f);
}

static char *run(const char *cmd)
{
	char *buf = calloc(1, 1 << 20);
	size_t n = 0, r;
	FILE *p = popen(cmd, "r");

	assert_non_null(p);
	while ((r = fread(buf + n, 1, (1 << 20) - 1 - n, p)) > 0)
		n += r;
	pclose(p);
	return buf;
}

/* The real trace-cmd, with the plugin: samples print natively, their
 * kernel stacks by trace-cmd's own kernel_stack handler, their user
 * stacks by the plugin; folded=FILE writes the flame-graph lines. */
static void test_report(void **state)
{
	const char *path = write_trace();
	char cmd[1024], folded[128];
	char *out, *ff;
	FILE *f;

	(void)state;
	if (!trace_cmd || !plugin_dir) {
		skip();
		return;
	}
	snprintf(folded, sizeof(folded), "%s/out.folded", dir);
	/* A sanitized plugin needs its runtimes in the stock trace-cmd. */
	snprintf(cmd, sizeof(cmd),
		 "HOME=%s TRACEEVENT_PLUGIN_DIR=%s LD_PRELOAD=%s %s report -O ustitch:folded=%s %s 2>&1",
		 dir, plugin_dir, getenv("UST_SAN_PRELOAD") ? getenv("UST_SAN_PRELOAD") : "",
		 trace_cmd, folded, path);
	out = run(cmd);
	if (!strstr(out, "sample:               cpu-clock ip=do_syscall_64+0x10") &&
	    !strstr(out, "cpu-clock ip=do_syscall_64+0x10 period=1000 kernel user_stack=deferred"))
		fail_msg("no native sample line:\n%s", out);
	if (!strstr(out, "=> do_syscall_64") || !strstr(out, "=> entry_SYSCALL_64"))
		fail_msg("no kernel stack:\n%s", out);
	if (!strstr(out, "<user stack unwind, 2 frames>\n=> ust_fold_leaf+0x0"))
		fail_msg("no user stack:\n%s", out);
	if (!strstr(out, "never arrived: events were lost after it"))
		fail_msg("no lost mark:\n%s", out);
	if (!strstr(out, "user_stack=lost"))
		fail_msg("no user_stack=lost:\n%s", out);
	if (!strstr(out, "# ustitch folded stacks: 5 samples, 3 distinct stacks, written to"))
		fail_msg("no folded header:\n%s", out);
	free(out);
	f = fopen(folded, "r");
	assert_non_null(f);
	ff = calloc(1, 4096);
	assert_true(fread(ff, 1, 4095, f) > 0);
	fclose(f);
	assert_non_null(strstr(ff, "ust-sampled;ust_fold_root;ust_fold_leaf;entry_SYSCALL_64_[k];do_syscall_64_[k] 2\n"));
	free(ff);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample_format),
		cmocka_unit_test(test_kstack_format),
		cmocka_unit_test(test_fold),
		cmocka_unit_test(test_report),
	};
	char cmd[128];
	int r;

	if (argc > 2 && argv[1][0] && access(argv[1], X_OK) == 0) {
		trace_cmd = argv[1];
		plugin_dir = argv[2];
	}
	snprintf(dir, sizeof(dir), "/tmp/ust-perf-trace.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	r = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "%s%s", getenv("UST_KEEP") ? "true " : "rm -rf ", dir);
	if (system(cmd))
		r = r ? r : 1;
	return r;
}
