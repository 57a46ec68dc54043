// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_probe: ask the running kernel, rather than its version, which
 * user-stack unwinding facilities it has.  Sandboxed and distribution
 * kernels differ in what they allow (e.g. fentry refused with EPERM while
 * tracepoint programs load, task_work refused from tracepoint programs by
 * one stable update), so each answer comes from an attempt, with the
 * programs ustitch itself loads where it has them.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <tracefs.h>

#ifdef UST_HAVE_LIBBPF
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#endif

#include "ustitch/abi.h"
#include "ustitch/bpfu.h"
#include "ustitch/perf_attr.h"
#include "ustitch/probe.h"
#include "kbtf.h"

static const char *const ust_probe_names[UST_PROBE__COUNT] = {
	[UST_PROBE_FTRACE_DEFERRED] = "ftrace-deferred-unwind",
	[UST_PROBE_PERF_DEFER] = "perf-defer-callchain",
	[UST_PROBE_BTF] = "btf",
	[UST_PROBE_BPF_TRACEPOINT] = "bpf-tracepoint",
	[UST_PROBE_BPF_TASK_WORK] = "bpf-task-work",
	[UST_PROBE_BPF_FIND_VMA] = "bpf-find-vma",
	[UST_PROBE_BPF_TRACING] = "bpf-tracing-progs",
	[UST_PROBE_KPROBES] = "kprobes",
	[UST_PROBE_UPROBES] = "uprobes",
};

#define UST_BTF_VMLINUX "/sys/kernel/btf/vmlinux"

/* Sets the reason and returns @ok, so that each probe ends in one line. */
__attribute__((format(printf, 4, 5)))
static bool ust_probe_say(char *reason, size_t len, bool ok, const char *fmt, ...)
{
	va_list ap;

	if (reason && len) {
		va_start(ap, fmt);
		vsnprintf(reason, len, fmt, ap);
		va_end(ap);
	}
	return ok;
}

static bool ust_probe_tracefs_has(const char *rel, char *dir_out, size_t dir_len)
{
	const char *dir = tracefs_tracing_dir();
	char path[512];

	if (dir_out && dir_len)
		snprintf(dir_out, dir_len, "%s", dir ? dir : "");
	if (!dir)
		return false;
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return access(path, F_OK) == 0;
}

static bool ust_probe_ftrace_deferred(char *reason, size_t len)
{
	char dir[256];
	bool opt, ev;

	opt = ust_probe_tracefs_has("options/" UST_ABI_OPT_USERSTACKTRACE_DELAY, dir, sizeof(dir));
	if (!dir[0])
		return ust_probe_say(reason, len, false, "tracefs not found (not mounted?)");
	ev = ust_probe_tracefs_has("events/" UST_ABI_SYSTEM_FTRACE "/" UST_ABI_EV_UNWIND_STACK,
				   NULL, 0);
	if (opt && ev)
		return ust_probe_say(reason, len, true,
				     "options/userstacktrace_delay and events/ftrace/user_unwind_stack present");
	if (opt)
		return ust_probe_say(reason, len, false,
				     "options/userstacktrace_delay present but no events/ftrace/user_unwind_stack");
	return ust_probe_say(reason, len, false,
			     "no options/userstacktrace_delay in %s (kernel without the deferred ftrace series)",
			     dir);
}

