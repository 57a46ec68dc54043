// SPDX-License-Identifier: LGPL-2.1
/*
 * Live test of ust_probe: every probe answers with a name, yes/no and a
 * reason, printed as `ustitch probe` prints them; and on this machine's
 * kernel the known answers: fentry refused before the verifier, no
 * native deferred ftrace events, the unwinder's programs load (unless
 * built without libbpf).
 * UST_LIVE_ANY_KERNEL=1 keeps only the format checks, for other kernels.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ustitch/bpfu.h"
#include "ustitch/probe.h"

static int fails;

#define CHECK(cond, ...)							\
	do {									\
		if (!(cond)) {							\
			fails++;						\
			fprintf(stderr, "FAIL %s:%d: %s: ", __func__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);				\
			fputc('\n', stderr);					\
		}								\
	} while (0)

static const char *const names[UST_PROBE__COUNT] = {
	"ftrace-deferred-unwind", "perf-defer-callchain", "btf", "bpf-tracepoint",
	"bpf-task-work", "bpf-find-vma", "bpf-tracing-progs", "kprobes", "uprobes",
};

int main(void)
{
	struct ust_probe_report r;
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	const char *any = getenv("UST_LIVE_ANY_KERNEL");
	FILE *f;
	int i, n;

	if (geteuid() != 0) {
		printf("skipped: needs root\n");
		return 77;
	}
	ust_probe_run(&r);
	f = open_memstream(&text, &len);
	if (!f)
		return 1;
	n = ust_probe_print(&r, f);
	fclose(f);
	fputs(text, stdout);
	CHECK(n == UST_PROBE__COUNT, "%d lines", n);

	/* Format: "name: yes|no — reason", in enum order. */
	line = strtok_r(text, "\n", &save);
	for (i = 0; i < UST_PROBE__COUNT; i++, line = strtok_r(NULL, "\n", &save)) {
		char head[128];
		const char *reason;

		CHECK(line, "line %d missing", i);
		if (!line)
			break;
		CHECK(!strcmp(r.items[i].name, names[i]), "item %d is %s", i, r.items[i].name);
		snprintf(head, sizeof(head), "%s: %s \xe2\x80\x94 ", names[i],
			 r.items[i].available ? "yes" : "no");
		CHECK(!strncmp(line, head, strlen(head)), "line \"%s\"", line);
		reason = line + strlen(head);
		CHECK(strlen(reason) > 3 && !strchr(reason, '\n'), "reason of %s", names[i]);
		CHECK(!strcmp(reason, r.items[i].reason), "reason differs");
	}
	CHECK(!line, "extra line \"%s\"", line ? line : "");

	/* The same answers one at a time. */
	for (i = 0; i < UST_PROBE__COUNT; i++)
		CHECK(ust_probe_one((enum ust_probe_id)i, NULL, 0) == r.items[i].available,
		      "%s differs when probed alone", names[i]);

	if (!(any && !strcmp(any, "1"))) {
		CHECK(!r.items[UST_PROBE_FTRACE_DEFERRED].available, "native ftrace");
		CHECK(!r.items[UST_PROBE_PERF_DEFER].available, "perf defer");
		CHECK(r.items[UST_PROBE_BTF].available, "btf");
		CHECK(!r.items[UST_PROBE_KPROBES].available, "kprobes");
	}
	if (!(any && !strcmp(any, "1")) && !strstr(r.items[UST_PROBE_BPF_TASK_WORK].reason,
						   "without libbpf")) {
		/*
		 * Task_work from tracepoint programs: this kernel's stable
		 * updates have gone both ways (6.18.44 refuses it).  Either
		 * way, the reason names the kfunc or what was refused.
		 */
		CHECK(strstr(r.items[UST_PROBE_BPF_TASK_WORK].reason, "task_work"),
		      "task_work reason \"%s\"", r.items[UST_PROBE_BPF_TASK_WORK].reason);
		CHECK(!r.items[UST_PROBE_BPF_TRACING].available, "tracing progs");
		CHECK(!strcmp(r.items[UST_PROBE_BPF_TRACING].reason,
			      "refused by this kernel (EPERM before the verifier)"),
		      "tracing reason \"%s\"", r.items[UST_PROBE_BPF_TRACING].reason);
		CHECK(r.items[UST_PROBE_BPF_TRACEPOINT].available, "tracepoint progs");
		CHECK(r.items[UST_PROBE_BPF_FIND_VMA].available, "find_vma");
	}
	free(text);
	return fails ? 1 : 0;
}
