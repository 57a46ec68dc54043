// SPDX-License-Identifier: LGPL-2.1
/*
 * Fuzz target: one user_unwind_stack / user_unwind_cookie / user_mapping
 * record through ust_dec.  The first input byte picks the layout (bit 0:
 * stack-only, patches 6 and 8; else with inodes[] and dev[], patch 9), the
 * rest is the record as libtraceevent hands it to the plugin.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "fuzz.h"
#include "ustitch/decode.h"
#include "ustitch/kbits.h"

static struct tep_handle *make_tep(const char *stack_key)
{
	static const char hp[] =
		"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
		"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
	const char *keys[] = { "ftrace/user_unwind_cookie", stack_key, "ustitch/user_mapping",
			       "ustitch/stack_flags" };
	struct tep_handle *tep = tep_alloc();
	size_t i;

	if (!tep)
		abort();
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_long_size(tep, 8);
	if (tep_parse_header_page(tep, (char *)hp, strlen(hp), 8))
		abort();
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *t = ust_kbits_get(keys[i]);
		const char *sys = strncmp(keys[i], "ustitch/", 8) ? "ftrace" : "ustitch";
		struct tep_event *ev = NULL;

		if (!t || tep_parse_format(tep, &ev, t, strlen(t), sys))
			abort();
	}
	return tep;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tep_handle *tep[2];
	static struct ust_dec_layout lay[2];
	struct ust_dec_mapping *m;
	struct ust_dec_stack s;
	uint64_t cookie;
	uint32_t flags;
	char err[256];
	uint8_t *rec;
	int k, len;

	if (!tep[0]) {
		tep[0] = make_tep("ftrace/user_unwind_stack");
		tep[1] = make_tep("ftrace/user_unwind_stack.stack-only");
		for (k = 0; k < 2; k++)
			if (ust_dec_layout_init(&lay[k], tep[k], err, sizeof(err)))
				abort();
	}
	if (size < 1 || size > 65536)
		return 0;
	k = data[0] & 1;
	len = (int)size - 1;
	/* An exact-size heap copy: ASan sees every byte read past the record. */
	rec = malloc(len ? (size_t)len : 1);
	if (!rec)
		abort();
	memcpy(rec, data + 1, (size_t)len);

	err[0] = '\0';
	if (ust_dec_stack(&lay[k], rec, len, &s, err, sizeof(err)) == 0) {
		for (unsigned int i = 0; i < s.nr; i++) {
			struct ust_dec_frame f;

			ust_dec_frame_at(&s, i, &f);
		}
	} else if (!err[0]) {
		abort();	/* a refusal must say why */
	}
	(void)ust_dec_cookie(&lay[k], rec, len, &cookie, err, sizeof(err));
	m = malloc(sizeof(*m));
	if (!m)
		abort();
	if (ust_dec_mapping(&lay[k], rec, len, m, err, sizeof(err)) == 0 &&
	    !memchr(m->path, '\0', sizeof(m->path)))
		abort();	/* the path must be a C string */
	free(m);
	(void)ust_dec_stack_flags(&lay[k], rec, len, &cookie, &flags);
	(void)ust_dec_pid(&lay[k], rec, len);
	free(rec);
	return 0;
}
