// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_render.  Frame 0 is where the task entered the kernel; every other
 * frame is a return address, which the symbolizer looks up at offset-1 for
 * lines and inlines (the call instruction), as perf does.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/abi.h"
#include "ustitch/render.h"
#include "ustitch/res_debuginfod.h"

#define MAX_INLINE 16

/*
 * The frame lines a render printed, by the file's resolver answer (one per
 * device and inode for the resolver's life: hit.memo's address), offset
 * and frame kind.  The outer frames of deep stacks repeat from one stack to
 * the next, which the whole stacks' texts (ust_stack_text) cannot use:
 * `g++ -O2` sampled at 10 kHz prints 216,000 frame lines of 30,000 kinds.
 * Direct-mapped.  Only the lines of a file the resolver found are kept
 * (named or not: a stripped cc1plus's are mostly offsets): their text
 * depends on nothing but the answer, the symbol file (the cache's serial
 * tags it, a cache can be replaced; a debuginfod refusal is known once the
 * file was asked for, before its first line), and the render's options
 * and marks, which stay.
 */
#define LINES_NR	4096
#define LINE_TEXT	168

struct ust_render_line {
	const struct ust_res_memo *answer;	/* NULL: empty */
	uint64_t off;
	uint64_t serial;
	bool is_return;
	char text[LINE_TEXT];
};

struct ust_render_lines {
	struct ust_render_line e[LINES_NR];
};

void ust_render_fini(struct ust_render *r)
{
	free(r->lines);
	r->lines = NULL;
}

static struct ust_render_line *line_of(struct ust_render *r, const struct ust_res_memo *answer,
				       uint64_t off, bool is_return)
{
	uint64_t h = ((uintptr_t)answer >> 4) * 0x9e3779b97f4a7c15ULL ^ (off + is_return) * 0xff51afd7ed558ccdULL;

	if (!r->lines && !(r->lines = calloc(1, sizeof(*r->lines))))
		return NULL;
	return &r->lines->e[(h >> 40) % LINES_NR];
}

static void put_loc(struct ust_sb *out, const struct ust_sym_frame *sf)
{
	const char *base;

	if (!sf->src_file)
		return;
	base = strrchr(sf->src_file, '/');
	ust_sb_printf(out, " [%s:%u]", base ? base + 1 : sf->src_file, sf->line);
}

static void put_raw(struct ust_render *r, struct ust_sb *out, const struct ust_dec_frame *f,
		    bool has_files)
{
	if (!r->opts.raw || !has_files)
		return;
	ust_sb_printf(out, " <%016" PRIx64 "> : %" PRIu64 " : %u:%u", f->off, f->ino,
		      UST_ABI_KDEV_MAJOR(f->kdev), UST_ABI_KDEV_MINOR(f->kdev));
}

/*
 * The symbol file of @hit, asked of @sym once per answer: the answer
 * keeps it (tagged by the cache's serial), for the cache's key is the
 * path and build-id in hex, hashed at every frame otherwise.
 */
static struct ust_sym_file *sym_file_of(struct ust_sym_cache *sym, struct ust_res_hit *hit)
{
	uint64_t serial = ust_sym_cache_serial(sym);
	struct ust_sym_file *file;
	char err[160];

	if (hit->memo && hit->memo->owner == serial)
		return hit->memo->val;
	file = ust_sym_cache_get(sym, hit->path, hit->build_id, hit->build_id_len, err,
				 sizeof(err));
	if (file && hit->memo) {
		hit->memo->owner = serial;
		hit->memo->val = file;
	}
	return file;
}

/* ust_render_name() of a file resolved as @hit (@found: the lookup's answer was 0). */
static int name_of(struct ust_res_hit *hit, bool found, struct ust_sym_cache *sym,
		   const struct ust_dec_frame *f, bool is_return, bool lines,
		   struct ust_sym_frame *sf, int max, const char **obj)
{
	struct ust_sym_file *file;
	int n;

	*obj = NULL;
	if (!found)
		return 0;
	file = sym ? sym_file_of(sym, hit) : NULL;
	/* Shown by the name the file is known by (a copy in an archive, or
	 * an fd, is not a name). */
	*obj = hit->name ? hit->name : hit->path;
	*obj = strrchr(*obj, '/') ? strrchr(*obj, '/') + 1 : *obj;
	n = file ? ust_sym_lookup(file, f->off, is_return, lines, sf, max) : 0;
	return n > 0 ? n : 0;
}

