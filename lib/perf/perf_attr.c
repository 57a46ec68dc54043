// SPDX-License-Identifier: LGPL-2.1
/* ust_perf_attr: names as tools/perf/util/parse-events.c spells them. */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ustitch/perf_attr.h"

struct evname {
	const char *name;
	uint32_t type;
	uint64_t config;
};

static const struct evname names[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
};

#define NR_NAMES (sizeof(names) / sizeof(names[0]))

const char *ust_perf_event_name(size_t i)
{
	return i < NR_NAMES ? names[i].name : NULL;
}

bool ust_perf_event_by_name(const char *name, uint32_t *type, uint64_t *config)
{
	size_t i;

	for (i = 0; i < NR_NAMES; i++) {
		if (!strcmp(names[i].name, name)) {
			*type = names[i].type;
			*config = names[i].config;
			return true;
		}
	}
	return false;
}

void ust_perf_attr_set_defer(struct perf_event_attr *a)
{
	struct perf_event_attr t;
	unsigned char *tb = (unsigned char *)&t, *ab = (unsigned char *)a;
	size_t i;

	memset(&t, 0, sizeof(t));
	t.sigtrap = 1;
	for (i = 0; i < sizeof(t); i++) {
		if (tb[i]) {
			int bit = __builtin_ctz(tb[i]) + 1;

			ab[i + bit / 8] |= (unsigned char)(1u << (bit % 8));
			return;
		}
	}
}

int ust_perf_open(struct perf_event_attr *a, pid_t pid, int cpu, int group_fd,
		  unsigned long flags)
{
	int fd = (int)syscall(SYS_perf_event_open, a, pid, cpu, group_fd,
			      flags | PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}
