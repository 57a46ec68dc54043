// SPDX-License-Identifier: LGPL-2.1
/*
 * Building a file's unwind table: .eh_frame (and .debug_frame) -> rows
 * keyed by file offset, in the format of bpf/ust_cfi_abi.h.
 *
 * The rows come from the one CFI interpreter (cfi_exec.c), which runs
 * each FDE's program once; libdw reads the entries (dwarf_next_cfi) and,
 * with ust_cfi_opts.check, builds the same table its own way, row by row
 * (dwarf_cfi_addrframe: the frame state at pc, which also says where
 * that row ends), as the reference the interpreter is checked against.
 * libdw handles every augmentation, pointer encoding and x86-64 default
 * gcc, clang and binutils emit, and is checked against corrupt input by
 * its own test suite and fuzzing; it was the builder until cc1plus's
 * table (518k rows) was measured at 585 ms: a parked sample's wait.
 *
 * The walk: for every FDE (sorted by start), its rows from its start,
 * each mapped to a rule (cfi_exec.c; cfi_rule.c for libdw's).
 * .eh_frame comes first; .debug_frame (of the file, or of its separate
 * debug file found as ust_sym finds it) only fills what no .eh_frame FDE
 * covers.
 *
 * Overlapping FDEs (seen in hand-written assembly): the FDE that starts
 * first keeps its whole range; a later FDE only contributes rows past the
 * end of everything before it, from its own program.  That depends on the
 * file alone, so a table is the same whenever it is built (and the
 * overlaps are counted in the stats).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cfi_internal.h"
#include "ustitch/elfprog.h"
#include "ustitch/grow.h"
#include "ustitch/progress.h"

struct seg {
	uint64_t vaddr, end, off;	/* executable PT_LOAD: [vaddr, end) at off */
};

struct span {
	uint64_t off, end;		/* file offsets */
	uint32_t seq;			/* creation order: ties sort stably */
	struct ust_cfi_rule rule;
};

struct ival {
	uint64_t start, end;
};

struct builder {
	struct seg *segs;
	int nr_segs;
	struct span *spans;
	size_t nr_spans, cap_spans;
	struct ival *eh_cov;		/* vaddr ranges walked from .eh_frame, ascending */
	size_t nr_eh_cov, cap_eh_cov;
	struct ust_cfi_stats *st;
	char *err;
	size_t errsz;
	struct ust_progress prog;	/* a table that takes over a second */
	bool libdw;			/* the reference build (ust_cfi_opts.check) */
};

/* A table build taking longer than this shows a progress line. */
#define PROGRESS_DELAY_S	1.0

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int add_span(struct builder *b, uint64_t vlo, uint64_t vhi,
		    const struct ust_cfi_rule *r)
{
	int i;

	for (i = 0; i < b->nr_segs; i++) {
		const struct seg *s = &b->segs[i];
		uint64_t lo = vlo > s->vaddr ? vlo : s->vaddr;
		uint64_t hi = vhi < s->end ? vhi : s->end;

		if (lo >= hi)
			continue;
		struct span *n = ust_grow(b->spans, &b->cap_spans, b->nr_spans + 1,
					  sizeof(*n), 1024);

		if (!n)
			return ust_cfi_fail(b->err, b->errsz, -ENOMEM, "out of memory");
		b->spans = n;
		b->spans[b->nr_spans++] = (struct span){
			.off = lo - s->vaddr + s->off,
			.end = hi - s->vaddr + s->off,
			.seq = (uint32_t)b->nr_spans,
			.rule = *r,
		};
	}
	return 0;
}

static int add_row(void *ctx, uint64_t lo, uint64_t hi, const struct ust_cfi_rule *r)
{
	return add_span(ctx, lo, hi, r);
}

