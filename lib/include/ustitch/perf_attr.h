/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_perf_attr: perf's event names (the `perf list` spelling of the
 * generic software and hardware events) and the attr bits this project
 * needs but the system's <linux/perf_event.h> may predate.
 */
#ifndef USTITCH_PERF_ATTR_H
#define USTITCH_PERF_ATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/perf_event.h>

/* "cpu-clock", "page-faults", "cycles", ...: type and config, or false. */
bool ust_perf_event_by_name(const char *name, uint32_t *type, uint64_t *config);
/* The @i-th name (aliases included), NULL past the last: for usage texts. */
const char *ust_perf_event_name(size_t i);

/*
 * attr.defer_callchain and attr.defer_output (UST_ABI_PERF_ATTR_*): set
 * through sigtrap's position, found at run time, so that they are right
 * with any <linux/perf_event.h> that has sigtrap.  _set() and _is_set()
 * take any flag bit by its place after sigtrap (the tests that hold the
 * bits against the kernel also set the one after the last).
 */
void ust_perf_attr_set_defer(struct perf_event_attr *a);
void ust_perf_attr_set_defer_output(struct perf_event_attr *a);
void ust_perf_attr_set(struct perf_event_attr *a, unsigned int after_sigtrap);
bool ust_perf_attr_is_set(const struct perf_event_attr *a, unsigned int after_sigtrap);

/* perf_event_open(2) with FD_CLOEXEC: the fd, or a negative errno. */
int ust_perf_open(struct perf_event_attr *a, pid_t pid, int cpu, int group_fd,
		  unsigned long flags);

#endif
