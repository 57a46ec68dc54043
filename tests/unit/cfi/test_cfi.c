// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_cfi against readelf: for every row readelf --debug-dump=frames-interp
 * prints (vaddrs, mapped to file offsets here with libelf, independently
 * of the builder), the table must give the same CFA rule (register and
 * offset, or "an expression" for readelf's "exp"), the same return
 * address rule (c-8, or undefined = END) and the same rbp and rbx rules,
 * at the row's first byte, its last byte and its middle.  Where an FDE ends and
 * no other begins, the table must say NONE.  Files: libc, ld.so,
 * python3.11, the vDSO (its image written to a file for readelf) and the
 * test programs built -O2 -fomit-frame-pointer (PIE, non-PIE, the shared
 * library; -z lazy).
 *
 * At each of those pcs, the unwind step of bpf/ust_cfi_step.h (the one
 * the BPF walk and the LTTng provider run) from made-up registers must
 * take the CFA, the return address and the caller's rbp and rbx from
 * where readelf's row says.
 *
 * Then the cases readelf cannot tell apart: the PLT expression, the
 * realigned frame (CFA = *(rbp - N)), __restore_rt (found through the
 * kernel's copy of our own sigaction), _start, ld.so's lazy-binding entry
 * (CFA = rbx + 32, found by symbol); and the disk cache.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <link.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "ustitch/cfi.h"
#include "ustitch/grow.h"
#include "ustitch/sym.h"
#include "cfi_testutil.h"

/*
 * The unwind step both walkers run (bpf/ust_cfi_step.h), compiled here
 * over a pretend stack: every word reads as step_word(its address) (or
 * what a test put there), and the reads are logged, so a step's result
 * tells which addresses it took the CFA, the return address, rbp and rbx
 * from.
 */
struct step_mem {
	uint64_t at[8], val[8];		/* words a test put there */
	int nr_at;
	uint64_t fail;			/* a word that cannot be read (0: none) */
	uint64_t reads[16];
	int nr_reads;
};

static uint64_t step_word(uint64_t addr)
{
	return addr + 0x10000;		/* one-to-one: a value names its address */
}

static int step_read(struct step_mem *m, __u64 addr, __u64 *val)
{
	int i;

	if (m->nr_reads < 16)
		m->reads[m->nr_reads] = addr;
	m->nr_reads++;
	if (m->fail && addr == m->fail)
		return -1;
	*val = step_word(addr);
	for (i = 0; i < m->nr_at; i++)
		if (m->at[i] == addr)
			*val = m->val[i];
	return 0;
}

#define UST_CFI_STEP_CTX		struct step_mem
#define UST_CFI_STEP_READ(c, a, v)	step_read((c), (a), (v))
#include "ust_cfi_step.h"

#define LIBC	"/lib/x86_64-linux-gnu/libc.so.6"
#define LDSO	"/lib64/ld-linux-x86-64.so.2"
#define PYTHON	"/usr/bin/python3.11"

/* --- readelf's view --------------------------------------------------------- */

struct re_row {
	uint64_t start, end;		/* vaddrs */
	char cfa[32], rbp[32], rbx[32], ra[32];
	bool signal;
};

struct re_fde {
	uint64_t start, end;
};

struct re_dump {
	struct re_row *rows;
	size_t nr, cap;
	struct re_fde *fdes;
	size_t nr_fdes, cap_fdes;
};

static void *grow(void *p, size_t *cap, size_t nr, size_t size)
{
	p = ust_grow(p, cap, nr + 1, size, 1024);
	assert_non_null(p);
	return p;
}

struct cie_s {
	unsigned long off;
	bool s;
};

/*
 * Parse `readelf --debug-dump=frames-interp` (the .eh_frame part only).
 * Lines: CIE "aug", FDE cie=X pc=A..B, a header of column names, rows
 * "LOC CFA col...".
 */
static void readelf_frames(const char *path, const char *sec, struct re_dump *d)
{
	char cmd[4096], line[4096];
	struct cie_s cies[4096];
	int nr_cies = 0, rbp_col = -1, rbx_col = -1, ra_col = -1;
	bool in_eh = false, fde_signal = false, in_fde = false;
	uint64_t fde_end = 0;
	size_t fde_first = SIZE_MAX;
	FILE *f;

	memset(d, 0, sizeof(*d));
	snprintf(cmd, sizeof(cmd), "'%s' -W -wN --debug-dump=frames-interp '%s' 2>/dev/null",
		 tu_env("UST_READELF"), path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long off, len, id, cie;
		unsigned long long a, b;
		char aug[64];

		if (strncmp(line, "Contents of the ", 16) == 0) {
			in_eh = strncmp(line + 16, sec, strlen(sec)) == 0 &&
				line[16 + strlen(sec)] == ' ';
			in_fde = false;
			continue;
		}
		if (!in_eh)
			continue;
		if (strstr(line, " CIE \"") && sscanf(line, "%lx", &off) == 1) {
			const char *q = strchr(line, '"') + 1;
			size_t n = strcspn(q, "\"");

			snprintf(aug, sizeof(aug), "%.*s", (int)n, q);
			if (nr_cies < (int)(sizeof(cies) / sizeof(cies[0])))
				cies[nr_cies++] = (struct cie_s){ off, strchr(aug, 'S') != NULL };
			in_fde = false;
			continue;
		}
		if (sscanf(line, "%lx %lx %lx FDE cie=%lx pc=%llx..%llx", &off, &len, &id, &cie,
			   &a, &b) == 6) {
			int i;

			fde_signal = false;
			for (i = 0; i < nr_cies; i++)
				if (cies[i].off == cie)
					fde_signal = cies[i].s;
			in_fde = true;
			fde_end = b;
			fde_first = d->nr;
			d->fdes = grow(d->fdes, &d->cap_fdes, d->nr_fdes, sizeof(*d->fdes));
			d->fdes[d->nr_fdes++] = (struct re_fde){ a, b };
			continue;
		}
		if (!in_fde)
			continue;
		if (strstr(line, "   LOC") == line) {
			char *tok, *save;
			int i = 0;

			rbp_col = rbx_col = ra_col = -1;
			for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
				if (i >= 2 && i - 2 < 64) {
					if (strcmp(tok, "rbp") == 0)
						rbp_col = i - 2;
					if (strcmp(tok, "rbx") == 0)
						rbx_col = i - 2;
					if (strcmp(tok, "ra") == 0)
						ra_col = i - 2;
				}
				i++;
			}
			continue;
		}
		if (strlen(line) > 17 && line[16] == ' ' && sscanf(line, "%llx", &a) == 1) {
			char *tok, *save, vals[64][32];
			struct re_row *r;
			int i = 0;

			/* "r10 (r10)": a register rule is two tokens, one column. */
			for (tok = strtok_r(line + 17, " \n", &save); tok && i < 65;
			     tok = strtok_r(NULL, " \n", &save)) {
				if (tok[0] == '(')
					continue;
				if (i == 0)
					snprintf(vals[63], sizeof(vals[0]), "%s", tok);	/* CFA */
				else if (i - 1 < 63)
					snprintf(vals[i - 1], sizeof(vals[0]), "%s", tok);
				i++;
			}
			if (d->nr > fde_first)
				d->rows[d->nr - 1].end = a;	/* the previous row of this FDE */
			d->rows = grow(d->rows, &d->cap, d->nr, sizeof(*d->rows));
			r = &d->rows[d->nr++];
			memset(r, 0, sizeof(*r));
			r->start = a;
			r->end = fde_end;
			r->signal = fde_signal;
			snprintf(r->cfa, sizeof(r->cfa), "%s", vals[63]);
			snprintf(r->rbp, sizeof(r->rbp), "%s",
				 rbp_col >= 0 && rbp_col < i - 1 ? vals[rbp_col] : "u");
			snprintf(r->rbx, sizeof(r->rbx), "%s",
				 rbx_col >= 0 && rbx_col < i - 1 ? vals[rbx_col] : "u");
			snprintf(r->ra, sizeof(r->ra), "%s",
				 ra_col >= 0 && ra_col < i - 1 ? vals[ra_col] : "?");
		}
	}
	assert_int_equal(pclose(f), 0);
}

static void re_free(struct re_dump *d)
{
	free(d->rows);
	free(d->fdes);
}

/* --- the comparison ----------------------------------------------------------- */

struct cmp_stats {
	unsigned long pcs, rows, mismatches, skipped_overlap, none_checked;
	unsigned long by_type[UST_CFI_NR_CFA_TYPES];
	unsigned long rbx_saved;	/* pcs that agreed where readelf has an rbx rule (not u/s) */
	unsigned long stepped;		/* pcs where the step was checked against readelf */
	unsigned long step_exp;		/* pcs of a CFA expression: stepped, not checked */
};

static bool parse_reg_off(const char *s, const char *reg, int64_t *off)
{
	size_t n = strlen(reg);
	char *end;

	if (strncmp(s, reg, n) != 0 || (s[n] != '+' && s[n] != '-'))
		return false;
	*off = strtoll(s + n, &end, 10);
	return *end == '\0';
}

/*
 * A callee-saved register's rule (rbp, rbx: UST_CFI_RBP_*) against
 * readelf's column @re: "u" (undefined: a callee-saved register keeps its
 * value) and "s" are SAME, "c-N" is CFA with -N (UNSUPPORTED when N does
 * not fit the s16), "exp" DEREF_RBP (the expression "breg6 N") or
 * UNSUPPORTED, anything else (another register, val_offset) UNSUPPORTED.
 */
static bool saved_agrees(const char *reg, const char *re, uint8_t type, int16_t roff,
			 char *why, size_t len)
{
	int64_t off;

	if (strcmp(re, "u") == 0 || strcmp(re, "s") == 0) {
		if (type != UST_CFI_RBP_SAME) {
			snprintf(why, len, "%s %s, got %s", reg, re, ust_cfi_rbp_name(type));
			return false;
		}
	} else if (re[0] == 'c' && (re[1] == '-' || re[1] == '+')) {
		off = strtoll(re + 1, NULL, 10);
		if (off >= INT16_MIN && off <= INT16_MAX ?
		    type != UST_CFI_RBP_CFA || roff != off :
		    type != UST_CFI_RBP_UNSUPPORTED) {
			snprintf(why, len, "%s %s, got %s%+d", reg, re, ust_cfi_rbp_name(type), roff);
			return false;
		}
	} else if (strcmp(re, "exp") == 0) {
		if (type != UST_CFI_RBP_DEREF_RBP && type != UST_CFI_RBP_UNSUPPORTED) {
			snprintf(why, len, "%s exp, got %s", reg, ust_cfi_rbp_name(type));
			return false;
		}
	} else if (type != UST_CFI_RBP_UNSUPPORTED) {
		snprintf(why, len, "%s %s, got %s", reg, re, ust_cfi_rbp_name(type));
		return false;
	}
	return true;
}

/* Does @row agree with readelf's row @r?  Fills @why when not. */
static bool agrees(const struct re_row *r, const struct ust_cfi_row *row, char *why, size_t len)
{
	int64_t off;
	uint8_t want = 0xff;
	bool exp_ok = false;

	if (r->signal)
		want = UST_CFI_CFA_SIGNAL;
	else if (strcmp(r->ra, "u") == 0)
		want = UST_CFI_CFA_END;
	else if (strcmp(r->ra, "c-8") != 0)
		want = UST_CFI_CFA_UNSUPPORTED;
	else if (parse_reg_off(r->cfa, "rsp", &off))
		want = off >= INT32_MIN && off <= INT32_MAX ? UST_CFI_CFA_RSP : UST_CFI_CFA_UNSUPPORTED;
	else if (parse_reg_off(r->cfa, "rbp", &off))
		want = off >= INT32_MIN && off <= INT32_MAX ? UST_CFI_CFA_RBP : UST_CFI_CFA_UNSUPPORTED;
	else if (parse_reg_off(r->cfa, "rbx", &off))
		want = off >= INT32_MIN && off <= INT32_MAX ? UST_CFI_CFA_RBX : UST_CFI_CFA_UNSUPPORTED;
	else if (strcmp(r->cfa, "exp") == 0)
		exp_ok = true;
	else
		want = UST_CFI_CFA_UNSUPPORTED;

	if (exp_ok) {
		if (row->cfa_type != UST_CFI_CFA_PLT && row->cfa_type != UST_CFI_CFA_DEREF_RBP &&
		    row->cfa_type != UST_CFI_CFA_UNSUPPORTED) {
			snprintf(why, len, "cfa exp, got %s", ust_cfi_cfa_name(row->cfa_type));
			return false;
		}
	} else if (row->cfa_type != want) {
		snprintf(why, len, "cfa %s ra %s: want %s, got %s", r->cfa, r->ra,
			 ust_cfi_cfa_name(want), ust_cfi_cfa_name(row->cfa_type));
		return false;
	} else if ((want == UST_CFI_CFA_RSP || want == UST_CFI_CFA_RBP ||
		    want == UST_CFI_CFA_RBX) && row->cfa_off != off) {
		snprintf(why, len, "cfa %s: got offset %d", r->cfa, row->cfa_off);
		return false;
	}

	/*
	 * rbp and rbx matter where the walk goes on with this row's CFA; the
	 * other rows carry neither (SAME, offset 0).
	 */
	if (row->cfa_type != UST_CFI_CFA_RSP && row->cfa_type != UST_CFI_CFA_RBP &&
	    row->cfa_type != UST_CFI_CFA_DEREF_RBP && row->cfa_type != UST_CFI_CFA_RBX) {
		if (row->rbx_type != UST_CFI_RBP_SAME || row->rbx_off || row->pad ||
		    (row->cfa_type != UST_CFI_CFA_PLT &&
		     (row->rbp_type != UST_CFI_RBP_SAME || row->rbp_off))) {
			snprintf(why, len, "cfa %s with register rules", ust_cfi_cfa_name(row->cfa_type));
			return false;
		}
		return true;
	}
	return saved_agrees("rbp", r->rbp, row->rbp_type, row->rbp_off, why, len) &&
	       saved_agrees("rbx", r->rbx, row->rbx_type, row->rbx_off, why, len);
}

/* The registers the step starts from: rbp and rbx above rsp, far apart. */
#define STEP_SP	0x7ffd00000000ULL
#define STEP_BP	(STEP_SP + 0x100000)
#define STEP_BX	(STEP_SP + 0x200000)

static bool step_read_at(const struct step_mem *m, uint64_t addr)
{
	int i;

	for (i = 0; i < m->nr_reads && i < 16; i++)
		if (m->reads[i] == addr)
			return true;
	return false;
}

/*
 * A caller's callee-saved register after the step, against readelf's
 * column @re: "u"/"s" keeps @reg0 (this frame's value), "c-N" is the word
 * at CFA - N, an expression is the table's own DEREF_RBP rule (readelf
 * does not decode it) or unknown, anything else unknown.
 */
static bool step_saved_agrees(const char *name, const char *re, struct step_mem *m,
			      struct ust_cfi_regs *g, bool bx, uint64_t reg0, uint64_t cfa,
			      uint8_t type, int16_t roff, char *why, size_t len)
{
	uint64_t got;
	int ok;

	m->nr_reads = 0;
	ok = bx ? ust_cfi_regs_bx(m, g) : ust_cfi_regs_bp(m, g);
	got = bx ? g->bx : g->bp;
	if (strcmp(re, "u") == 0 || strcmp(re, "s") == 0) {
		if (!ok || got != reg0 || m->nr_reads) {
			snprintf(why, len, "step: %s %s, got %#" PRIx64 " (known %d, %d reads)",
				 name, re, got, ok, m->nr_reads);
			return false;
		}
	} else if (re[0] == 'c' && (re[1] == '-' || re[1] == '+') &&
		   type == UST_CFI_RBP_CFA) {
		uint64_t at = cfa + strtoll(re + 1, NULL, 10);

		if (!ok || got != step_word(at) || !step_read_at(m, at)) {
			snprintf(why, len, "step: %s %s, read %s at %#" PRIx64 " (cfa %#" PRIx64 ")",
				 name, re, ok ? "elsewhere" : "nothing", at, cfa);
			return false;
		}
	} else if (type == UST_CFI_RBP_DEREF_RBP && strcmp(re, "exp") == 0) {
		if (!ok || got != step_word(STEP_BP + roff)) {
			snprintf(why, len, "step: %s exp (deref-rbp%+d), got %#" PRIx64, name, roff,
				 got);
			return false;
		}
	} else if (ok) {
		snprintf(why, len, "step: %s %s, yet known (%#" PRIx64 ")", name, re, got);
		return false;
	}
	return true;
}

/*
 * The step at vaddr @pc by @row (which agrees with readelf's @r): from
 * rsp, rbp, rbx = STEP_SP, _BP, _BX, where does it take the caller's
 * registers from?  1: as readelf says, 0: not (@why), -1: not checked
 * (a CFA expression, or a row that leaves the step to frame pointers).
 */
static int step_agrees(const struct re_row *r, const struct ust_cfi_row *row, uint64_t pc,
		       char *why, size_t len)
{
	struct step_mem m = { .nr_reads = 0 };
	struct ust_cfi_regs g;
	uint64_t cfa;
	int64_t off;
	int ret;

	if (ust_cfi_row_fp(row))
		return -1;
	ust_cfi_regs_init(&g, pc, STEP_SP, STEP_BP, STEP_BX);
	ret = ust_cfi_step_row(&m, &g, row);
	if (r->signal) {
		if (ret != UST_CFI_STEP_NEXT || g.ip != step_word(STEP_SP + UST_CFI_SIGFRAME_RIP) ||
		    g.sp != step_word(STEP_SP + UST_CFI_SIGFRAME_RSP) ||
		    g.bp != step_word(STEP_SP + UST_CFI_SIGFRAME_RBP) ||
		    g.bx != step_word(STEP_SP + UST_CFI_SIGFRAME_RBX) || !g.ip_exact) {
			snprintf(why, len, "step: signal frame, got %d ip %#" PRIx64, ret,
				 (uint64_t)g.ip);
			return 0;
		}
		return 1;
	}
	if (strcmp(r->ra, "u") == 0) {
		if (ret != UST_CFI_STEP_BOTTOM || m.nr_reads) {
			snprintf(why, len, "step: ra undefined, got %d after %d reads", ret, m.nr_reads);
			return 0;
		}
		return 1;
	}
	if (parse_reg_off(r->cfa, "rsp", &off))
		cfa = STEP_SP + off;
	else if (parse_reg_off(r->cfa, "rbp", &off))
		cfa = STEP_BP + off;
	else if (parse_reg_off(r->cfa, "rbx", &off))
		cfa = STEP_BX + off;
	else
		return -1;	/* PLT, DEREF_RBP: the special cases below check them */
	/* ra c-8 (agrees() held): the caller's rsp is the CFA, rip the word below it. */
	if (ret != UST_CFI_STEP_NEXT || g.sp != cfa || g.ip != step_word(cfa - 8) ||
	    !step_read_at(&m, cfa - 8) || g.ip_exact) {
		snprintf(why, len, "step: cfa %s = %#" PRIx64 ", got %d sp %#" PRIx64 " ip %#" PRIx64,
			 r->cfa, cfa, ret, (uint64_t)g.sp, (uint64_t)g.ip);
		return 0;
	}
	/* rbx first: a DEREF_RBP rule for it names this frame's rbp. */
	return step_saved_agrees("rbx", r->rbx, &m, &g, true, STEP_BX, cfa, row->rbx_type,
				 row->rbx_off, why, len) &&
	       step_saved_agrees("rbp", r->rbp, &m, &g, false, STEP_BP, cfa, row->rbp_type,
				 row->rbp_off, why, len);
}

/* Is @pc inside more than one FDE? (@f sorted by start) */
static bool overlapped(const struct re_fde *f, size_t n, uint64_t pc)
{
	size_t i, hits = 0;

	for (i = 0; i < n && f[i].start <= pc; i++)
		if (pc < f[i].end && ++hits > 1)
			return true;
	return false;
}

static int cmp_re_fde(const void *a, const void *b)
{
	const struct re_fde *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void compare_section(const char *path, const char *sec, const struct ust_cfi_table *t,
				 struct cmp_stats *cs)
{
	struct ct_segs segs;
	struct re_dump d;
	size_t i, j;
	bool has_overlap = false;

	memset(cs, 0, sizeof(*cs));
	assert_int_equal(ct_load_segs(path, &segs), 0);
	readelf_frames(path, sec, &d);
	assert_true(d.nr > 0);
	qsort(d.fdes, d.nr_fdes, sizeof(*d.fdes), cmp_re_fde);
	for (i = 1; i < d.nr_fdes; i++)
		if (d.fdes[i].start < d.fdes[i - 1].end)
			has_overlap = true;

	for (i = 0; i < d.nr; i++) {
		const struct re_row *r = &d.rows[i];
		uint64_t pcs[3] = { r->start, r->start + (r->end - r->start) / 2, r->end - 1 };

		if (r->end <= r->start || !ct_seg_exec(&segs, r->start))
			continue;
		cs->rows++;
		for (j = 0; j < 3; j++) {
			const struct ust_cfi_row *row;
			uint64_t off;
			char why[160];

			if (j && pcs[j] == pcs[j - 1])
				continue;
			if (has_overlap && overlapped(d.fdes, d.nr_fdes, pcs[j])) {
				cs->skipped_overlap++;
				continue;
			}
			assert_int_equal(ct_seg_off(&segs, pcs[j], &off), 0);
			row = ust_cfi_lookup(t, off);
			cs->pcs++;
			if (!row) {
				why[0] = '\0';
				snprintf(why, sizeof(why), "no row");
			} else if (agrees(r, row, why, sizeof(why))) {
				int st = step_agrees(r, row, pcs[j], why, sizeof(why));

				if (st == 0)
					goto mismatch;
				cs->stepped += st > 0;
				cs->step_exp += st < 0 && !ust_cfi_row_fp(row);
				cs->by_type[row->cfa_type]++;
				if (strcmp(r->rbx, "u") != 0 && strcmp(r->rbx, "s") != 0)
					cs->rbx_saved++;
				continue;
			}
mismatch:
			if (cs->mismatches++ < 10)
				print_message("%s: vaddr %#" PRIx64 " (off %#" PRIx64 "): %s\n",
					      path, pcs[j], off, why);
		}
	}
	/* Past an FDE's end, where no FDE continues: NONE. */
	for (i = 0; i < d.nr_fdes; i++) {
		uint64_t pc = d.fdes[i].end, off;
		const struct ust_cfi_row *row;
		bool covered = false;

		for (j = 0; j < d.nr_fdes && !covered; j++)
			covered = d.fdes[j].start <= pc && pc < d.fdes[j].end;
		if (covered || !ct_seg_exec(&segs, pc) || ct_seg_off(&segs, pc, &off))
			continue;
		if (d.nr_fdes > 20000 && i % 16)	/* quadratic above: sample */
			continue;
		row = ust_cfi_lookup(t, off);
		cs->none_checked++;
		if (!row || row->cfa_type != UST_CFI_CFA_NONE) {
			if (cs->mismatches++ < 10)
				print_message("%s: vaddr %#" PRIx64 " past an FDE: %s\n", path, pc,
					      row ? ust_cfi_cfa_name(row->cfa_type) : "no row");
		}
	}
	print_message("%s: %lu readelf rows, %lu pcs compared (rsp %lu rbp %lu rbx %lu plt %lu "
		      "deref-rbp %lu signal %lu end %lu unsupported %lu; rbx saved at %lu), %lu gap "
		      "ends NONE, %lu skipped (overlapping FDEs), %lu mismatches; table %u rows; "
		      "the step checked at %lu pcs (%lu by an expression unchecked)\n",
		      path, cs->rows, cs->pcs, cs->by_type[UST_CFI_CFA_RSP],
		      cs->by_type[UST_CFI_CFA_RBP], cs->by_type[UST_CFI_CFA_RBX],
		      cs->by_type[UST_CFI_CFA_PLT], cs->by_type[UST_CFI_CFA_DEREF_RBP],
		      cs->by_type[UST_CFI_CFA_SIGNAL], cs->by_type[UST_CFI_CFA_END],
		      cs->by_type[UST_CFI_CFA_UNSUPPORTED], cs->rbx_saved,
		      cs->none_checked, cs->skipped_overlap, cs->mismatches, t->nr_rows,
		      cs->stepped, cs->step_exp);
	re_free(&d);
	ct_free_segs(&segs);
}

static void compare_with_readelf(const char *path, const struct ust_cfi_table *t,
				 struct cmp_stats *cs)
{
	compare_section(path, ".eh_frame", t, cs);
}

/* Build @path and compare; returns the table (caller frees). */
static struct ust_cfi_table *build_and_compare(const char *path)
{
	struct ust_cfi_table *t;
	struct cmp_stats cs;
	char err[512] = "";
	uint32_t i;
	int ret;

	ret = ust_cfi_build_path(path, NULL, &t, err, sizeof(err));
	if (ret)
		fail_msg("%s: %d %s", path, ret, err);
	/* Sorted, strictly: one rule per offset. */
	for (i = 1; i < t->nr_rows; i++)
		assert_true(t->rows[i - 1].off < t->rows[i].off);
	/* Merged: no two neighbours with the same rule. */
	for (i = 1; i < t->nr_rows; i++) {
		const struct ust_cfi_row *a = &t->rows[i - 1], *b = &t->rows[i];

		assert_false(a->cfa_type == b->cfa_type && a->cfa_off == b->cfa_off &&
			     a->rbp_type == b->rbp_type && a->rbp_off == b->rbp_off &&
			     a->rbx_type == b->rbx_type && a->rbx_off == b->rbx_off);
	}
	for (i = 0; i < t->nr_rows; i++) {
		assert_int_equal(t->rows[i].pad, 0);
		assert_true(t->rows[i].rbx_type < UST_CFI_NR_RBP_TYPES);
	}
	if (t->nr_rows)
		assert_int_equal(t->rows[t->nr_rows - 1].cfa_type, UST_CFI_CFA_NONE);
	compare_with_readelf(path, t, &cs);
	assert_true(cs.pcs > 0);
	assert_true(cs.stepped > 0);
	assert_int_equal(cs.mismatches, 0);
	return t;
}

static void test_libc(void **state)
{
	(void)state;
	ust_cfi_table_free(build_and_compare(LIBC));
}

static void test_ldso(void **state)
{
	(void)state;
	ust_cfi_table_free(build_and_compare(LDSO));
}

static void test_python(void **state)
{
	(void)state;
	ust_cfi_table_free(build_and_compare(PYTHON));
}

/*
 * The step through a lazy PLT entry at vaddr @pc (its pc & 15 is the
 * runtime one's: segments are page-aligned): the return address at rsp
 * until the entry's push (offset 11 of 16) has run, at rsp + 8 after.
 */
static void check_step_plt(const struct ust_cfi_row *row, uint64_t pc)
{
	struct step_mem m = { .nr_reads = 0 };
	struct ust_cfi_regs g;
	uint64_t cfa = STEP_SP + ((pc & 15) >= 11 ? 16 : 8);

	ust_cfi_regs_init(&g, pc, STEP_SP, STEP_BP, STEP_BX);
	assert_int_equal(ust_cfi_step_row(&m, &g, row), UST_CFI_STEP_NEXT);
	assert_int_equal(g.sp, cfa);
	assert_int_equal(g.ip, step_word(cfa - 8));
	/* A PLT entry saves nothing: rbp and rbx stay, unread. */
	assert_int_equal(ust_cfi_regs_bp(&m, &g), 1);
	assert_int_equal(ust_cfi_regs_bx(&m, &g), 1);
	assert_int_equal(g.bp, STEP_BP);
	assert_int_equal(g.bx, STEP_BX);
	assert_int_equal(m.nr_reads, 1);
}

/*
 * The step through gcc's realigned frame: CFA = *(rbp + N) (the word a
 * test puts there), rbp saved at rbp + 0, rbx (if the row says so) at rbp
 * + M: from this frame's rbp, not from the CFA.
 */
static void check_step_deref(const struct ust_cfi_row *row)
{
	struct step_mem m = { .nr_reads = 0 };
	struct ust_cfi_regs g;
	uint64_t cfa = STEP_SP + 0x1000;

	m.at[0] = STEP_BP + row->cfa_off;
	m.val[0] = cfa;
	m.nr_at = 1;
	ust_cfi_regs_init(&g, 0x1000, STEP_SP, STEP_BP, STEP_BX);
	g.ip_exact = 0;
	assert_int_equal(ust_cfi_step_row(&m, &g, row), UST_CFI_STEP_NEXT);
	assert_int_equal(g.sp, cfa);
	assert_int_equal(g.ip, step_word(cfa - 8));
	assert_int_equal(ust_cfi_regs_bx(&m, &g), 1);
	assert_int_equal(ust_cfi_regs_bp(&m, &g), 1);
	assert_int_equal(g.bp, step_word(STEP_BP));
	if (row->rbx_type == UST_CFI_RBP_DEREF_RBP)
		assert_int_equal(g.bx, step_word(STEP_BP + row->rbx_off));
}

/* The test programs: every row, plus the rules readelf shows only as "exp". */
static void check_prog(const char *path, bool lazy_plt, bool realigned)
{
	struct ust_cfi_table *t = build_and_compare(path);
	uint64_t plt, plt_size, off;
	const struct ust_cfi_row *row;
	struct ct_segs segs;
	uint32_t i;
	bool deref = false, deref_rbx = false;

	assert_int_equal(ct_load_segs(path, &segs), 0);
	if (lazy_plt) {
		/* .plt: PLT0 (push; jmp), then entries whose CFA is the expression. */
		assert_int_equal(ct_section(path, ".plt", &plt, &plt_size), 0);
		assert_true(plt_size >= 32);
		assert_int_equal(ct_seg_off(&segs, plt + 16, &off), 0);
		row = ust_cfi_lookup(t, off);
		assert_non_null(row);
		assert_int_equal(row->cfa_type, UST_CFI_CFA_PLT);
		assert_int_equal(row->cfa_off, 8);
		assert_int_equal(row->rbp_off, 11);
		for (i = 0; i < 16; i++)
			check_step_plt(row, plt + 16 + i);
		assert_int_equal(ct_seg_off(&segs, plt + plt_size - 1, &off), 0);
		assert_int_equal(ust_cfi_lookup(t, off)->cfa_type, UST_CFI_CFA_PLT);
	}
	for (i = 0; i < t->nr_rows; i++) {
		if (t->rows[i].cfa_type == UST_CFI_CFA_DEREF_RBP) {
			deref = true;
			/* gcc: CFA = *(rbp - 8*k), rbp itself saved at rbp + 0. */
			assert_true(t->rows[i].cfa_off < 0);
			assert_int_equal(t->rows[i].rbp_type, UST_CFI_RBP_DEREF_RBP);
			assert_int_equal(t->rows[i].rbp_off, 0);
			/* The other callee-saved registers (rbx) below it. */
			if (t->rows[i].rbx_type == UST_CFI_RBP_DEREF_RBP) {
				assert_true(t->rows[i].rbx_off < 0);
				deref_rbx = true;
			}
			check_step_deref(&t->rows[i]);
		}
	}
	/* gcc 12's realigned(): rbx saved by "DW_CFA_expression rbx: breg6 -32". */
	if (deref)
		assert_true(deref_rbx);
	/*
	 * gcc realigns through r10 and CFA = *(rbp - N); clang keeps an rbp
	 * frame (CFA = rbp + 16) and realigns rsp below it.
	 */
	if (strcmp(tu_env("UST_CFI_CC"), "gcc") == 0)
		assert_int_equal(deref, realigned);
	else if (realigned)
		assert_true(t->stats.rows_cfa[UST_CFI_CFA_RBP] > 0);
	/* _start: the return address is undefined. */
	if (realigned) {
		assert_int_equal(ct_seg_off(&segs, ct_entry(path), &off), 0);
		row = ust_cfi_lookup(t, off);
		assert_non_null(row);
		assert_int_equal(row->cfa_type, UST_CFI_CFA_END);
	}
	ct_free_segs(&segs);
	ust_cfi_table_free(t);
}

/*
 * The frame-pointer step of both walkers: CFA = rbp + 16, the return
 * address below it, the caller's rbp at rbp; rbp 0 ends the walk at the
 * outermost frame, an rbp not above rsp (or misaligned) cuts it, an
 * unreadable record is a fault, and rbx is unknown after the step.
 */
static void test_step_fp(void **state)
{
	struct step_mem m = { .nr_reads = 0 };
	struct ust_cfi_regs g;

	(void)state;
	assert_true(ust_cfi_row_fp(NULL));
	ust_cfi_regs_init(&g, 0x401000, STEP_SP, STEP_BP, STEP_BX);
	assert_int_equal(ust_cfi_step_fp(&m, &g), UST_CFI_STEP_NEXT);
	assert_int_equal(g.ip, step_word(STEP_BP + 8));
	assert_int_equal(g.sp, STEP_BP + 16);
	assert_int_equal(g.bp, step_word(STEP_BP));
	assert_false(g.bx_ok);
	assert_false(g.ip_exact);

	ust_cfi_regs_init(&g, 0x401000, STEP_SP, 0, STEP_BX);
	assert_int_equal(ust_cfi_step_fp(&m, &g), UST_CFI_STEP_BOTTOM);
	/* rbp 0 where a loaded table has no rule: no frame pointer, not the end. */
	{
		const struct ust_cfi_row none = { .cfa_type = UST_CFI_CFA_NONE };

		ust_cfi_regs_init(&g, 0x401000, STEP_SP, 0, STEP_BX);
		assert_int_equal(ust_cfi_step_norule(&m, &g, NULL), UST_CFI_STEP_BOTTOM);
		ust_cfi_regs_init(&g, 0x401000, STEP_SP, 0, STEP_BX);
		assert_int_equal(ust_cfi_step_norule(&m, &g, &none), UST_CFI_STEP_BAD);
		ust_cfi_regs_init(&g, 0x401000, STEP_SP, STEP_BP, STEP_BX);
		assert_int_equal(ust_cfi_step_norule(&m, &g, &none), UST_CFI_STEP_NEXT);
	}
	ust_cfi_regs_init(&g, 0x401000, STEP_SP, STEP_SP - 64, STEP_BX);
	assert_int_equal(ust_cfi_step_fp(&m, &g), UST_CFI_STEP_BAD);
	ust_cfi_regs_init(&g, 0x401000, STEP_SP, STEP_BP + 4, STEP_BX);
	assert_int_equal(ust_cfi_step_fp(&m, &g), UST_CFI_STEP_BAD);
	m.fail = STEP_BP + 8;
	ust_cfi_regs_init(&g, 0x401000, STEP_SP, STEP_BP, STEP_BX);
	assert_int_equal(ust_cfi_step_fp(&m, &g), UST_CFI_STEP_FAULT);
	m.fail = 0;
	/* A return address of 0: the walk ends. */
	m.at[0] = STEP_BP + 8;
	m.val[0] = 0;
	m.nr_at = 1;
	ust_cfi_regs_init(&g, 0x401000, STEP_SP, STEP_BP, STEP_BX);
	assert_int_equal(ust_cfi_step_fp(&m, &g), UST_CFI_STEP_END);
}

static void test_prog_pie(void **state)
{
	(void)state;
	check_prog(tu_env("UST_CFI_PROG"), true, true);
}

static void test_prog_nopie(void **state)
{
	(void)state;
	check_prog(tu_env("UST_CFI_PROG_NOPIE"), true, true);
}

/*
 * A static executable (ET_EXEC at 0x400000, no .eh_frame_hdr, no
 * PT_GNU_EH_FRAME): the table from its .eh_frame by section, rows at file
 * offsets, the same as readelf's; cfit_recurse (cfitest-lib.c, linked
 * in): CFA rsp + 8 at its entry, above 4 KiB in its body (the 4 KiB pad).
 */
static void test_prog_static(void **state)
{
	const char *path = tu_env("UST_CFI_PROG_STATIC");
	uint64_t addr, size, lo, hi, a;
	const struct ust_cfi_row *row;
	struct ust_cfi_table *t;
	struct ct_segs segs;
	char err[512] = "";
	int32_t big = 0;

	(void)state;
	if (!*path)
		skip();		/* no libc.a */
	assert_int_not_equal(ct_section(path, ".eh_frame_hdr", &addr, &size), 0);
	assert_int_equal(ct_section(path, ".eh_frame", &addr, &size), 0);
	check_prog(path, false, true);
	assert_int_equal(ct_symbol(path, "cfit_recurse", &addr, &size), 0);
	assert_true(addr >= 0x400000 && size > 16);
	assert_int_equal(ct_load_segs(path, &segs), 0);
	assert_int_equal(ct_seg_off(&segs, addr, &lo), 0);
	assert_int_equal(lo, addr - 0x400000);	/* the first PT_LOAD: offset 0 at 0x400000 */
	hi = lo + size;
	assert_int_equal(ust_cfi_build_path(path, NULL, &t, err, sizeof(err)), 0);
	row = ust_cfi_lookup(t, lo);
	assert_non_null(row);
	assert_int_equal(row->off, lo);
	assert_int_equal(row->cfa_type, UST_CFI_CFA_RSP);
	assert_int_equal(row->cfa_off, 8);
	for (a = lo; a < hi; a++) {
		row = ust_cfi_lookup(t, a);
		assert_non_null(row);
		assert_int_equal(row->cfa_type, UST_CFI_CFA_RSP);
		if (row->cfa_off > big)
			big = row->cfa_off;
	}
	assert_true(big > 4096);
	ct_free_segs(&segs);
	ust_cfi_table_free(t);
}

static void test_prog_lib(void **state)
{
	(void)state;
	check_prog(tu_env("UST_CFI_LIB"), true, false);
}

/*
 * .debug_frame: a library built without unwind tables has rows from its
 * .debug_frame, the same as readelf's; stripped, the rows come from its
 * debug file (.gnu_debuglink), the same table.
 */
static void test_debug_frame(void **state)
{
	const char *lib = tu_env("UST_CFI_LIB_DF");
	struct ust_cfi_opts eh_only = { .no_debug_frame = true };
	struct ust_cfi_table *t, *s, *e;
	struct cmp_stats cs;
	char err[512] = "";

	(void)state;
	assert_int_equal(ust_cfi_build_path(lib, NULL, &t, err, sizeof(err)), 0);
	assert_true(t->stats.fdes_debug_frame > 0);
	assert_int_equal(t->stats.fdes_debug_frame, t->stats.fdes);
	assert_false(t->debug_file);
	compare_section(lib, ".debug_frame", t, &cs);
	assert_true(cs.pcs > 0);
	assert_int_equal(cs.mismatches, 0);

	assert_int_equal(ust_cfi_build_path(tu_env("UST_CFI_LIB_DF_STRIPPED"), NULL, &s, err,
					    sizeof(err)), 0);
	assert_true(s->debug_file);
	assert_int_equal(s->nr_rows, t->nr_rows);
	assert_memory_equal(s->rows, t->rows, t->nr_rows * sizeof(*t->rows));

	assert_int_equal(ust_cfi_build_path(lib, &eh_only, &e, err, sizeof(err)), 0);
	assert_int_equal(e->stats.fdes, 0);
	ust_cfi_table_free(e);
	ust_cfi_table_free(s);
	ust_cfi_table_free(t);
}

/* --- the vDSO ----------------------------------------------------------------- */

static size_t vdso_size(const Elf64_Ehdr *eh)
{
	const Elf64_Phdr *ph = (const void *)((const char *)eh + eh->e_phoff);
	size_t end = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	int i;

	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > end)
			end = ph[i].p_offset + ph[i].p_filesz;
	return end;
}

static void test_vdso(void **state)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct ust_cfi_table *t;
	struct cmp_stats cs;
	char err[512] = "", path[4096];
	char *dir;
	size_t size;

	(void)state;
	if (!eh)
		skip();
	size = vdso_size(eh);
	assert_int_equal(ust_cfi_build_mem(eh, size, NULL, &t, err, sizeof(err)), 0);
	assert_true(t->nr_rows > 0);
	assert_true(t->stats.fdes > 0);
	assert_true(t->stats.rows_cfa[UST_CFI_CFA_RSP] > 0);
	/* readelf on the same bytes. */
	dir = tu_mkdtemp();
	snprintf(path, sizeof(path), "%s/vdso.so", dir);
	assert_int_equal(tu_write(path, eh, size), 0);
	compare_with_readelf(path, t, &cs);
	assert_true(cs.pcs > 0);
	assert_int_equal(cs.mismatches, 0);
	tu_rmtree(dir);
	free(dir);
	ust_cfi_table_free(t);
}