/* The rows of [lo, hi) as libdw sees them (the reference). */
static int walk_libdw(struct builder *b, Dwarf_CFI *cfi, const char *name,
		      const struct ust_cfi_fde *fde, uint64_t lo, uint64_t hi)
{
	uint64_t pc = lo;
	int ret;

	while (pc < hi) {
		struct ust_cfi_rule r;
		Dwarf_Frame *frame;
		Dwarf_Addr start, end;
		bool signal;

		if (dwarf_cfi_addrframe(cfi, pc, &frame) != 0)
			return ust_cfi_fail(b->err, b->errsz, -EBADMSG,
					    "corrupt %s: FDE at offset %#llx: no rule for %#llx: %s",
					    name, (unsigned long long)fde->sec_off,
					    (unsigned long long)pc, dwarf_errmsg(-1));
		if (dwarf_frame_info(frame, &start, &end, &signal) < 0 || end <= pc) {
			free(frame);
			return ust_cfi_fail(b->err, b->errsz, -EBADMSG,
					    "corrupt %s: FDE at offset %#llx: empty row at %#llx",
					    name, (unsigned long long)fde->sec_off,
					    (unsigned long long)pc);
		}
		ust_cfi_rule_of(frame, signal, &r);
		free(frame);
		if (end > hi)
			end = hi;
		ret = add_span(b, pc, end, &r);
		if (ret)
			return ret;
		pc = end;
	}
	return 0;
}

/* Is any of [lo, hi) inside an executable segment? */
static bool in_text(const struct builder *b, uint64_t lo, uint64_t hi)
{
	int i;

	for (i = 0; i < b->nr_segs; i++)
		if (lo < b->segs[i].end && hi > b->segs[i].vaddr)
			return true;
	return false;
}

static int add_eh_cov(struct builder *b, uint64_t lo, uint64_t hi)
{
	struct ival *n;

	if (b->nr_eh_cov && b->eh_cov[b->nr_eh_cov - 1].end == lo) {
		b->eh_cov[b->nr_eh_cov - 1].end = hi;
		return 0;
	}
	n = ust_grow(b->eh_cov, &b->cap_eh_cov, b->nr_eh_cov + 1, sizeof(*n), 256);
	if (!n)
		return ust_cfi_fail(b->err, b->errsz, -ENOMEM, "out of memory");
	b->eh_cov = n;
	b->eh_cov[b->nr_eh_cov++] = (struct ival){ lo, hi };
	return 0;
}

