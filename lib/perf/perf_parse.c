// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_perf_parse.  A cursor walks the record; every read asks the cursor
 * first whether the bytes are there, so no count or length taken from the
 * record can send a read past its end (perf_event_header.size is the only
 * bound, and it was itself checked against the ring by the reader).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "ustitch/abi.h"
#include "ustitch/perf.h"

struct cur {
	const uint8_t *p;
	size_t off, end;	/* end: where the sample_id trailer starts */
	char *what;
	size_t whatlen;
	bool bad;
};

__attribute__((format(printf, 2, 3)))
static int bad(struct cur *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->bad && c->what && c->whatlen) {
		va_start(ap, fmt);
		vsnprintf(c->what, c->whatlen, fmt, ap);
		va_end(ap);
	}
	c->bad = true;
	return -EINVAL;
}

static bool need(struct cur *c, size_t n, const char *field)
{
	if (c->bad)
		return false;
	if (n > c->end - c->off) {
		bad(c, "%s at %zu ends past the %zu bytes of the record", field, c->off, c->end);
		return false;
	}
	return true;
}

static uint64_t u64(struct cur *c, const char *field)
{
	uint64_t v = 0;

	if (need(c, 8, field)) {
		memcpy(&v, c->p + c->off, 8);
		c->off += 8;
	}
	return v;
}

/* Two u32 in one u64 slot, as perf packs pid/tid and cpu/res. */
static void u32x2(struct cur *c, uint32_t *a, uint32_t *b, const char *field)
{
	if (need(c, 8, field)) {
		memcpy(a, c->p + c->off, 4);
		memcpy(b, c->p + c->off + 4, 4);
		c->off += 8;
	}
}

int ust_perf_layout_init(struct ust_perf_layout *l, uint64_t sample_type, bool sample_id_all,
			 char *err, size_t errsz)
{
	uint64_t extra = sample_type & ~(uint64_t)UST_PERF_SAMPLE_SUPPORTED;

	memset(l, 0, sizeof(*l));
	if (extra) {
		snprintf(err, errsz, "sample_type bits 0x%" PRIx64 " are not supported", extra);
		return -EINVAL;
	}
	l->sample_type = sample_type;
	l->sample_id_all = sample_id_all;
	if (sample_id_all) {
		static const uint64_t bits[] = { PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
						 PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
						 PERF_SAMPLE_IDENTIFIER };
		size_t i;

		for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
			if (sample_type & bits[i])
				l->id_size += 8;
	}
	return 0;
}

/* struct sample_id, at the end of every non-SAMPLE record (sample_id_all). */
static void parse_trailer(const struct ust_perf_layout *l, struct cur *c, struct ust_perf_id *id)
{
	struct cur t = *c;
	uint32_t res;

	memset(id, 0, sizeof(*id));
	if (!l->sample_id_all || !l->id_size)
		return;
	if (c->end < 8 + l->id_size) {
		bad(c, "record of %zu bytes is too short for its %u-byte sample_id", c->end,
		    l->id_size);
		return;
	}
	t.off = c->end - l->id_size;
	c->end = t.off;		/* the body must end where the trailer starts */
	if (l->sample_type & PERF_SAMPLE_TID) {
		u32x2(&t, &id->pid, &id->tid, "sample_id.tid");
		id->has |= UST_PERF_ID_TID;
	}
	if (l->sample_type & PERF_SAMPLE_TIME) {
		id->time = u64(&t, "sample_id.time");
		id->has |= UST_PERF_ID_TIME;
	}
	if (l->sample_type & PERF_SAMPLE_ID) {
		id->id = u64(&t, "sample_id.id");
		id->has |= UST_PERF_ID_ID;
	}
	if (l->sample_type & PERF_SAMPLE_STREAM_ID) {
		id->stream_id = u64(&t, "sample_id.stream_id");
		id->has |= UST_PERF_ID_STREAM;
	}
	if (l->sample_type & PERF_SAMPLE_CPU) {
		u32x2(&t, &id->cpu, &res, "sample_id.cpu");
		id->has |= UST_PERF_ID_CPU;
	}
	if (l->sample_type & PERF_SAMPLE_IDENTIFIER) {
		id->id = u64(&t, "sample_id.identifier");
		id->has |= UST_PERF_ID_ID;
	}
}

static bool is_marker(uint64_t v)
{
	return v >= UST_PERF_CONTEXT_MAX;
}

/*
 * Split the callchain at its markers.  The deferred marker must be the
 * last but one item, followed by the cookie: the kernel stops the chain
 * there (get_perf_callchain(): "goto exit_put").
 */
