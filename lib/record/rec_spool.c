// SPDX-License-Identifier: LGPL-2.1
/*
 * The BPF record spool: the records in a temporary file, and their index
 * (time, CPU, place) in memory until it holds RUN_ENTS entries; then
 * sorted and written to a second temporary file as a run.  At the end the
 * runs and what is left in memory are merged, by CPU then time, into the
 * trace: a recording of any length holds at most one run of the index
 * (8 MB), not 32 bytes a record for all of its records.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ustitch/grow.h"
#include "ustitch/tdw.h"
#include "ustitch/rec.h"

struct spool_ent {
	uint64_t ts;
	uint64_t seq;
	uint64_t off;
	uint32_t cpu;
	uint32_t len;
};

/* The spool's stdio buffer. */
#define SPOOL_BUF (256 * 1024)
/* Index entries held before they go to disk as a sorted run (test aid: USTITCH_TEST_SPOOL_RUN). */
#define RUN_ENTS (256 * 1024)

struct ust_rec_spool {
	FILE *f;
	char *vbuf;			/* f's buffer, SPOOL_BUF bytes */
	uint64_t off;
	struct spool_ent *ents;
	size_t nr, cap;
	size_t run_ents;		/* RUN_ENTS, or the test's */
	uint64_t seq;			/* records so far, lost marks included */
	FILE *runs;			/* the sorted runs, one after the other; NULL: none yet */
	size_t *run_nr;			/* entries of each run */
	size_t nr_runs, cap_runs;
};

struct ust_rec_spool *ust_rec_spool_new(void)
{
	struct ust_rec_spool *s = calloc(1, sizeof(*s));
	const char *v;
	long run;

	if (!s)
		return NULL;
	s->f = tmpfile();
	if (!s->f) {
		free(s);
		return NULL;
	}
	/*
	 * Records of a few dozen bytes each, written in large blocks
	 * (glibc takes a size only with a buffer; its own is 4 KiB).
	 */
	s->vbuf = malloc(SPOOL_BUF);
	if (s->vbuf)
		setvbuf(s->f, s->vbuf, _IOFBF, SPOOL_BUF);
	v = getenv("USTITCH_TEST_SPOOL_RUN");
	run = v ? atol(v) : 0;
	s->run_ents = run > 0 ? (size_t)run : RUN_ENTS;
	return s;
}