/* First .eh_frame range ending after @pc. */
static size_t eh_cov_after(const struct builder *b, uint64_t pc)
{
	size_t lo = 0, hi = b->nr_eh_cov;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->eh_cov[mid].end <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The rows of [lo, hi) of @fde. */
static int walk(struct builder *b, Dwarf_CFI *cfi, const struct ust_cfi_fdes *l,
		const struct ust_cfi_fde *fde, uint64_t lo, uint64_t hi)
{
	if (b->libdw)
		return walk_libdw(b, cfi, l->name, fde, lo, hi);
	return ust_cfi_exec(l, fde, lo, hi, add_row, b, b->err, b->errsz);
}

/* All FDEs of one section; @eh: .eh_frame (else .debug_frame, gaps only). */
static int walk_section(struct builder *b, Elf *elf, Elf_Scn *scn, Dwarf_CFI *cfi, bool eh)
{
	struct ust_cfi_fdes l;
	uint64_t covered = 0;
	int nr, i, ret = 0;

	nr = ust_cfi_fde_list(elf, scn, eh, &l, b->err, b->errsz);
	if (nr < 0)
		return nr;
	ust_progress_set_total(&b->prog, (uint64_t)nr);
	for (i = 0; i < nr; i++) {
		const struct ust_cfi_fde *f = &l.fdes[i];
		uint64_t lo = f->start;
		size_t before = b->nr_spans;

		ust_progress_update(&b->prog, (uint64_t)i);
		if (!in_text(b, f->start, f->end)) {
			b->st->fdes_outside++;
			continue;
		}
		if (f->start < covered) {
			b->st->fdes_overlapping++;
			lo = covered;
		}
		if (lo >= f->end)
			continue;
		covered = f->end;
		if (eh) {
			ret = walk(b, cfi, &l, f, lo, f->end);
			if (!ret)
				ret = add_eh_cov(b, lo, f->end);
		} else {
			size_t k = eh_cov_after(b, lo);
			uint64_t pc = lo;

			while (!ret && pc < f->end) {
				uint64_t stop = f->end;

				if (k < b->nr_eh_cov && b->eh_cov[k].start <= pc) {
					pc = b->eh_cov[k++].end;
					continue;
				}
				if (k < b->nr_eh_cov && b->eh_cov[k].start < stop)
					stop = b->eh_cov[k].start;
				ret = walk(b, cfi, &l, f, pc, stop);
				pc = stop;
			}
		}
		if (ret)
			break;
		if (b->nr_spans > before) {
			b->st->fdes++;
			if (!eh)
				b->st->fdes_debug_frame++;
		}
	}
	ust_cfi_fdes_free(&l);
	return ret;
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int push_row(struct ust_cfi_table *t, size_t *cap, uint64_t off,
		    const struct ust_cfi_rule *r)
{
	struct ust_cfi_row *rows = ust_grow(t->rows, cap, t->nr_rows + 1, sizeof(*rows), 1024);

	if (!rows)
		return -ENOMEM;
	t->rows = rows;
	t->rows[t->nr_rows++] = (struct ust_cfi_row){
		.off = (__u32)off,
		.cfa_off = r->cfa_off,
		.rbp_off = r->rbp_off,
		.rbx_off = r->rbx_off,
		.cfa_type = r->cfa_type,
		.rbp_type = r->rbp_type,
		.rbx_type = r->rbx_type,
		.pad = 0,
	};
	return 0;
}

/* Spans -> rows: sorted, gaps as NONE, equal neighbours merged. */
static int finish(struct builder *b, struct ust_cfi_table *t)
{
	static const struct ust_cfi_rule none = { .cfa_type = UST_CFI_CFA_NONE };
	struct ust_cfi_rule last = none;
	uint64_t prev_end = 0;
	bool have = false;
	size_t cap = 0, i;
	uint32_t r;

	/* .eh_frame's spans come in order (FDEs sorted, each program's rows
	 * ascending): sorted already unless .debug_frame or an entry row
	 * came after, and sorting 500k spans again was half a build. */
	for (i = 1; i < b->nr_spans; i++)
		if (cmp_span(&b->spans[i - 1], &b->spans[i]) > 0)
			break;
	if (i < b->nr_spans)
		qsort(b->spans, b->nr_spans, sizeof(*b->spans), cmp_span);
	for (i = 0; i < b->nr_spans; i++) {
		struct span *s = &b->spans[i];

		if (have && s->off < prev_end)
			s->off = prev_end;	/* cannot happen with sane segments; keep sorted */
		if (s->off >= s->end)
			continue;
		if (s->end > (uint64_t)UINT32_MAX)
			return ust_cfi_fail(b->err, b->errsz, -ERANGE,
					    "code at file offset %#llx: beyond the rows' 4 GiB",
					    (unsigned long long)s->off);
		if (have && s->off > prev_end) {
			if (push_row(t, &cap, prev_end, &none))
				goto nomem;
			last = none;
		}
		if (!have || s->off > prev_end || !ust_cfi_rule_eq(&last, &s->rule)) {
			if (push_row(t, &cap, s->off, &s->rule))
				goto nomem;
			last = s->rule;
			if (s->rule.overflow)
				b->st->rows_overflow++;
		}
		prev_end = s->end;
		have = true;
	}
	if (have && push_row(t, &cap, prev_end, &none))
		goto nomem;

	b->st->rows = t->nr_rows;
	for (r = 0; r < t->nr_rows; r++) {
		const struct ust_cfi_row *row = &t->rows[r];
		uint64_t len = r + 1 < t->nr_rows ? t->rows[r + 1].off - row->off : 0;

		b->st->rows_cfa[row->cfa_type]++;
		b->st->rows_rbp[row->rbp_type]++;
		b->st->rows_rbx[row->rbx_type]++;
		b->st->bytes_cfa[row->cfa_type] += len;
		if (row->cfa_type != UST_CFI_CFA_NONE)
			b->st->covered_bytes += len;
	}
	return 0;
nomem:
	return ust_cfi_fail(b->err, b->errsz, -ENOMEM, "out of memory");
}

/*
 * The code the table is for: the executable sections (SHF_EXECINSTR)
 * inside the executable segments; the segments themselves when the
 * sections are gone (they also hold headers and, without -z
 * separate-code, read-only data).
 */
static void text_bytes(struct builder *b, Elf *elf)
{
	Elf_Scn *scn = NULL;
	uint64_t sum = 0;
	int i;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
		    (sh.sh_flags & SHF_EXECINSTR) && sh.sh_size &&
		    in_text(b, sh.sh_addr, sh.sh_addr + sh.sh_size))
			sum += sh.sh_size;
	}
	if (!sum)
		for (i = 0; i < b->nr_segs; i++)
			sum += b->segs[i].end - b->segs[i].vaddr;
	b->st->text_bytes = sum;
}