/* --- __restore_rt ------------------------------------------------------------- */

struct kernel_sigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

static void on_usr2(int sig)
{
	(void)sig;
}

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	uint64_t *io = arg;	/* in: address; out: [1] load bias, [2] found */
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && io[0] >= lo && io[0] < lo + ph->p_memsz) {
			io[1] = info->dlpi_addr;
			io[2] = 1;
			return strstr(info->dlpi_name, "libc.so") ? 1 : 2;
		}
	}
	return 0;
}

static void test_restore_rt(void **state)
{
	struct sigaction sa = { .sa_handler = on_usr2 };
	struct kernel_sigaction ksa;
	struct ust_cfi_table *t;
	const struct ust_cfi_row *row;
	struct ct_segs segs;
	uint64_t io[3] = { 0 }, off;
	char err[512] = "";

	(void)state;
	/* glibc's sigaction installs its __restore_rt as the restorer. */
	assert_int_equal(sigaction(SIGUSR2, &sa, NULL), 0);
	assert_int_equal(syscall(SYS_rt_sigaction, SIGUSR2, NULL, &ksa, 8), 0);
	assert_non_null(ksa.restorer);
	io[0] = (uint64_t)(uintptr_t)ksa.restorer;
	assert_int_equal(dl_iterate_phdr(find_object, io), 1);	/* in libc */
	assert_int_equal(ct_load_segs(LIBC, &segs), 0);
	assert_int_equal(ct_seg_off(&segs, io[0] - io[1], &off), 0);

	assert_int_equal(ust_cfi_build_path(LIBC, NULL, &t, err, sizeof(err)), 0);
	row = ust_cfi_lookup(t, off);
	assert_non_null(row);
	assert_int_equal(row->cfa_type, UST_CFI_CFA_SIGNAL);
	/* The 'S' FDE starts one byte early (the unwinders look up pc - 1). */
	row = ust_cfi_lookup(t, off - 1);
	assert_int_equal(row->cfa_type, UST_CFI_CFA_SIGNAL);
	assert_int_equal(t->stats.rows_cfa[UST_CFI_CFA_SIGNAL], 1);
	ust_cfi_table_free(t);
	ct_free_segs(&segs);
}