/* A failed call's errno, negated (errno kept for callers that read it). */
static int neg_errno(void)
{
	if (!errno)
		errno = EIO;
	return -errno;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct spool_ent *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The index held, sorted, to the runs file. */
static int spill(struct ust_rec_spool *s)
{
	if (!s->runs) {
		s->runs = tmpfile();
		if (!s->runs)
			return neg_errno();
	}
	if (s->nr_runs == s->cap_runs) {
		void *n = ust_grow(s->run_nr, &s->cap_runs, s->nr_runs + 1, sizeof(*s->run_nr), 16);

		if (!n)
			return neg_errno();
		s->run_nr = n;
	}
	qsort(s->ents, s->nr, sizeof(*s->ents), cmp_ent);
	if (fwrite(s->ents, sizeof(*s->ents), s->nr, s->runs) != s->nr)
		return neg_errno();
	s->run_nr[s->nr_runs++] = s->nr;
	s->nr = 0;
	return 0;
}

int ust_rec_spool_add(struct ust_rec_spool *s, unsigned int cpu, uint64_t ts,
		  const void *data, size_t len)
{
	struct spool_ent *e;
	int ret;

	if (s->nr >= s->run_ents && (ret = spill(s)))
		return ret;
	if (s->nr == s->cap) {
		void *n = ust_grow(s->ents, &s->cap, s->nr + 1, sizeof(*s->ents), 4096);

		if (!n)
			return neg_errno();
		s->ents = n;
	}
	if (fwrite(data, 1, len, s->f) != len)
		return neg_errno();
	e = &s->ents[s->nr];
	e->ts = ts;
	e->seq = s->seq++;
	e->off = s->off;
	e->cpu = cpu;
	e->len = (uint32_t)len;
	s->off += len;
	s->nr++;
	return 0;
}

/* A lost mark is an entry of length 0 whose offset holds the count. */
int ust_rec_spool_add_lost(struct ust_rec_spool *s, unsigned int cpu, uint64_t ts, uint64_t count)
{
	struct spool_ent *e;
	int ret = ust_rec_spool_add(s, cpu, ts, "", 0);

	if (ret)
		return ret;
	e = &s->ents[s->nr - 1];
	e->off = count;
	return 0;
}

/* Entry @e's bytes: from the mapped spool, else read into @data. */
static const void *spool_bytes(int fd, const unsigned char *map, const struct spool_ent *e,
			       unsigned char **data, size_t *cap)
{
	if (map)
		return map + e->off;
	if (e->len > *cap) {
		void *n = realloc(*data, e->len);

		if (!n)
			return NULL;
		*data = n;
		*cap = e->len;
	}
	if (pread(fd, *data, e->len, (off_t)e->off) != (ssize_t)e->len)
		return NULL;
	return *data;
}

/* One sorted run being merged: its entries, and the next one's index. */
struct cursor {
	const struct spool_ent *e;
	size_t nr, at;
};

/* Is cursor @x's next entry before @y's? */
static bool before(const struct cursor *x, const struct cursor *y)
{
	return cmp_ent(&x->e[x->at], &y->e[y->at]) < 0;
}

/* The min-heap of cursors @h[0..n), restored downward from @i. */
static void sift(struct cursor *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct cursor t;

		if (l < n && before(&h[l], &h[m]))
			m = l;
		if (l + 1 < n && before(&h[l + 1], &h[m]))
			m = l + 1;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Entry @e into the trace. */
static int put_ent(struct ust_tdw *w, int buf, int nr_cpus, int fd, const unsigned char *map,
		   const struct spool_ent *e, unsigned char **data, size_t *cap)
{
	const void *bytes;

	if ((int)e->cpu >= nr_cpus)
		return 0;
	if (!e->len)
		return ust_tdw_lost(w, buf, (int)e->cpu, (unsigned long)e->off, NULL, 0);
	bytes = spool_bytes(fd, map, e, data, cap);
	if (!bytes)
		return neg_errno();
	return ust_tdw_event(w, buf, (int)e->cpu, e->ts, bytes, e->len, NULL, 0);
}

int ust_rec_spool_write(struct ust_rec_spool *s, struct ust_tdw *w, int buf, int nr_cpus)
{
	unsigned char *data = NULL, *map = NULL, *runs = NULL;
	size_t cap = 0, runs_len = 0, n = 0, i, at = 0;
	struct cursor *h = NULL;
	int fd, ret = 0;

	if (fflush(s->f) || (s->runs && fflush(s->runs)))
		return neg_errno();
	fd = fileno(s->f);
	/*
	 * Read back mapped: one pread() per record was most of the
	 * recorder's own CPU per sample (four records a sample).
	 */
	if (s->off && s->off <= SIZE_MAX) {
		map = mmap(NULL, (size_t)s->off, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED)
			map = NULL;
		else
			madvise(map, (size_t)s->off, MADV_SEQUENTIAL);
	}
	qsort(s->ents, s->nr, sizeof(*s->ents), cmp_ent);
	/* The runs on disk and the one in memory, merged through a heap. */
	h = calloc(s->nr_runs + 1, sizeof(*h));
	if (!h) {
		ret = neg_errno();
		goto out;
	}
	if (s->nr_runs) {
		for (i = 0; i < s->nr_runs; i++)
			runs_len += s->run_nr[i] * sizeof(struct spool_ent);
		runs = mmap(NULL, runs_len, PROT_READ, MAP_PRIVATE, fileno(s->runs), 0);
		if (runs == MAP_FAILED) {
			runs = NULL;
			ret = neg_errno();
			goto out;
		}
	}
	for (i = 0; i < s->nr_runs; i++) {	/* never empty: spill() runs full */
		h[n++] = (struct cursor){ .e = (const struct spool_ent *)(runs + at),
					  .nr = s->run_nr[i] };
		at += s->run_nr[i] * sizeof(struct spool_ent);
	}
	if (s->nr)
		h[n++] = (struct cursor){ .e = s->ents, .nr = s->nr };
	for (i = n; i-- > 0;)
		sift(h, n, i);
	while (n && ret >= 0) {
		ret = put_ent(w, buf, nr_cpus, fd, map, &h[0].e[h[0].at], &data, &cap);
		if (++h[0].at == h[0].nr)
			h[0] = h[--n];
		sift(h, n, 0);
	}
out:
	if (runs)
		munmap(runs, runs_len);
	if (map)
		munmap(map, (size_t)s->off);
	free(h);
	free(data);
	if (ret < 0) {
		errno = -ret;
		return ret;
	}
	return 0;
}

unsigned long ust_rec_spool_count(const struct ust_rec_spool *s)
{
	return (unsigned long)s->seq;
}

void ust_rec_spool_free(struct ust_rec_spool *s)
{
	if (!s)
		return;
	if (s->f)
		fclose(s->f);
	if (s->runs)
		fclose(s->runs);
	free(s->vbuf);
	free(s->ents);
	free(s->run_nr);
	free(s);
}
