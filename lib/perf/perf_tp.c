// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_perf_tp: perf tracepoint events per CPU and their samples, for
 * lock_held() and --addr-filter events.  The rings are ust_perf_rings.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <tracefs/tracefs.h>

#include "ustitch/perf_tp.h"

static int tp_id(const char *sys, const char *ev)
{
	char path[1024], buf[32];
	FILE *f;
	int id = -1;

	snprintf(path, sizeof(path), "%s/events/%s/%s/id", tracefs_tracing_dir(), sys, ev);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		id = atoi(buf);
	fclose(f);
	return id;
}

int ust_perf_tp_open(struct ust_perf_tp *p, const char *sys, const char *ev, const char *filter,
		     bool callchain, unsigned int pages, char *err, size_t errsz)
{
	struct perf_event_attr a;
	int id = tp_id(sys, ev), cpu, opened = 0, ret;

	memset(p, 0, sizeof(*p));
	if (id < 0) {
		snprintf(err, errsz, "%s:%s: no such event", sys, ev);
		return -ENOENT;
	}
	p->nr_cpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	p->callchain = callchain;
	p->fds = malloc((size_t)p->nr_cpus * sizeof(*p->fds));
	p->rings = calloc((size_t)p->nr_cpus, sizeof(*p->rings));
	if (!p->fds || !p->rings) {
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	for (cpu = 0; cpu < p->nr_cpus; cpu++)
		p->fds[cpu] = -1;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (uint64_t)id;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW |
			(callchain ? PERF_SAMPLE_CALLCHAIN : 0);
	a.exclude_callchain_user = 1;	/* user stacks come deferred, from the unwinder */
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;	/* = ftrace's "mono" = bpf_ktime_get_ns() */
	a.disabled = 1;
	a.watermark = 1;
	a.wakeup_watermark = 4096 * pages / 4;
	a.read_format = PERF_FORMAT_LOST;
	p->lost_fmt = true;
	for (cpu = 0; cpu < p->nr_cpus; cpu++) {
		p->fds[cpu] = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (p->fds[cpu] < 0 && errno == EINVAL && p->lost_fmt) {
			/* Before 6.0: count the PERF_RECORD_LOST records only. */
			a.read_format = 0;
			p->lost_fmt = false;
			p->fds[cpu] = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1,
						   PERF_FLAG_FD_CLOEXEC);
		}
		if (p->fds[cpu] < 0) {
			if (errno == ENODEV || errno == EINVAL)
				continue;	/* offline CPU */
			ret = -errno;
			snprintf(err, errsz, "perf_event_open(%s:%s, CPU %d): %s", sys, ev, cpu,
				 strerror(-ret));
			return ret;
		}
		if (filter && ioctl(p->fds[cpu], PERF_EVENT_IOC_SET_FILTER, filter)) {
			ret = errno ? -errno : -EINVAL;
			snprintf(err, errsz, "filter rejected by the kernel for %s:%s: '%s'", sys, ev,
				 filter);
			return ret;
		}
		ret = ust_perf_ring_mmap(&p->rings[cpu].r, p->fds[cpu], pages);
		if (ret) {
			snprintf(err, errsz, "mapping the perf buffer of CPU %d: %s", cpu,
				 strerror(-ret));
			return ret;
		}
		opened++;
	}
	if (!opened) {
		snprintf(err, errsz, "perf_event_open(%s:%s): no CPU", sys, ev);
		return -ENODEV;
	}
	return 0;
}

int ust_perf_tp_fd(const struct ust_perf_tp *p)
{
	int cpu;

	for (cpu = 0; cpu < p->nr_cpus; cpu++)
		if (p->fds[cpu] >= 0)
			return p->fds[cpu];
	return -ENOENT;
}

int ust_perf_tp_enable(struct ust_perf_tp *p, bool on)
{
	int cpu, r = 0;

	for (cpu = 0; cpu < p->nr_cpus; cpu++)
		if (p->fds[cpu] >= 0 &&
		    ioctl(p->fds[cpu], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0))
			r = -errno;
	return r;
}

void ust_perf_tp_snapshot(struct ust_perf_tp *p)
{
	int cpu;

	for (cpu = 0; cpu < p->nr_cpus; cpu++)
		if (p->rings[cpu].r.map)
			ust_perf_ring_snapshot(&p->rings[cpu].r);
}