int ust_render_name(struct ust_res *res, struct ust_sym_cache *sym, const struct ust_dec_frame *f,
		    bool is_return, bool lines, struct ust_sym_frame *sf, int max, const char **obj)
{
	struct ust_res_hit hit = { 0 };
	bool found = res && !ust_res_lookup(res, f->kdev, f->ino, &hit);

	return name_of(&hit, found, sym, f, is_return, lines, sf, max, obj);
}

static void render_one(struct ust_render *r, const struct ust_dec_frame *f,
		       bool is_return, bool has_files, struct ust_sb *out)
{
	struct ust_sym_frame sf[MAX_INLINE];
	struct ust_res_hit hit = { 0 };
	struct ust_render_line *line = NULL;
	const char *obj;
	const char *arrow = "=>";
	bool marked, found = false;
	uint64_t serial = 0;
	size_t start;
	int n, i;

	if (has_files && f->ino && r->res)
		found = !ust_res_lookup(r->res, f->kdev, f->ino, &hit);
	if (found && hit.memo) {
		serial = r->opts.symbols && r->sym ? ust_sym_cache_serial(r->sym) : 0;
		line = line_of(r, hit.memo, f->off, is_return);
		if (line && line->answer == hit.memo && line->off == f->off &&
		    line->is_return == is_return && line->serial == serial) {
			ust_sb_puts(out, line->text);
			return;
		}
	}
	start = out->len;
	marked = r->mark && has_files && f->ino &&
		 ust_af_match_file(r->mark, -1, f->kdev, f->ino, f->off) >= 0;
	/* Frames whose file may not be the traced one: "=>?" (said at the end). */
	if (hit.path && hit.uncertain)
		arrow = marked ? "=>*?" : "=>?";
	else if (marked)
		arrow = "=>*";
	if (!has_files || !f->ino) {
		/* Stack-only layout, or no VMA: the value is all there is. */
		ust_sb_printf(out, "\n%s 0x%" PRIx64, arrow, f->off);
		put_raw(r, out, f, has_files);
		return;
	}
	n = name_of(&hit, found, r->opts.symbols ? r->sym : NULL, f, is_return, r->opts.lines,
		    sf, MAX_INLINE, &obj);
	if (!obj && hit.name && hit.note) {
		/* Not found, named by the trace: "(prog: not the traced file: ...)" */
		obj = strrchr(hit.name, '/') ? strrchr(hit.name, '/') + 1 : hit.name;
		ust_sb_printf(out, "\n%s 0x%" PRIx64 " (%s: %s)", arrow, f->off, obj, hit.note);
		put_raw(r, out, f, has_files);
		return;
	}
	if (!obj) {
		/* Not found; why, when known: "no longer exists", "not the traced file: ..." */
		ust_sb_printf(out, "\n%s 0x%" PRIx64 " (dev %u:%u ino %" PRIu64 "%s%s)", arrow, f->off,
			      UST_ABI_KDEV_MAJOR(f->kdev), UST_ABI_KDEV_MINOR(f->kdev), f->ino,
			      hit.note ? ": " : "", hit.note ? hit.note : "");
		put_raw(r, out, f, has_files);
		return;
	}
	if (n == 0 || !sf[n - 1].func) {
		/* A debug file debuginfod sent for another build-id says so here. */
		const char *note = hit.note && !hit.uncertain ? hit.note :
				   ust_res_debuginfod_note(r->res, hit.build_id, hit.build_id_len);

		ust_sb_printf(out, "\n%s 0x%" PRIx64 " (%s%s%s)", arrow, f->off, obj,
			      note ? ": " : "", note ? note : "");
		if (n > 0)
			put_loc(out, &sf[n - 1]);
		put_raw(r, out, f, has_files);
		/* A symbol file not had (out of memory, say) is asked for again. */
		if (serial && hit.memo->owner != serial)
			return;
		goto keep;
	}
	for (i = 0; i < n; i++) {
		if (i < n - 1 && !r->opts.lines)
			continue;
		if (i < n - 1) {
			ust_sb_printf(out, "\n%s %s [inlined] (%s)", arrow, sf[i].func ? sf[i].func : "??", obj);
		} else {
			/* Every frame's line: in pieces, not by printf (a tenth of a report's CPU). */
			ust_sb_puts(out, "\n");
			ust_sb_puts(out, arrow);
			ust_sb_puts(out, " ");
			ust_sb_puts(out, sf[i].func);
			ust_sb_puts(out, "+");
			ust_sb_putx(out, sf[i].func_off);
			ust_sb_puts(out, " (");
			ust_sb_puts(out, obj);
			ust_sb_puts(out, ")");
		}
		if (r->opts.lines)
			put_loc(out, &sf[i]);
	}
	put_raw(r, out, f, has_files);
keep:
	if (line && !out->oom && out->len - start < LINE_TEXT) {
		memcpy(line->text, out->buf + start, out->len - start);
		line->text[out->len - start] = '\0';
		line->answer = hit.memo;
		line->off = f->off;
		line->is_return = is_return;
		line->serial = serial;
	}
}