/*
 * Undefined return addresses: clone()'s child path in libc ends the
 * walk (END); ld.so's _start has no CFI at all: the builder's END row
 * at the entry point.
 */
static void test_end(void **state)
{
	struct ust_cfi_table *t;
	const struct ust_cfi_row *row;
	const ElfW(Sym) *sym = NULL;
	struct ct_segs segs;
	uint64_t io[3] = { 0 }, lo, hi;
	char err[512] = "";
	Dl_info info;
	uint32_t i;
	bool in_clone = false;

	(void)state;
	assert_int_equal(ust_cfi_build_path(LIBC, NULL, &t, err, sizeof(err)), 0);
	assert_true(t->stats.rows_cfa[UST_CFI_CFA_END] >= 1);
	assert_true(dladdr1((void *)clone, &info, (void **)&sym, RTLD_DL_SYMENT) != 0);
	assert_non_null(sym);
	io[0] = (uint64_t)(uintptr_t)info.dli_saddr;
	assert_int_equal(dl_iterate_phdr(find_object, io), 1);
	assert_int_equal(ct_load_segs(LIBC, &segs), 0);
	assert_int_equal(ct_seg_off(&segs, io[0] - io[1], &lo), 0);
	hi = lo + sym->st_size;
	for (i = 0; i < t->nr_rows; i++)
		if (t->rows[i].cfa_type == UST_CFI_CFA_END && t->rows[i].off >= lo &&
		    t->rows[i].off < hi)
			in_clone = true;
	assert_true(in_clone);
	ct_free_segs(&segs);
	ust_cfi_table_free(t);

	assert_int_equal(ust_cfi_build_path(LDSO, NULL, &t, err, sizeof(err)), 0);
	assert_int_equal(ct_load_segs(LDSO, &segs), 0);
	assert_int_equal(ct_seg_off(&segs, ct_entry(LDSO), &lo), 0);
	row = ust_cfi_lookup(t, lo);
	assert_non_null(row);
	assert_int_equal(row->cfa_type, UST_CFI_CFA_END);
	/* Up to the next FDE: _dl_start_user, the same frame, is END too. */
	assert_int_equal(ust_cfi_lookup(t, lo + 8)->cfa_type, UST_CFI_CFA_END);
	ct_free_segs(&segs);
	ust_cfi_table_free(t);
}
/* --- ld.so's lazy-binding entry --------------------------------------------------- */