static int load_segments(struct builder *b, Elf *elf)
{
	struct ust_sym_seg *segs;
	bool guessed;
	int nr, i;

	if (ust_sym_elf_segments(elf, &segs, &nr, &guessed) != 0)
		return ust_cfi_fail(b->err, b->errsz, -ENOEXEC,
				    "corrupt ELF: unreadable program headers");
	b->segs = calloc(nr ? (size_t)nr : 1, sizeof(*b->segs));
	if (!b->segs) {
		free(segs);
		return ust_cfi_fail(b->err, b->errsz, -ENOMEM, "out of memory");
	}
	for (i = 0; i < nr; i++) {
		if (!segs[i].exec || !segs[i].filesz || segs[i].vaddr + segs[i].filesz < segs[i].vaddr)
			continue;
		b->segs[b->nr_segs++] = (struct seg){
			.vaddr = segs[i].vaddr,
			.end = segs[i].vaddr + segs[i].filesz,
			.off = segs[i].off,
		};
	}
	free(segs);
	text_bytes(b, elf);
	return 0;
}

/* The longest entry code without CFI taken for the outermost frame. */
#define ENTRY_MAX	128

/*
 * The ELF entry point is the outermost frame of a program's first thread.
 * Where no FDE covers it (glibc's ld.so: _start and _dl_start_user are
 * assembly without CFI), it gets an END row, up to the next FDE and at
 * most ENTRY_MAX bytes (ld.so's are 64; more is other code without CFI,
 * which is no outermost frame).  The walkers end a frame that has no rule
 * in a loaded table with "no CFI, no frame pointer", whatever rbp holds
 * (ust_cfi_step_norule()): rbp 0 there is as often a register holding 0,
 * in code built without frame pointers (busybox's applets), as the end of
 * the stack, and this row keeps the real end saying so.  A file with no
 * CFI at all gets none: its walk is by frame pointers, rbp 0 the end.
 */
static int add_entry_end(struct builder *b, Elf *elf)
{
	static const struct ust_cfi_rule end = { .cfa_type = UST_CFI_CFA_END };
	uint64_t entry, stop, off = UINT64_MAX;
	GElf_Ehdr eh;
	size_t i;
	int k;

	if (!b->nr_spans || !ust_elfprog_entry(elf, NULL) || !gelf_getehdr(elf, &eh))
		return 0;
	entry = eh.e_entry;
	for (k = 0; k < b->nr_segs; k++)
		if (entry >= b->segs[k].vaddr && entry < b->segs[k].end)
			off = entry - b->segs[k].vaddr + b->segs[k].off;
	if (off == UINT64_MAX)
		return 0;
	stop = off + ENTRY_MAX;
	for (i = 0; i < b->nr_spans; i++) {
		if (b->spans[i].off <= off && off < b->spans[i].end)
			return 0;	/* the entry has CFI */
		if (b->spans[i].off > off && b->spans[i].off < stop)
			stop = b->spans[i].off;
	}
	return add_span(b, entry, entry + (stop - off), &end);
}