int ust_perf_tp_parse(const void *body, size_t len, bool callchain, struct ust_perf_tp_sample *s)
{
	const uint8_t *b = body, *end = b + len;
	uint64_t nr;
	uint32_t raw;

	memset(s, 0, sizeof(*s));
	if (len < 24)
		return -EINVAL;
	memcpy(&s->pid, b, 4);
	memcpy(&s->tid, b + 4, 4);
	memcpy(&s->time, b + 8, 8);
	memcpy(&s->cpu, b + 16, 4);
	b += 24;
	if (callchain) {
		if (end - b < 8)
			return -EINVAL;
		memcpy(&nr, b, 8);
		b += 8;
		if (nr > (uint64_t)(end - b) / 8)
			return -EINVAL;
		s->nr_ips = nr;
		s->ips = (const uint64_t *)b;	/* records are 8-byte aligned */
		b += nr * 8;
	}
	if (end - b < 4)
		return -EINVAL;
	memcpy(&raw, b, 4);
	b += 4;
	if (raw > (uint64_t)(end - b) || raw < 8)
		return -EINVAL;
	s->raw = b;
	s->raw_size = raw;
	return 0;
}

struct lh_read_ctx {
	struct ust_perf_tp *p;
	struct ust_perf_tp_ring *ring;
	void (*fn)(const struct ust_perf_tp_sample *s, void *ctx);
	void *ctx;
	long n;
};

static int lh_record(const void *rec, size_t size, void *data)
{
	const struct perf_event_header *h = rec;
	struct lh_read_ctx *c = data;

	if (h->type == PERF_RECORD_SAMPLE) {
		struct ust_perf_tp_sample s;

		if (!ust_perf_tp_parse((const uint8_t *)rec + sizeof(*h), size - sizeof(*h),
				       c->p->callchain, &s)) {
			c->p->samples++;
			c->fn(&s, c->ctx);
			c->n++;
		} else {
			c->p->bad++;
		}
	} else if (h->type == PERF_RECORD_LOST && size >= sizeof(*h) + 16) {
		uint64_t lost;

		memcpy(&lost, (const uint8_t *)rec + sizeof(*h) + 8, 8);
		c->ring->lost_rec += lost;
	}
	return 0;
}

long ust_perf_tp_read(struct ust_perf_tp *p, int cpu,
		      void (*fn)(const struct ust_perf_tp_sample *s, void *ctx), void *ctx)
{
	struct lh_read_ctx c = { .p = p, .ring = &p->rings[cpu], .fn = fn, .ctx = ctx };
	struct ust_perf_ring *r = &p->rings[cpu].r;
	uint64_t bad = r->bad;
	long ret;

	if (!r->map)
		return 0;
	ret = ust_perf_ring_read(r, lh_record, &c);
	if (ret < 0)
		return ret;
	p->bad += r->bad - bad;
	return c.n;
}

uint64_t ust_perf_tp_take_lost(struct ust_perf_tp *p, int cpu)
{
	struct ust_perf_tp_ring *r = &p->rings[cpu];
	uint64_t v[2], lost = r->lost_rec, n;

	if (p->lost_fmt && p->fds[cpu] >= 0 && read(p->fds[cpu], v, sizeof(v)) == sizeof(v) &&
	    v[1] > lost)
		lost = v[1];
	n = lost > r->lost_marked ? lost - r->lost_marked : 0;
	r->lost_marked += n;
	p->lost += n;
	return n;
}

int ust_perf_tp_wait_fds(const struct ust_perf_tp *p, int epfd)
{
	struct epoll_event e = { .events = EPOLLIN };
	int cpu;

	for (cpu = 0; cpu < p->nr_cpus; cpu++)
		if (p->fds[cpu] >= 0 && epoll_ctl(epfd, EPOLL_CTL_ADD, p->fds[cpu], &e))
			return -errno;
	return 0;
}

bool ust_perf_tp_busy(const struct ust_perf_tp *p)
{
	int cpu;

	for (cpu = 0; cpu < p->nr_cpus; cpu++) {
		const struct ust_perf_ring *r = &p->rings[cpu].r;

		if (r->map && ust_perf_ring_pending(r) >= r->size / 8)
			return true;
	}
	return false;
}

void ust_perf_tp_close(struct ust_perf_tp *p)
{
	int cpu;

	for (cpu = 0; p->rings && cpu < p->nr_cpus; cpu++)
		ust_perf_ring_fini(&p->rings[cpu].r);
	for (cpu = 0; p->fds && cpu < p->nr_cpus; cpu++)
		if (p->fds[cpu] >= 0)
			close(p->fds[cpu]);
	free(p->fds);
	free(p->rings);
	memset(p, 0, sizeof(*p));
}
