// SPDX-License-Identifier: LGPL-2.1
/* The BPF record spool: a temporary file plus a small index. */
#include <errno.h>
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

struct ust_rec_spool {
	FILE *f;
	char *vbuf;			/* f's buffer, SPOOL_BUF bytes */
	uint64_t off;
	struct spool_ent *ents;
	size_t nr, cap;
};

struct ust_rec_spool *ust_rec_spool_new(void)
{
	struct ust_rec_spool *s = calloc(1, sizeof(*s));

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
	return s;
}

/* A failed call's errno, negated (errno kept for callers that read it). */
static int neg_errno(void)
{
	if (!errno)
		errno = EIO;
	return -errno;
}

int ust_rec_spool_add(struct ust_rec_spool *s, unsigned int cpu, uint64_t ts,
		  const void *data, size_t len)
{
	struct spool_ent *e;

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
	e->seq = s->nr;
	e->off = s->off;
	e->cpu = cpu;
	e->len = (uint32_t)len;
	s->off += len;
	s->nr++;
	return 0;
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

int ust_rec_spool_write(struct ust_rec_spool *s, struct ust_tdw *w, int buf, int nr_cpus)
{
	unsigned char *data = NULL, *map = NULL;
	size_t cap = 0;
	unsigned long i;
	int fd, ret = 0;

	if (fflush(s->f))
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
	for (i = 0; i < s->nr && ret >= 0; i++) {
		struct spool_ent *e = &s->ents[i];
		const void *bytes;

		if ((int)e->cpu >= nr_cpus)
			continue;
		if (!e->len) {
			ret = ust_tdw_lost(w, buf, (int)e->cpu, (unsigned long)e->off, NULL, 0);
			continue;
		}
		bytes = spool_bytes(fd, map, e, &data, &cap);
		if (!bytes) {
			ret = neg_errno();
			break;
		}
		ret = ust_tdw_event(w, buf, (int)e->cpu, e->ts, bytes, e->len, NULL, 0);
	}
	if (map)
		munmap(map, (size_t)s->off);
	free(data);
	if (ret < 0) {
		errno = -ret;
		return ret;
	}
	return 0;
}

unsigned long ust_rec_spool_count(const struct ust_rec_spool *s)
{
	return s->nr;
}

void ust_rec_spool_free(struct ust_rec_spool *s)
{
	if (!s)
		return;
	if (s->f)
		fclose(s->f);
	free(s->vbuf);
	free(s->ents);
	free(s);
}