static int parse_chain(struct cur *c, struct ust_perf_chain *ch)
{
	enum { CTX_NONE, CTX_KERNEL, CTX_USER, CTX_OTHER } ctx = CTX_NONE;
	uint64_t nr = u64(c, "callchain.nr");
	const uint8_t *ips;
	uint64_t i;

	memset(ch, 0, sizeof(*ch));
	if (c->bad)
		return -EINVAL;
	if (nr > (c->end - c->off) / 8)
		return bad(c, "callchain of %" PRIu64 " items ends past the %zu bytes of the record",
			   nr, c->end);
	ips = c->p + c->off;
	c->off += nr * 8;
	for (i = 0; i < nr; i++) {
		uint64_t v = ust_perf_ip(ips, (unsigned int)i);

		if (v == UST_ABI_PERF_CONTEXT_USER_DEFERRED) {
			if (ch->user_kind != UST_PERF_USER_NONE)
				return bad(c, "callchain has two user parts");
			if (nr - i != UST_ABI_PERF_DEFERRED_ITEMS)
				return bad(c, "PERF_CONTEXT_USER_DEFERRED at item %" PRIu64 " of %" PRIu64 ": %s",
					   i, nr, nr - i < UST_ABI_PERF_DEFERRED_ITEMS ?
					   "its cookie is missing" : "items follow its cookie");
			ch->user_kind = UST_PERF_USER_DEFERRED;
			ch->cookie = ust_perf_ip(ips, (unsigned int)i + 1);
			break;
		}
		if (v == UST_PERF_CONTEXT_KERNEL) {
			if (ch->kernel)
				return bad(c, "callchain has two kernel parts");
			ctx = CTX_KERNEL;
			ch->kernel = ips + (i + 1) * 8;
		} else if (v == UST_PERF_CONTEXT_USER) {
			if (ch->user_kind != UST_PERF_USER_NONE)
				return bad(c, "callchain has two user parts");
			ctx = CTX_USER;
			ch->user_kind = UST_PERF_USER_IMMEDIATE;
			ch->user = ips + (i + 1) * 8;
		} else if (is_marker(v)) {
			ctx = CTX_OTHER;	/* hypervisor, guest: not ours to show */
		} else if (ctx == CTX_KERNEL) {
			ch->nr_kernel++;
		} else if (ctx == CTX_USER) {
			ch->nr_user++;
		} else {
			ch->nr_other++;
		}
	}
	return 0;
}

static int parse_sample(const struct ust_perf_layout *l, struct cur *c, struct ust_perf_event *ev)
{
	uint64_t st = l->sample_type;
	uint32_t res;

	if (st & PERF_SAMPLE_IDENTIFIER) {
		ev->id.id = u64(c, "identifier");
		ev->id.has |= UST_PERF_ID_ID;
	}
	if (st & PERF_SAMPLE_IP)
		ev->u.sample.ip = u64(c, "ip");
	if (st & PERF_SAMPLE_TID) {
		u32x2(c, &ev->id.pid, &ev->id.tid, "tid");
		ev->id.has |= UST_PERF_ID_TID;
	}
	if (st & PERF_SAMPLE_TIME) {
		ev->id.time = u64(c, "time");
		ev->id.has |= UST_PERF_ID_TIME;
	}
	if (st & PERF_SAMPLE_ADDR)
		ev->u.sample.addr = u64(c, "addr");
	if (st & PERF_SAMPLE_ID) {
		ev->id.id = u64(c, "id");
		ev->id.has |= UST_PERF_ID_ID;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		ev->id.stream_id = u64(c, "stream_id");
		ev->id.has |= UST_PERF_ID_STREAM;
	}
	if (st & PERF_SAMPLE_CPU) {
		u32x2(c, &ev->id.cpu, &res, "cpu");
		ev->id.has |= UST_PERF_ID_CPU;
	}
	if (st & PERF_SAMPLE_PERIOD)
		ev->u.sample.period = u64(c, "period");
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (parse_chain(c, &ev->u.sample.chain))
			return -EINVAL;
		ev->u.sample.has_chain = true;
	}
	if (c->bad)
		return -EINVAL;
	/* The kernel pads nothing after these fields: extra bytes mean the
	 * record is not what the layout says it is. */
	if (c->off != c->end)
		return bad(c, "sample of %zu bytes has %zu bytes after its last field", c->end,
			   c->end - c->off);
	return 0;
}

