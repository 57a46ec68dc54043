// SPDX-License-Identifier: LGPL-2.1
/*
 * A built table: lookup by file offset, rows as text, freeing it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cfi_internal.h"

const struct ust_cfi_row *ust_cfi_lookup(const struct ust_cfi_table *t, uint64_t off)
{
	uint32_t lo = 0, hi;

	if (!t || !t->nr_rows || off < t->rows[0].off)
		return NULL;
	hi = t->nr_rows;
	/* Last row with row.off <= off. */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return &t->rows[lo];
}

const char *ust_cfi_cfa_name(unsigned int cfa_type)
{
	static const char *const names[UST_CFI_NR_CFA_TYPES] = {
		[UST_CFI_CFA_NONE] = "none",
		[UST_CFI_CFA_RSP] = "rsp",
		[UST_CFI_CFA_RBP] = "rbp",
		[UST_CFI_CFA_PLT] = "plt",
		[UST_CFI_CFA_DEREF_RBP] = "deref-rbp",
		[UST_CFI_CFA_SIGNAL] = "signal",
		[UST_CFI_CFA_END] = "end",
		[UST_CFI_CFA_UNSUPPORTED] = "unsupported",
		[UST_CFI_CFA_RBX] = "rbx",
	};

	return cfa_type < UST_CFI_NR_CFA_TYPES ? names[cfa_type] : "?";
}

const char *ust_cfi_rbp_name(unsigned int rbp_type)
{
	static const char *const names[UST_CFI_NR_RBP_TYPES] = {
		[UST_CFI_RBP_SAME] = "same",
		[UST_CFI_RBP_CFA] = "cfa",
		[UST_CFI_RBP_DEREF_RBP] = "deref-rbp",
		[UST_CFI_RBP_UNSUPPORTED] = "unsupported",
	};

	return rbp_type < UST_CFI_NR_RBP_TYPES ? names[rbp_type] : "?";
}

/* A callee-saved register's rule (UST_CFI_RBP_*) as text. */
static void saved_format(unsigned int type, int off, char *buf, size_t len)
{
	switch (type) {
	case UST_CFI_RBP_CFA:
		snprintf(buf, len, "c%+d", off);
		break;
	case UST_CFI_RBP_DEREF_RBP:
		snprintf(buf, len, "*(rbp%+d)", off);
		break;
	default:
		snprintf(buf, len, "%s", ust_cfi_rbp_name(type));
		break;
	}
}

int ust_cfi_row_format(const struct ust_cfi_row *r, char *buf, size_t len)
{
	char cfa[48], rbp[48], rbx[48];

	switch (r->cfa_type) {
	case UST_CFI_CFA_RSP:
	case UST_CFI_CFA_RBP:
	case UST_CFI_CFA_RBX:
		snprintf(cfa, sizeof(cfa), "%s%+d", ust_cfi_cfa_name(r->cfa_type), r->cfa_off);
		break;
	case UST_CFI_CFA_PLT:
		snprintf(cfa, sizeof(cfa), "plt(rsp%+d,k=%d)", r->cfa_off, r->rbp_off);
		break;
	case UST_CFI_CFA_DEREF_RBP:
		snprintf(cfa, sizeof(cfa), "*(rbp%+d)", r->cfa_off);
		break;
	default:
		snprintf(cfa, sizeof(cfa), "%s", ust_cfi_cfa_name(r->cfa_type));
		break;
	}
	/* Rows that stop or leave the walk have no register rule worth printing. */
	if (r->cfa_type == UST_CFI_CFA_NONE || r->cfa_type == UST_CFI_CFA_SIGNAL ||
	    r->cfa_type == UST_CFI_CFA_END || r->cfa_type == UST_CFI_CFA_UNSUPPORTED ||
	    r->cfa_type == UST_CFI_CFA_PLT)
		return snprintf(buf, len, "%#x cfa=%s", r->off, cfa);
	saved_format(r->rbp_type, r->rbp_off, rbp, sizeof(rbp));
	/* rbx: printed only where it changes (most rows keep it). */
	if (r->rbx_type == UST_CFI_RBP_SAME)
		return snprintf(buf, len, "%#x cfa=%s rbp=%s", r->off, cfa, rbp);
	saved_format(r->rbx_type, r->rbx_off, rbx, sizeof(rbx));
	return snprintf(buf, len, "%#x cfa=%s rbp=%s rbx=%s", r->off, cfa, rbp, rbx);
}

void ust_cfi_build_id_hex(const struct ust_cfi_table *t, char *buf, size_t len)
{
	size_t i;

	if (!len)
		return;
	buf[0] = '\0';
	for (i = 0; i < t->build_id_len && 2 * i + 2 < len; i++)
		snprintf(buf + 2 * i, 3, "%02x", t->build_id[i]);
}

void ust_cfi_table_free(struct ust_cfi_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t);
}
