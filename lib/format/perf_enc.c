// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_perf_enc.  Offsets of ustitch/sample come from its format text in
 * kernel-bits (the test suite checks them against libtraceevent's reading
 * of it); kernel_stack's come from the running kernel's format, parsed by
 * libtraceevent, because that event is the kernel's and not ours.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "ustitch/abi.h"
#include "ustitch/encode.h"
#include "ustitch/perf_enc.h"

#define SMP_IP_OFF	8
#define SMP_PERIOD_OFF	16
#define SMP_EVENT_OFF	24
#define SMP_MODE_OFF	28
#define SMP_USTACK_OFF	29
#define SMP_KFRAMES_OFF	30
#define SMP_FIXED_SIZE	32


int ust_perf_enc_sample(void *buf, size_t bufsize, const struct ust_perf_enc_sample_rec *s)
{
	const char *ev = s->event ? s->event : "";
	size_t elen = strlen(ev) + 1, total = SMP_FIXED_SIZE + elen;
	uint8_t *b = buf;
	uint32_t loc;
	uint16_t kf = s->kernel_frames > 0xffff ? 0xffff : (uint16_t)s->kernel_frames;

	if (total > bufsize || elen > 0xffff)
		return -ENOSPC;
	memset(b, 0, SMP_FIXED_SIZE);
	ust_enc_common(b, s->type, s->pid);
	memcpy(b + SMP_IP_OFF, &s->ip, 8);
	memcpy(b + SMP_PERIOD_OFF, &s->period, 8);
	loc = UST_ABI_DATA_LOC(SMP_FIXED_SIZE, elen);
	memcpy(b + SMP_EVENT_OFF, &loc, 4);
	b[SMP_MODE_OFF] = (uint8_t)s->mode;
	b[SMP_USTACK_OFF] = (uint8_t)s->ustack;
	memcpy(b + SMP_KFRAMES_OFF, &kf, 2);
	memcpy(b + SMP_FIXED_SIZE, ev, elen);
	return (int)total;
}

int ust_perf_enc_kstack_fmt_init(struct ust_perf_enc_kstack_fmt *f, const char *text,
			     char *err, size_t errsz)
{
	struct tep_handle *tep = tep_alloc();
	struct tep_format_field *size, *caller;
	struct tep_event *ev;
	int ret = -EINVAL;

	memset(f, 0, sizeof(*f));
	if (!tep) {
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	tep_set_long_size(tep, 8);
	if (tep_parse_event(tep, text, strlen(text), "ftrace") != TEP_ERRNO__SUCCESS ||
	    !(ev = tep_find_event_by_name(tep, "ftrace", "kernel_stack"))) {
		snprintf(err, errsz, "the ftrace/kernel_stack format does not parse");
		goto out;
	}
	size = tep_find_field(ev, "size");
	caller = tep_find_field(ev, "caller");
	if (!size || size->size != 4 || !caller || !(caller->flags & TEP_FIELD_IS_ARRAY) ||
	    caller->elementsize != 8 || caller->offset < size->offset + 4) {
		snprintf(err, errsz, "ftrace/kernel_stack has no int size and unsigned long caller[]");
		goto out;
	}
	if (ev->id <= 0 || ev->id > 0xffff) {
		snprintf(err, errsz, "ftrace/kernel_stack has id %d", ev->id);
		goto out;
	}
	f->type = (uint16_t)ev->id;
	f->size_off = (unsigned int)size->offset;
	f->caller_off = (unsigned int)caller->offset;
	f->long_size = 8;
	ret = 0;
out:
	tep_free(tep);
	return ret;
}

/* As __ftrace_trace_stack() writes it: size entries, no terminator. */
int ust_perf_enc_kstack(const struct ust_perf_enc_kstack_fmt *f, void *buf, size_t bufsize,
			int pid, const uint8_t *ips, unsigned int nr)
{
	size_t total = f->caller_off + (size_t)nr * 8;
	uint8_t *b = buf;
	int32_t n = (int32_t)nr;

	if (total > bufsize || total > 0xffff)
		return -ENOSPC;
	memset(b, 0, f->caller_off);
	ust_enc_common(b, f->type, pid);
	memcpy(b + f->size_off, &n, 4);
	memcpy(b + f->caller_off, ips, (size_t)nr * 8);
	return (int)total;
}


/* Resolved frames into a user_unwind_stack record (layout: ust_enc). */
int ust_perf_enc_unwind_stack(void *buf, size_t bufsize, uint16_t type, int pid,
			      uint64_t cookie, const struct ust_dec_frame *f, unsigned int nr)
{
	struct ust_enc_stack_arrays a;
	unsigned int i;
	int total = ust_enc_unwind_stack(buf, bufsize, type, pid, cookie, nr, &a);

	if (total < 0)
		return -ENOSPC;
	for (i = 0; i < nr; i++) {
		memcpy(a.offs + i * 8, &f[i].off, 8);
		memcpy(a.inodes + i * 8, &f[i].ino, 8);
		memcpy(a.devs + i * 4, &f[i].kdev, 4);
	}
	return total;
}
