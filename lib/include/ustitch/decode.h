/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_dec: decode ftrace/user_unwind_cookie and ftrace/user_unwind_stack
 * records through libtraceevent's field API, validating everything a
 * hostile or buggy record could get wrong.  Both layouts of the series are
 * understood: the stack-only one (patches 6 and 8) and the one with
 * inodes[] and dev[] (patch 9).
 */
#ifndef USTITCH_DECODE_H
#define USTITCH_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tep_handle;
struct tep_event;
struct tep_format_field;
struct tep_record;

/* What a file's format says about the stack event, resolved once per tep. */
struct ust_dec_layout {
	int stack_id;			/* event ids, -1 when absent */
	int cookie_id;
	int mapping_id;
	int flags_id;			/* ustitch/stack_flags */
	int long_size;			/* the kernel's, from the header page */
	bool has_files;			/* inodes[] and dev[] present */
	struct tep_format_field *st_cookie, *st_stack, *st_inodes, *st_dev;
	struct tep_format_field *ck_cookie;
	struct tep_format_field *mp_ino, *mp_dev, *mp_bid_size, *mp_bid, *mp_path;
	struct tep_format_field *sf_cookie, *sf_flags;
	struct tep_handle *tep;
};

/* A decoded stack: arrays point into the record (only 4-byte aligned). */
struct ust_dec_stack {
	uint64_t cookie;
	int pid;
	unsigned int nr;
	const uint8_t *stack;		/* nr * long_size */
	const uint8_t *inodes;		/* nr * long_size, NULL in stack-only layout */
	const uint8_t *dev;		/* nr * 4, NULL in stack-only layout */
	int long_size;
};

struct ust_dec_frame {
	uint64_t off;			/* file offset, or raw address when ino == 0 */
	uint64_t ino;
	uint32_t kdev;			/* kernel dev_t */
};

struct ust_dec_mapping {
	uint64_t ino;
	uint32_t kdev;
	const uint8_t *build_id;
	size_t build_id_len;
	char path[4096];
};

/*
 * Fill @l from @tep.  Returns 0 when at least one of the events exists,
 * -ENOENT otherwise.  A malformed format (e.g. a cookie field that is not 8
 * bytes) disables that event and writes the reason to @err.
 */
int ust_dec_layout_init(struct ust_dec_layout *l, struct tep_handle *tep,
			char *err, size_t errsz);

/*
 * Decode a record of the stack event.  On failure returns -EINVAL and writes
 * what is wrong into @err (e.g. "stack array ends at 96, past the 64-byte
 * record"); the caller turns it into a report marker.
 */
int ust_dec_stack(const struct ust_dec_layout *l, const void *data, int size,
		  struct ust_dec_stack *out, char *err, size_t errsz);
void ust_dec_frame_at(const struct ust_dec_stack *s, unsigned int i,
		      struct ust_dec_frame *f);

/* The other records likewise: 0, or -EINVAL for a malformed one. */
int ust_dec_cookie(const struct ust_dec_layout *l, const void *data, int size,
		   uint64_t *cookie, char *err, size_t errsz);

int ust_dec_mapping(const struct ust_dec_layout *l, const void *data, int size,
		    struct ust_dec_mapping *out, char *err, size_t errsz);

/* A ustitch/stack_flags record. */
int ust_dec_stack_flags(const struct ust_dec_layout *l, const void *data, int size,
			uint64_t *cookie, uint32_t *flags);

/*
 * The size of @rec to hand to the decoders: rec->size when the record
 * (header and data) lies inside its ring-buffer page of @page_size bytes,
 * else -EINVAL with @err.  libtracecmd 1.3.1 hands out whatever length a
 * record's header claims, unchecked against the page: a corrupt length
 * would have the decoders read past the page, out of the file's mapping.
 * @page_size is the trace.dat's (ust_scan_page_size()); 0: unknown, only
 * a negative size is refused.
 */
int ust_dec_rec_size(const struct tep_record *rec, int page_size, char *err, size_t errsz);

/* common_pid of any record, -EINVAL if the record is too short. */
int ust_dec_pid(const struct ust_dec_layout *l, const void *data, int size);

#endif