static int parse_deferred(struct cur *c, struct ust_perf_event *ev)
{
	unsigned int skip;
	uint64_t nr;

	ev->u.deferred.cookie = u64(c, "deferred.cookie");
	nr = u64(c, "deferred.nr");
	if (c->bad)
		return -EINVAL;
	if (nr > (c->end - c->off) / 8)
		return bad(c, "deferred callchain of %" PRIu64 " items ends past the %zu bytes of the record",
			   nr, c->end);
	/* The seed's PERF_CONTEXT_USER in front, or mainline's frames alone. */
	skip = nr && ust_perf_ip(c->p + c->off, 0) == UST_PERF_CONTEXT_USER;
	ev->u.deferred.ips = c->p + c->off + skip * 8;
	ev->u.deferred.nr = (unsigned int)(nr - skip);
	for (unsigned int i = 0; i < ev->u.deferred.nr; i++)
		if (is_marker(ust_perf_ip(ev->u.deferred.ips, i)))
			return bad(c, "deferred callchain has a context marker at item %u", i + skip);
	c->off += nr * 8;
	return 0;
}

/* A NUL-terminated string that fills the rest of the body (u64-padded). */
static const char *tail_string(struct cur *c, const char *field)
{
	const char *s = (const char *)c->p + c->off;

	if (c->bad || c->off >= c->end || !memchr(s, '\0', c->end - c->off)) {
		bad(c, "%s is not NUL-terminated inside the record", field);
		return NULL;
	}
	c->off = c->end;
	return s;
}

int ust_perf_parse(const struct ust_perf_layout *l, const void *rec, size_t size,
		   struct ust_perf_event *ev, char *err, size_t errsz)
{
	struct cur c = { .p = rec, .off = 8, .end = size, .what = err, .whatlen = errsz };
	uint16_t hsize;

	memset(ev, 0, sizeof(*ev));
	if (size < 8)
		return bad(&c, "record of %zu bytes is shorter than its header", size);
	memcpy(&ev->type, c.p, 4);
	memcpy(&ev->misc, c.p + 4, 2);
	memcpy(&hsize, c.p + 6, 2);
	if (hsize != size)
		return bad(&c, "header says %u bytes, the record has %zu", hsize, size);
	if (ev->type == PERF_RECORD_SAMPLE)
		return parse_sample(l, &c, ev);

	parse_trailer(l, &c, &ev->id);
	if (c.bad)
		return -EINVAL;
	switch (ev->type) {
	case UST_ABI_PERF_RECORD_CALLCHAIN_DEFERRED:
		parse_deferred(&c, ev);
		break;
	case PERF_RECORD_LOST:
		ev->u.lost.id = u64(&c, "lost.id");
		ev->u.lost.lost = u64(&c, "lost.lost");
		break;
	case PERF_RECORD_LOST_SAMPLES:
		ev->u.lost.lost = u64(&c, "lost_samples.lost");
		break;
	case PERF_RECORD_COMM:
		u32x2(&c, &ev->u.comm.pid, &ev->u.comm.tid, "comm.pid");
		ev->u.comm.comm = tail_string(&c, "comm.comm");
		ev->u.comm.exec = ev->misc & PERF_RECORD_MISC_COMM_EXEC;
		break;
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		u32x2(&c, &ev->u.task.pid, &ev->u.task.ppid, "task.pid");
		u32x2(&c, &ev->u.task.tid, &ev->u.task.ptid, "task.tid");
		ev->u.task.time = u64(&c, "task.time");
		break;
	case PERF_RECORD_MMAP2: {
		uint64_t ino_gen;

		u32x2(&c, &ev->u.mmap2.pid, &ev->u.mmap2.tid, "mmap2.pid");
		ev->u.mmap2.addr = u64(&c, "mmap2.addr");
		ev->u.mmap2.len = u64(&c, "mmap2.len");
		ev->u.mmap2.pgoff = u64(&c, "mmap2.pgoff");
		ev->u.mmap2.build_id = ev->misc & PERF_RECORD_MISC_MMAP_BUILD_ID;
		/* maj, min, ino, ino_generation, or the build-id in their place */
		u32x2(&c, &ev->u.mmap2.maj, &ev->u.mmap2.min, "mmap2.maj");
		ev->u.mmap2.ino = u64(&c, "mmap2.ino");
		ino_gen = u64(&c, "mmap2.ino_generation");
		(void)ino_gen;
		if (ev->u.mmap2.build_id)
			ev->u.mmap2.maj = ev->u.mmap2.min = 0, ev->u.mmap2.ino = 0;
		u32x2(&c, &ev->u.mmap2.prot, &ev->u.mmap2.flags, "mmap2.prot");
		ev->u.mmap2.filename = tail_string(&c, "mmap2.filename");
		break;
	}
	default:
		return 1;
	}
	if (c.bad)
		return -EINVAL;
	/* Fixed bodies: anything between them and the trailer is a lie. */
	if (c.off != c.end)
		return bad(&c, "record type %u of %zu bytes has %zu bytes after its last field",
			   ev->type, size, c.end - c.off);
	return 0;
}