/*
 * _dl_runtime_resolve_xsavec (ld.so's .symtab is in libc6-dbg's debug
 * file, found by build-id as ust_sym finds it): "push %rbx; mov %rsp,%rbx;
 * and $-64,%rsp", so CFA = rbx + 32 with the caller's rbx at CFA - 32 until
 * the epilogue, and rbx saved at CFA - 32 already in the prologue (after
 * the push, CFA still rsp + 32).  Without the debug file: the FDE scan,
 * the functions whose rows have a CFA = rbx row.
 */
static void check_rbx_function(const struct ust_cfi_table *t, uint64_t lo, uint64_t hi,
			       const char *what)
{
	const struct ust_cfi_row *row;
	uint64_t off;
	bool saved_first = false, rbx_cfa = false;

	row = ust_cfi_lookup(t, lo);
	assert_non_null(row);
	assert_int_equal(row->off, lo);
	/* The entry: rbx untouched yet (the PLT pushed two words). */
	assert_int_equal(row->cfa_type, UST_CFI_CFA_RSP);
	assert_int_equal(row->rbx_type, UST_CFI_RBP_SAME);
	for (off = lo; off < hi; off = row + 1 < t->rows + t->nr_rows ? row[1].off : hi) {
		char buf[128];

		row = ust_cfi_lookup(t, off);
		ust_cfi_row_format(row, buf, sizeof(buf));
		print_message("%s: %s\n", what, buf);
		if (row->cfa_type == UST_CFI_CFA_RBX) {
			/* Saved before rbx took rsp's value: the prologue's push. */
			assert_true(saved_first);
			assert_int_equal(row->cfa_off, 32);
			assert_int_equal(row->rbx_type, UST_CFI_RBP_CFA);
			assert_int_equal(row->rbx_off, -32);
			assert_int_equal(row->rbp_type, UST_CFI_RBP_SAME);
			rbx_cfa = true;
		} else if (!rbx_cfa && row->rbx_type == UST_CFI_RBP_CFA) {
			assert_int_equal(row->cfa_type, UST_CFI_CFA_RSP);
			assert_int_equal(row->cfa_off, 32);
			assert_int_equal(row->rbx_off, -32);
			saved_first = true;
		}
	}
	assert_true(rbx_cfa);
	/* Past the realignment, in the middle of the xsavec/xrstor body. */
	row = ust_cfi_lookup(t, lo + (hi - lo) / 2);
	assert_int_equal(row->cfa_type, UST_CFI_CFA_RBX);
}