/* The .debug_frame of @elf and its CFI, or all NULL when it has none. */
static void debug_frame_of(Elf *elf, Dwarf **dw, Dwarf_CFI **cfi, Elf_Scn **scn)
{
	GElf_Shdr sh;

	*dw = NULL;
	*cfi = NULL;
	*scn = ust_sym_elf_section(elf, ".debug_frame", &sh);
	if (!*scn || sh.sh_type == SHT_NOBITS || !sh.sh_size)
		return;
	*dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (*dw)
		*cfi = dwarf_getcfi(*dw);
	if (!*cfi) {
		if (*dw)
			dwarf_end(*dw);
		*dw = NULL;
		*scn = NULL;
	}
}

static int build(const struct ust_sym_elf *e, const char *path, const struct ust_cfi_opts *opts,
		 bool libdw, struct ust_cfi_table **out, char *err, size_t errsz)
{
	struct builder b = { .err = err, .errsz = errsz, .libdw = libdw };
	struct ust_sym_elf dbg = { 0 };
	struct ust_cfi_table *t;
	Dwarf *dw = NULL;
	Dwarf_CFI *cfi;
	Elf_Scn *scn;
	GElf_Shdr sh;
	double t0 = now_ms();
	char what[160];
	int ret;

	*out = NULL;
	snprintf(what, sizeof(what), "ustitch: building the unwind table of %s",
		 path ? (strrchr(path, '/') ? strrchr(path, '/') + 1 : path) : "a file");
	ust_progress_start(&b.prog, what, 0, PROGRESS_DELAY_S);
	t = calloc(1, sizeof(*t));
	if (!t)
		return ust_cfi_fail(err, errsz, -ENOMEM, "out of memory");
	b.st = &t->stats;
	t->build_id_len = ust_sym_elf_build_id(e->elf, t->build_id, sizeof(t->build_id));
	ret = load_segments(&b, e->elf);
	if (ret)
		goto out;

	scn = ust_sym_elf_section(e->elf, ".eh_frame", &sh);
	if (scn && sh.sh_type != SHT_NOBITS && sh.sh_size) {
		cfi = libdw ? dwarf_getcfi_elf(e->elf) : NULL;
		if (libdw && !cfi) {
			ret = ust_cfi_fail(err, errsz, -EBADMSG, "corrupt .eh_frame: %s",
					   dwarf_errmsg(-1));
			goto out;
		}
		ret = walk_section(&b, e->elf, scn, cfi, true);
		if (cfi)
			dwarf_cfi_end(cfi);
		if (ret)
			goto out;
	}

	if (!opts->no_debug_frame) {
		debug_frame_of(e->elf, &dw, &cfi, &scn);
		if (!cfi && path &&
		    ust_sym_debug_find(opts->debug_dirs, opts->nr_debug_dirs, e, path,
				       t->build_id_len ? t->build_id : NULL,
				       t->build_id_len, &dbg) == 0) {
			debug_frame_of(dbg.elf, &dw, &cfi, &scn);
			t->debug_file = cfi != NULL;
		}
		if (cfi) {
			ret = walk_section(&b, t->debug_file ? dbg.elf : e->elf, scn, cfi, false);
			if (ret)
				goto out;
		}
	}

	ret = add_entry_end(&b, e->elf);
	if (!ret)
		ret = finish(&b, t);
out:
	ust_progress_end(&b.prog);
	if (dw)
		dwarf_end(dw);
	if (dbg.elf)
		ust_sym_elf_close(&dbg);
	free(b.segs);
	free(b.spans);
	free(b.eh_cov);
	if (ret) {
		ust_cfi_table_free(t);
		return ret;
	}
	t->stats.build_ms = now_ms() - t0;
	*out = t;
	return 0;
}