void ust_render_stack_flags(uint32_t flags, struct ust_sb *out)
{
	bool cfi = flags & UST_ABI_STACK_F_CFI, fp = flags & UST_ABI_STACK_F_FP;
	const char *how = cfi && fp ? "CFI and frame pointers" : cfi ? "CFI" : fp ? "frame pointers" : NULL;

	if (flags & UST_ABI_STACK_F_EXIT)
		ust_sb_puts(out, "; taken as the task exited");
	else if (flags & UST_ABI_STACK_F_SCHED_FAIL)
		ust_sb_puts(out, "; taken at the event: deferral refused");
	else if (flags & UST_ABI_STACK_F_IMMEDIATE)
		ust_sb_puts(out, "; taken at the event: no BPF task_work on this kernel");
	/* How the walk went: by what, and whether it reached the outermost frame. */
	if (how && (flags & UST_ABI_STACK_F_BOTTOM))
		ust_sb_printf(out, "; complete, by %s", how);
	else if (flags & UST_ABI_STACK_F_BOTTOM)
		ust_sb_puts(out, "; complete");	/* one frame: the program's first instruction */
	else if (how)
		ust_sb_printf(out, "; by %s", how);
	if (flags & UST_ABI_STACK_F_KERNEL)
		ust_sb_puts(out, "; by the kernel's unwinder (frame pointers only)");
	/* Finished by the recorder from the stack copied at the event (bit LATER). */
	if ((flags & UST_ABI_STACK_F_LATER) && (flags & UST_ABI_STACK_F_NO_TABLE))
		ust_sb_puts(out, "; a file's unwind table was not loaded in time: walked on by frame pointers");
	else if (flags & UST_ABI_STACK_F_LATER)
		ust_sb_puts(out, "; walked on by the recorder from a copy of its stack");
	else if (flags & UST_ABI_STACK_F_NO_TABLE)
		ust_sb_puts(out, "; a file's unwind table was not loaded yet");
	if (flags & UST_ABI_STACK_F_BAD_CFA)
		ust_sb_puts(out, "; cut short: a frame's CFA made no sense");
	if ((flags & UST_ABI_STACK_F_FAULT) && (flags & UST_ABI_STACK_F_LATER))
		ust_sb_puts(out, "; cut short: beyond the stack copied for it");
	else if (flags & UST_ABI_STACK_F_FAULT)
		ust_sb_puts(out, "; cut short: a stack read failed");
	if (flags & UST_ABI_STACK_F_NO_UNWIND)
		ust_sb_puts(out, "; cut short: a frame with no CFI and no frame pointer");
	if (flags & UST_ABI_STACK_F_NOT_EXEC)
		ust_sb_puts(out, "; cut short: a return address in no executable mapping");
	if (flags & UST_ABI_STACK_F_TRUNCATED)
		ust_sb_puts(out, "; truncated");
	if (flags & UST_ABI_STACK_F_RAW)
		ust_sb_puts(out, "; some frames unresolved when recorded");
}

void ust_render_frames(struct ust_render *r, const struct ust_dec_frame *f,
		       unsigned int nr, bool has_files, struct ust_sb *out)
{
	unsigned int i, shown = nr;

	if (r->opts.max_frames && nr > r->opts.max_frames)
		shown = r->opts.max_frames;
	for (i = 0; i < shown; i++)
		render_one(r, &f[i], i > 0, has_files, out);
	if (shown < nr)
		ust_sb_printf(out, "\n=> ... %u more frame%s", nr - shown, nr - shown == 1 ? "" : "s");
}
