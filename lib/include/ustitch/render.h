/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_render: stitched frames -> text, in the style of trace-cmd's own
 * kernel_stack output.  One line per frame:
 *   => function+0xoff (object) [file:line]      symbolized
 *   => inlined_fn [inlined] (object) [file:line] DWARF inline level
 *   => 0xoffset (object)                         file known, no symbol
 *   => 0xoffset (object: no longer exists)       a recorded file that is gone
 *   => 0xoffset (dev 254:3 ino 1340007)          file not found
 *   => 0xoffset (dev 254:3 ino 1340007: why)     file not found, and why
 *   =>? function+0xoff (object)                  the file may not be the traced one
 *   => 0xaddress                                 no VMA (raw address)
 */
#ifndef USTITCH_RENDER_H
#define USTITCH_RENDER_H

#include <stdbool.h>

#include "ustitch/addrfilter.h"
#include "ustitch/decode.h"
#include "ustitch/resolve.h"
#include "ustitch/sb.h"
#include "ustitch/sym.h"

struct ust_render_opts {
	bool symbols;		/* symbolize (else offsets and object names) */
	bool lines;		/* source file:line and inlined frames */
	bool raw;		/* append the kernel's own " : ino : maj:min" */
	unsigned int max_frames;/* 0 = all */
};

struct ust_render_lines;

/*
 * Set up by its user, res and sym before the first frame: the resolver
 * stays for the render's life (its answers key the frame lines kept); sym
 * may be replaced.  ust_render_fini() frees what rendering kept.
 */
struct ust_render {
	struct ust_render_opts opts;
	struct ust_res *res;
	struct ust_sym_cache *sym;
	const struct ust_af *mark;	/* frames in these ranges print as "=>*" */
	struct ust_render_lines *lines;	/* render.c's, allocated on first use */
};

void ust_render_fini(struct ust_render *r);

/* What UST_ABI_STACK_F_* @flags say about how a stack was taken, as
 * "; taken at the event (...)" pieces for the stack's header; "" if nothing. */
void ust_render_stack_flags(uint32_t flags, struct ust_sb *out);

/*
 * The one way to name a user frame (of a stack with files), for the
 * rendered stacks and the folded ones: the base name of its object (*obj,
 * NULL when @res does not know the file) and, given @sym, its function
 * with the levels inlined into it (@lines: with source lines) in @sf, the
 * function itself last.  Returns how many @sf hold, 0 for no symbol.
 */
int ust_render_name(struct ust_res *res, struct ust_sym_cache *sym, const struct ust_dec_frame *f,
		    bool is_return, bool lines, struct ust_sym_frame *sf, int max, const char **obj);

/* Append one "\n=> ..." line per frame of @f to @out. */
void ust_render_frames(struct ust_render *r, const struct ust_dec_frame *f,
		       unsigned int nr, bool has_files, struct ust_sb *out);

#endif