static void test_ldso_resolve(void **state)
{
	struct ust_sym_cache *sc;
	struct ust_sym_file *sf;
	struct ust_cfi_table *t;
	uint64_t off, size;
	char err[512] = "";
	uint32_t i, n = 0;

	(void)state;
	assert_int_equal(ust_cfi_build_path(LDSO, NULL, &t, err, sizeof(err)), 0);
	assert_true(t->stats.rows_cfa[UST_CFI_CFA_RBX] > 0);
	assert_true(t->stats.rows_rbx[UST_CFI_RBP_CFA] > 0);
	/* Every CFA = rbx row says where the caller's rbx is. */
	for (i = 0; i < t->nr_rows; i++)
		if (t->rows[i].cfa_type == UST_CFI_CFA_RBX) {
			assert_int_equal(t->rows[i].rbx_type, UST_CFI_RBP_CFA);
			assert_int_equal(t->rows[i].rbx_off, -t->rows[i].cfa_off);
			n++;
		}
	print_message("%s: %u rows CFA = rbx + N\n", LDSO, n);

	sc = ust_sym_cache_new(NULL);
	assert_non_null(sc);
	sf = ust_sym_cache_get(sc, LDSO, NULL, 0, err, sizeof(err));
	assert_non_null(sf);
	if (ust_sym_find_function(sf, "_dl_runtime_resolve_xsavec", &off, &size) == 0) {
		print_message("_dl_runtime_resolve_xsavec: file offset %#" PRIx64 ", %" PRIu64
			      " bytes (symbol)\n", off, size);
		check_rbx_function(t, off, off + size, "_dl_runtime_resolve_xsavec");
	} else {
		/* No debug symbols: the first function with a CFA = rbx + 32 row. */
		for (i = 0; i < t->nr_rows && (t->rows[i].cfa_type != UST_CFI_CFA_RBX ||
						   t->rows[i].cfa_off != 32); i++)
			;
		assert_true(i < t->nr_rows);
		while (i && t->rows[i - 1].cfa_type != UST_CFI_CFA_NONE)
			i--;
		off = t->rows[i].off;
		while (i < t->nr_rows && t->rows[i].cfa_type != UST_CFI_CFA_NONE)
			i++;
		assert_true(i < t->nr_rows);
		print_message("no ld.so symbols: the CFA = rbx run at %#" PRIx64 "\n", off);
		check_rbx_function(t, off, t->rows[i].off, "CFA = rbx function");
	}
	ust_sym_cache_free(sc);
	ust_cfi_table_free(t);
}