/*
 * The table built by the interpreter and by libdw differ at row @i:
 * both rows (or the end of one table) in the message.
 */
static int check_failed(const struct ust_cfi_table *t, const struct ust_cfi_table *ref,
			uint32_t i, char *err, size_t errsz)
{
	char a[96] = "(no row)", b[96] = "(no row)";

	if (i < t->nr_rows)
		ust_cfi_row_format(&t->rows[i], a, sizeof(a));
	if (i < ref->nr_rows)
		ust_cfi_row_format(&ref->rows[i], b, sizeof(b));
	return ust_cfi_fail(err, errsz, -EPROTO,
			    "unwind table check: row %u of %u (libdw: %u) differs: %s, libdw: %s",
			    i, t->nr_rows, ref->nr_rows, a, b);
}

int ust_cfi_build_elf(const struct ust_sym_elf *e, const char *path,
		      const struct ust_cfi_opts *opts, struct ust_cfi_table **out,
		      char *err, size_t errsz)
{
	static const struct ust_cfi_opts no_opts;
	struct ust_cfi_table *t, *ref;
	uint32_t i;
	int ret;

	if (!opts)
		opts = &no_opts;
	ret = build(e, path, opts, false, out, err, errsz);
	if (ret || !opts->check)
		return ret;
	t = *out;
	ret = build(e, path, opts, true, &ref, err, errsz);
	if (ret)
		goto fail;
	for (i = 0; i < t->nr_rows || i < ref->nr_rows; i++)
		if (i >= t->nr_rows || i >= ref->nr_rows ||
		    memcmp(&t->rows[i], &ref->rows[i], sizeof(t->rows[i]))) {
			ret = check_failed(t, ref, i, err, errsz);
			break;
		}
	if (!ret && t->stats.rows_overflow != ref->stats.rows_overflow)
		ret = ust_cfi_fail(err, errsz, -EPROTO,
				   "unwind table check: %u offsets too large, libdw: %u",
				   t->stats.rows_overflow, ref->stats.rows_overflow);
	ust_cfi_table_free(ref);
	if (!ret)
		return 0;
fail:
	ust_cfi_table_free(t);
	*out = NULL;
	return ret;
}

int ust_cfi_build_path(const char *path, const struct ust_cfi_opts *opts,
		       struct ust_cfi_table **out, char *err, size_t errsz)
{
	struct ust_sym_elf e;
	int ret;

	*out = NULL;
	ret = ust_cfi_elf_path(&e, path, err, errsz);
	if (ret)
		return ret;
	ret = ust_cfi_build_elf(&e, path, opts, out, err, errsz);
	ust_sym_elf_close(&e);
	return ret;
}

int ust_cfi_build_fd(int fd, const struct ust_cfi_opts *opts,
		     struct ust_cfi_table **out, char *err, size_t errsz)
{
	char link[64], path[PATH_MAX];
	struct ust_sym_elf e;
	ssize_t n;
	int ret;

	*out = NULL;
	ret = ust_cfi_elf_fd(&e, fd, err, errsz);
	if (ret)
		return ret;
	/* The file's name, for the .gnu_debuglink lookup next to it. */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n > 0 && path[0] == '/')
		path[n] = '\0';
	else
		path[0] = '\0';
	ret = ust_cfi_build_elf(&e, path[0] ? path : NULL, opts, out, err, errsz);
	ust_sym_elf_close(&e);
	return ret;
}

int ust_cfi_build_mem(const void *image, size_t size, const struct ust_cfi_opts *opts,
		      struct ust_cfi_table **out, char *err, size_t errsz)
{
	struct ust_sym_elf e;
	int ret;

	*out = NULL;
	ret = ust_cfi_elf_mem(&e, image, size, err, errsz);
	if (ret)
		return ret;
	ret = ust_cfi_build_elf(&e, NULL, opts, out, err, errsz);
	ust_sym_elf_close(&e);
	return ret;
}