static int ust_probe_perf_open(struct perf_event_attr *a)
{
	return (int)syscall(SYS_perf_event_open, a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}


/* A sampling event with a callchain, as any machine can open. */
static void ust_probe_perf_attr(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;	/* no hardware PMU needed */
	a->sample_period = 1000000;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	a->disabled = 1;
}

bool ust_probe_perf_defer_output(void)
{
	struct perf_event_attr a;
	int fd;

	ust_probe_perf_attr(&a);
	ust_perf_attr_set_defer(&a);
	ust_perf_attr_set_defer_output(&a);
	fd = ust_probe_perf_open(&a);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static bool ust_probe_perf_defer(char *reason, size_t len)
{
	struct perf_event_attr a;
	int fd, err;

	ust_probe_perf_attr(&a);

	/* First without the bit: a refusal then says nothing about it. */
	fd = ust_probe_perf_open(&a);
	if (fd < 0)
		return ust_probe_say(reason, len, false, "perf_event_open(cpu-clock) fails: %s",
				     strerror(errno));
	close(fd);

	ust_perf_attr_set_defer(&a);
	fd = ust_probe_perf_open(&a);
	if (fd >= 0) {
		close(fd);
		return ust_probe_say(reason, len, true, "cpu-clock event with defer_callchain accepted");
	}
	err = errno;
	if (err == EINVAL || err == E2BIG)
		return ust_probe_say(reason, len, false,
				     "perf_event_open rejects the defer_callchain bit (%s)",
				     err == EINVAL ? "EINVAL" : "E2BIG");
	return ust_probe_say(reason, len, false, "perf_event_open with defer_callchain: %s",
			     strerror(err));
}

static bool ust_probe_btf(char *reason, size_t len)
{
	if (access(UST_BTF_VMLINUX, R_OK) == 0)
		return ust_probe_say(reason, len, true, UST_BTF_VMLINUX " readable");
	return ust_probe_say(reason, len, false, UST_BTF_VMLINUX ": %s (CONFIG_DEBUG_INFO_BTF off?)",
			     strerror(errno));
}

static bool ust_probe_uprobes(char *reason, size_t len)
{
	if (ust_probe_tracefs_has("uprobe_events", NULL, 0))
		return ust_probe_say(reason, len, true, "uprobe_events in tracefs");
	if (access("/sys/bus/event_source/devices/uprobe/type", F_OK) == 0)
		return ust_probe_say(reason, len, true,
				     "perf uprobe PMU present (no uprobe_events in tracefs)");
	return ust_probe_say(reason, len, false, "no uprobe_events and no uprobe PMU");
}

static bool ust_probe_kprobes(char *reason, size_t len)
{
	if (ust_probe_tracefs_has("kprobe_events", NULL, 0))
		return ust_probe_say(reason, len, true, "kprobe_events in tracefs");
	return ust_probe_say(reason, len, false,
			     "no kprobe_events in tracefs (kprobes not configured)");
}

#ifdef UST_HAVE_LIBBPF
/*
 * The unwinder's own programs, loaded and unloaded (not a toy program: a
 * kernel may load a trivial one and refuse the real ones).
 */
static bool ust_probe_bpf_tracepoint(char *reason, size_t len)
{
	return ust_bpfu_probe(false, reason, len);
}

/* The task_work variant of the unwinder, as the recorder would load it. */
static bool ust_probe_bpf_task_work(char *reason, size_t len)
{
	return ust_bpfu_probe(true, reason, len);
}

static bool ust_probe_bpf_find_vma(char *reason, size_t len)
{
	int ret = libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_find_vma, NULL);

	if (ret > 0)
		return ust_probe_say(reason, len, true, "helper available to tracepoint programs");
	if (ret == 0)
		return ust_probe_say(reason, len, false, "helper unknown or not allowed (kernel < 5.17?)");
	return ust_probe_say(reason, len, false, "cannot probe: %s", strerror(-ret));
}

/*
 * Load (never attach) "r0 = 0; exit" as fentry on a harmless function.
 * An EPERM with an empty verifier log means a policy refused the program
 * type before the verifier ran, as on sandboxed kernels.
 */
static bool ust_probe_bpf_tracing(char *reason, size_t len)
{
	static const char *const targets[] = { "bpf_fentry_test1", "__x64_sys_getppid", "schedule" };
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o);
	const char *target = NULL;
	const struct btf *btf = ust_kbtf();
	char log[4096] = "";
	int id = -1, fd, err;
	size_t i;

	if (!btf)
		return ust_probe_say(reason, len, false, "no vmlinux BTF to attach to");
	for (i = 0; i < sizeof(targets) / sizeof(targets[0]) && id < 0; i++) {
		id = btf__find_by_name_kind(btf, targets[i], BTF_KIND_FUNC);
		target = targets[i];
	}
	if (id < 0)
		return ust_probe_say(reason, len, false, "no known function to attach a probe program to");

	o.expected_attach_type = BPF_TRACE_FENTRY;
	o.attach_btf_id = (__u32)id;
	o.log_buf = log;
	o.log_size = sizeof(log);
	o.log_level = 1;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "ust_probe", "GPL", insns, 2, &o);
	if (fd >= 0) {
		close(fd);
		return ust_probe_say(reason, len, true, "fentry program on %s loads", target);
	}
	err = errno;
	if (err == EPERM && !log[0])
		return ust_probe_say(reason, len, false,
				     "refused by this kernel (EPERM before the verifier)");
	return ust_probe_say(reason, len, false, "fentry load failed: %s", strerror(err));
}
#else
static bool ust_probe_no_libbpf(char *reason, size_t len)
{
	return ust_probe_say(reason, len, false, "not probed: ustitch built without libbpf");
}
#define ust_probe_bpf_tracepoint ust_probe_no_libbpf
#define ust_probe_bpf_task_work ust_probe_no_libbpf
#define ust_probe_bpf_find_vma ust_probe_no_libbpf
#define ust_probe_bpf_tracing ust_probe_no_libbpf
#endif

bool ust_probe_one(enum ust_probe_id id, char *reason, size_t len)
{
	switch (id) {
	case UST_PROBE_FTRACE_DEFERRED:
		return ust_probe_ftrace_deferred(reason, len);
	case UST_PROBE_PERF_DEFER:
		return ust_probe_perf_defer(reason, len);
	case UST_PROBE_BTF:
		return ust_probe_btf(reason, len);
	case UST_PROBE_BPF_TRACEPOINT:
		return ust_probe_bpf_tracepoint(reason, len);
	case UST_PROBE_BPF_TASK_WORK:
		return ust_probe_bpf_task_work(reason, len);
	case UST_PROBE_BPF_FIND_VMA:
		return ust_probe_bpf_find_vma(reason, len);
	case UST_PROBE_BPF_TRACING:
		return ust_probe_bpf_tracing(reason, len);
	case UST_PROBE_KPROBES:
		return ust_probe_kprobes(reason, len);
	case UST_PROBE_UPROBES:
		return ust_probe_uprobes(reason, len);
	case UST_PROBE__COUNT:
		break;
	}
	return ust_probe_say(reason, len, false, "unknown probe");
}

void ust_probe_run(struct ust_probe_report *r)
{
	int i;

	for (i = 0; i < UST_PROBE__COUNT; i++) {
		struct ust_probe_item *it = &r->items[i];

		it->name = ust_probe_names[i];
		it->available = ust_probe_one((enum ust_probe_id)i, it->reason, sizeof(it->reason));
	}
}

int ust_probe_print(const struct ust_probe_report *r, FILE *out)
{
	int i;

	for (i = 0; i < UST_PROBE__COUNT; i++) {
		const struct ust_probe_item *it = &r->items[i];

		if (fprintf(out, "%s: %s \u2014 %s\n", it->name, it->available ? "yes" : "no",
			    it->reason) < 0)
			return -EIO;
	}
	return UST_PROBE__COUNT;
}