/* --- corrupt input -------------------------------------------------------------- */

static int try_build(const char *dir, const char *name, const void *buf, size_t len,
		     char *err, size_t errsz)
{
	struct ust_cfi_table *t = NULL;
	char path[4096];
	int ret, fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(tu_write(path, buf, len), 0);
	err[0] = '\0';
	ret = ust_cfi_build_path(path, NULL, &t, err, errsz);
	if (ret == 0) {
		/* A table must still be sane. */
		uint32_t i;

		for (i = 1; i < t->nr_rows; i++)
			assert_true(t->rows[i - 1].off < t->rows[i].off);
		ust_cfi_table_free(t);
	} else {
		assert_true(ret < 0);
		assert_true(err[0] != '\0');
	}
	/* The same through a descriptor and from memory. */
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	if (ust_cfi_build_fd(fd, NULL, &t, err + 256, errsz - 256) == 0)
		ust_cfi_table_free(t);
	close(fd);
	if (ust_cfi_build_mem(buf, len, NULL, &t, err + 256, errsz - 256) == 0)
		ust_cfi_table_free(t);
	return ret;
}

static void test_corrupt(void **state)
{
	const char *prog = tu_env("UST_CFI_PROG");
	size_t len, i, cuts[] = { 1, 4, 16, 63, 64, 100, 1000, 4096 };
	uint64_t eh_addr, eh_size, eh_off, seed = 42;
	uint8_t *img = tu_read(prog, &len), *copy;
	char err[768];
	struct ct_segs segs;
	int ret;

	(void)state;
	char *dir = tu_mkdtemp();

	assert_non_null(img);
	copy = malloc(len);
	assert_non_null(copy);

	/* Truncated. */
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		ret = try_build(dir, "cut", img, cuts[i], err, sizeof(err));
		assert_true(ret < 0);
		print_message("cut at %zu: %d %s\n", cuts[i], ret, err);
	}
	ret = try_build(dir, "cut", img, len / 2, err, sizeof(err));
	assert_true(ret < 0);
	assert_non_null(strstr(err, "ELF"));
	print_message("cut at half: %d %s\n", ret, err);

	/* Not ELF at all. */
	memset(copy, 'x', len);
	ret = try_build(dir, "text", copy, len, err, sizeof(err));
	assert_int_equal(ret, -ENOEXEC);
	assert_non_null(strstr(err, "not an ELF"));

	/* Garbage .eh_frame: random bytes, all 0xff, a huge length field. */
	assert_int_equal(ct_section(prog, ".eh_frame", &eh_addr, &eh_size), 0);
	assert_int_equal(ct_load_segs(prog, &segs), 0);
	assert_int_equal(ct_section_off(prog, ".eh_frame", &eh_off), 0);
	for (i = 0; i < 20; i++) {
		size_t k;

		memcpy(copy, img, len);
		for (k = 0; k < eh_size; k++)
			copy[eh_off + k] = (uint8_t)tu_rand(&seed);
		ret = try_build(dir, "eh-random", copy, len, err, sizeof(err));
		if (i == 0)
			print_message("random .eh_frame: %d %s\n", ret, err);
		assert_true(ret == -EBADMSG);
		assert_non_null(strstr(err, "eh_frame"));
	}
	memcpy(copy, img, len);
	memset(copy + eh_off, 0xff, eh_size);
	ret = try_build(dir, "eh-ff", copy, len, err, sizeof(err));
	print_message("0xff .eh_frame: %d %s\n", ret, err);
	assert_int_equal(ret, -EBADMSG);
	/* A first CIE claiming more bytes than the section has. */
	memcpy(copy, img, len);
	copy[eh_off] = 0xf0;
	copy[eh_off + 1] = 0xff;
	copy[eh_off + 2] = 0xff;
	copy[eh_off + 3] = 0x0f;
	ret = try_build(dir, "eh-len", copy, len, err, sizeof(err));
	print_message("long CIE: %d %s\n", ret, err);
	assert_int_equal(ret, -EBADMSG);
	/*
	 * The first FDE's first instruction (after the CIE: length, CIE
	 * pointer, pcrel start, range, augmentation length 0 as gcc's 'zR'
	 * CIE has it): a restore_state with nothing remembered, then an
	 * instruction no DWARF version defines.  The interpreter names both.
	 */
	{
		uint32_t cie_len, fde_len;
		size_t fde;

		memcpy(&cie_len, img + eh_off, 4);
		fde = eh_off + 4 + cie_len;
		memcpy(&fde_len, img + fde, 4);
		assert_true(fde_len >= 14);
		assert_int_equal(img[fde + 16], 0);
		memcpy(copy, img, len);
		copy[fde + 17] = 0x0b;
		ret = try_build(dir, "eh-restore", copy, len, err, sizeof(err));
		print_message("restore_state first: %d %s\n", ret, err);
		assert_int_equal(ret, -EBADMSG);
		assert_non_null(strstr(err, "DW_CFA_restore_state without a remembered state"));
		copy[fde + 17] = 0x3f;
		ret = try_build(dir, "eh-op", copy, len, err, sizeof(err));
		print_message("instruction 0x3f: %d %s\n", ret, err);
		assert_int_equal(ret, -EBADMSG);
		assert_non_null(strstr(err, "unknown instruction 0x3f"));
	}
	/* Single bytes changed anywhere in .eh_frame: an error or a sane table. */
	for (i = 0; i < 300; i++) {
		memcpy(copy, img, len);
		copy[eh_off + tu_rand(&seed) % eh_size] ^= (uint8_t)(1 + tu_rand(&seed) % 255);
		try_build(dir, "eh-flip", copy, len, err, sizeof(err));
	}
	/* Random bytes anywhere in the file. */
	for (i = 0; i < 300; i++) {
		int k;

		memcpy(copy, img, len);
		for (k = 0; k < 8; k++)
			copy[tu_rand(&seed) % len] = (uint8_t)tu_rand(&seed);
		try_build(dir, "flip", copy, len, err, sizeof(err));
	}
	/* Errors of the API itself. */
	{
		struct ust_cfi_table *t;

		assert_int_equal(ust_cfi_build_path("/nonexistent/x", NULL, &t, err, sizeof(err)),
				 -ENOENT);
		assert_non_null(strstr(err, "/nonexistent/x"));
		assert_int_equal(ust_cfi_build_path("/", NULL, &t, err, sizeof(err)), -EINVAL);
		assert_int_equal(ust_cfi_build_fd(-1, NULL, &t, NULL, 0), -EBADF);
		assert_int_equal(ust_cfi_build_mem(NULL, 0, NULL, &t, err, sizeof(err)), -EINVAL);
	}
	ct_free_segs(&segs);
	tu_rmtree(dir);
	free(dir);
	free(copy);
	free(img);
}

