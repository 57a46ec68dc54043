// SPDX-License-Identifier: LGPL-2.1
/* ust_perf_attr: names as tools/perf/util/parse-events.c spells them. */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ustitch/abi.h"
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

/* Byte and mask of the flag @after bits past sigtrap's. */
static size_t attr_bit(unsigned int after, unsigned char *mask)
{
	struct perf_event_attr t;
	const unsigned char *tb = (const unsigned char *)&t;
	size_t i;

	memset(&t, 0, sizeof(t));
	t.sigtrap = 1;
	for (i = 0; !tb[i]; i++)
		;
	after += (unsigned int)__builtin_ctz(tb[i]);
	*mask = (unsigned char)(1u << (after % 8));
	return i + after / 8;
}

void ust_perf_attr_set(struct perf_event_attr *a, unsigned int after_sigtrap)
{
	unsigned char mask;
	size_t i = attr_bit(after_sigtrap, &mask);

	((unsigned char *)a)[i] |= mask;
}

bool ust_perf_attr_is_set(const struct perf_event_attr *a, unsigned int after_sigtrap)
{
	unsigned char mask;
	size_t i = attr_bit(after_sigtrap, &mask);

	return ((const unsigned char *)a)[i] & mask;
}

void ust_perf_attr_set_defer(struct perf_event_attr *a)
{
	ust_perf_attr_set(a, UST_ABI_PERF_ATTR_DEFER_CALLCHAIN_AFTER_SIGTRAP);
}

void ust_perf_attr_set_defer_output(struct perf_event_attr *a)
{
	ust_perf_attr_set(a, UST_ABI_PERF_ATTR_DEFER_OUTPUT_AFTER_SIGTRAP);
}

int ust_perf_open(struct perf_event_attr *a, pid_t pid, int cpu, int group_fd,
		  unsigned long flags)
{
	int fd = (int)syscall(SYS_perf_event_open, a, pid, cpu, group_fd,
			      flags | PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}