/* --- disk cache and registry ------------------------------------------------------- */

static void test_disk_cache(void **state)
{
	const char *prog = tu_env("UST_CFI_PROG");
	struct ust_cfi_table *built, *loaded;
	const struct ust_cfi_table *a, *b;
	struct ust_cfi_cache_stats cst;
	struct ust_cfi_cache *c;
	char err[512] = "", file[4096], copy_path[4096], hex[2 * UST_CFI_BUILD_ID_MAX + 1];
	char buf[4096];
	char *dir = tu_mkdtemp(), *cdir;
	uint8_t *bytes;
	size_t len;

	(void)state;
	assert_int_equal(ust_cfi_build_path(prog, NULL, &built, err, sizeof(err)), 0);
	assert_true(built->build_id_len > 0);
	ust_cfi_build_id_hex(built, hex, sizeof(hex));

	/* Round trip. */
	assert_true(asprintf(&cdir, "%s/cache/sub", dir) > 0);
	assert_int_equal(ust_cfi_disk_load(cdir, built->build_id, built->build_id_len, &loaded,
					   err, sizeof(err)), -ENOENT);
	assert_int_equal(ust_cfi_disk_save(cdir, built, err, sizeof(err)), 0);
	assert_int_equal(ust_cfi_disk_load(cdir, built->build_id, built->build_id_len, &loaded,
					   err, sizeof(err)), 0);
	assert_int_equal(loaded->nr_rows, built->nr_rows);
	assert_memory_equal(loaded->rows, built->rows, built->nr_rows * sizeof(*built->rows));
	assert_memory_equal(&loaded->stats, &built->stats, sizeof(built->stats));
	ust_cfi_table_free(loaded);

	/* Corrupt rows, wrong version, truncated, another build-id: rejected. */
	snprintf(file, sizeof(file), "%s/%s.cfi", cdir, hex);
	bytes = tu_read(file, &len);
	assert_non_null(bytes);
	bytes[len - 3] ^= 0x40;
	assert_int_equal(tu_write(file, bytes, len), 0);
	assert_int_equal(ust_cfi_disk_load(cdir, built->build_id, built->build_id_len, &loaded,
					   err, sizeof(err)), -EBADMSG);
	print_message("corrupt cache file: %s\n", err);
	bytes[len - 3] ^= 0x40;
	bytes[8]++;		/* the version */
	assert_int_equal(tu_write(file, bytes, len), 0);
	assert_int_equal(ust_cfi_disk_load(cdir, built->build_id, built->build_id_len, &loaded,
					   err, sizeof(err)), -EBADMSG);
	bytes[8]--;
	/* Versions 1 (12-byte rows, no rbx rule) and 2 (no END row at an
	 * entry point without CFI): rebuilt, not read. */
	assert_int_equal(bytes[8], 3);
	bytes[8] = 2;
	assert_int_equal(tu_write(file, bytes, len), 0);
	assert_int_equal(ust_cfi_disk_load(cdir, built->build_id, built->build_id_len, &loaded,
					   err, sizeof(err)), -EBADMSG);
	bytes[8] = 1;
	assert_int_equal(tu_write(file, bytes, len), 0);
	assert_int_equal(ust_cfi_disk_load(cdir, built->build_id, built->build_id_len, &loaded,
					   err, sizeof(err)), -EBADMSG);
	print_message("version 1 cache file: %s\n", err);
	bytes[8] = 2;
	assert_int_equal(tu_write(file, bytes, len - 1), 0);
	assert_int_equal(ust_cfi_disk_load(cdir, built->build_id, built->build_id_len, &loaded,
					   err, sizeof(err)), -EBADMSG);
	assert_int_equal(tu_write(file, bytes, 10), 0);
	assert_int_equal(ust_cfi_disk_load(cdir, built->build_id, built->build_id_len, &loaded,
					   err, sizeof(err)), -EBADMSG);

	/* The registry: two inodes of one build-id build once; the corrupt
	 * file on disk is ignored and replaced. */
	snprintf(copy_path, sizeof(copy_path), "%s/copy-of-prog", dir);
	assert_int_equal(tu_copy(prog, copy_path), 0);
	c = ust_cfi_cache_new(NULL, cdir);
	assert_non_null(c);
	assert_int_equal(ust_cfi_cache_get_path(c, prog, &a, err, sizeof(err)), 0);
	assert_int_equal(ust_cfi_cache_get_path(c, copy_path, &b, err, sizeof(err)), 0);
	assert_ptr_equal(a, b);
	ust_cfi_cache_stats(c, &cst);
	assert_int_equal(cst.builds, 1);
	assert_int_equal(cst.hits, 1);
	assert_int_equal(cst.disk_rejects, 1);
	assert_int_equal(cst.disk_saves, 1);
	assert_int_equal(ust_cfi_cache_get_path(c, "/nonexistent", &b, err, sizeof(err)), -ENOENT);
	ust_cfi_cache_free(c);

	/* A new cache loads it from disk. */
	c = ust_cfi_cache_new(NULL, cdir);
	assert_int_equal(ust_cfi_cache_get_path(c, copy_path, &a, err, sizeof(err)), 0);
	ust_cfi_cache_stats(c, &cst);
	assert_int_equal(cst.builds, 0);
	assert_int_equal(cst.disk_loads, 1);
	assert_int_equal(a->nr_rows, built->nr_rows);
	assert_memory_equal(a->rows, built->rows, built->nr_rows * sizeof(*built->rows));
	ust_cfi_cache_free(c);

	/* No disk cache: "" here, USTITCH_CACHE_DIR= in the environment. */
	c = ust_cfi_cache_new(NULL, "");
	assert_int_equal(ust_cfi_cache_get_path(c, prog, &a, err, sizeof(err)), 0);
	ust_cfi_cache_stats(c, &cst);
	assert_int_equal(cst.builds, 1);
	assert_int_equal(cst.disk_saves, 0);
	ust_cfi_cache_free(c);

	setenv("USTITCH_CACHE_DIR", "", 1);
	assert_int_equal(ust_cfi_disk_dir(buf, sizeof(buf)), -ENOENT);
	setenv("USTITCH_CACHE_DIR", cdir, 1);
	assert_int_equal(ust_cfi_disk_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, cdir);
	unsetenv("USTITCH_CACHE_DIR");
	setenv("XDG_CACHE_HOME", "/x/y", 1);
	assert_int_equal(ust_cfi_disk_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/x/y/ustitch/cfi");
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/h", 1);
	assert_int_equal(ust_cfi_disk_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/h/.cache/ustitch/cfi");

	/* A table without build-id is not written. */
	built->build_id_len = 0;
	assert_int_equal(ust_cfi_disk_save(cdir, built, err, sizeof(err)), -EINVAL);

	free(bytes);
	free(cdir);
	tu_rmtree(dir);
	free(dir);
	ust_cfi_table_free(built);
}

/* --- the interpreter against libdw's --------------------------------------- */

/*
 * ust_cfi_opts.check: every file's table built by the one interpreter
 * (cfi_exec.c) must equal libdw's, row for row: the test programs (PIE,
 * not, static, the library, .debug_frame only and its stripped copy
 * with the debug file), Debian's libc, ld.so, libstdc++, python3.11,
 * cc1plus (518k rows) and busybox where installed, and the vDSO.  Then
 * what each build took, for the log.
 */
static void test_libdw_check(void **state)
{
	const char *files[] = {
		tu_env("UST_CFI_PROG"), tu_env("UST_CFI_PROG_NOPIE"), getenv("UST_CFI_PROG_STATIC"),
		tu_env("UST_CFI_LIB"), tu_env("UST_CFI_LIB_DF"), tu_env("UST_CFI_LIB_DF_STRIPPED"),
		"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2",
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/bin/python3.11",
		"/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus", "/usr/bin/busybox",
	};
	struct ust_cfi_opts check = { .check = true };
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct ust_cfi_table *t, *u;
	char err[512] = "";
	size_t i;
	int n = 0;

	(void)state;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (!files[i] || !files[i][0] || access(files[i], R_OK))
			continue;
		err[0] = '\0';
		if (ust_cfi_build_path(files[i], &check, &t, err, sizeof(err)))
			fail_msg("%s: %s", files[i], err);
		assert_int_equal(ust_cfi_build_path(files[i], NULL, &u, err, sizeof(err)), 0);
		assert_int_equal(u->nr_rows, t->nr_rows);
		print_message("%s: %u rows, the same as libdw's; built in %.1f ms\n", files[i],
			      u->nr_rows, u->stats.build_ms);
		ust_cfi_table_free(u);
		ust_cfi_table_free(t);
		n++;
	}
	assert_true(n >= 8);
	if (eh) {
		if (ust_cfi_build_mem(eh, vdso_size(eh), &check, &t, err, sizeof(err)))
			fail_msg("vDSO: %s", err);
		assert_true(t->nr_rows > 0);
		ust_cfi_table_free(t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_step_fp),
		cmocka_unit_test(test_prog_pie),
		cmocka_unit_test(test_prog_nopie),
		cmocka_unit_test(test_prog_lib),
		cmocka_unit_test(test_prog_static),
		cmocka_unit_test(test_debug_frame),
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_ldso),
		cmocka_unit_test(test_python),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_restore_rt),
		cmocka_unit_test(test_end),
		cmocka_unit_test(test_ldso_resolve),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_disk_cache),
		cmocka_unit_test(test_libdw_check),
	};

	/* The tests choose their cache directories themselves. */
	setenv("USTITCH_CACHE_DIR", "", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
