// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_af: the parser and matcher of address-range filters.  The grammar is
 * the kernel's (ACTION then SOURCE, tokens split at spaces, commas and
 * newlines); what it adds is symbols, and messages that point at the token.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ustitch/addrfilter.h"
#include "ustitch/resolve.h"
#include "ustitch/sym.h"

static const char *const action_names[] = { "filter", "start", "stop" };

/* The message "column COL: ..." into @err; returns -@code. */
static int fail(char *err, size_t errsz, int col, int code, const char *fmt, const char *a,
		const char *b)
{
	int n = snprintf(err, errsz, "column %d: ", col);

	if (n > 0 && (size_t)n < errsz)
		snprintf(err + n, errsz - (size_t)n, fmt, a, b);
	return -code;
}

/* A whole number (decimal, 0x hex, 0 octal), nothing else. */
static bool number(const char *s, size_t len, uint64_t *v)
{
	char buf[32], *end;

	if (!len || len >= sizeof(buf) || !isdigit((unsigned char)s[0]))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	*v = strtoull(buf, &end, 0);
	return !errno && !*end;
}

/* kallsyms: the address of @name and the distance to the next symbol. */
static int kallsyms_lookup(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	char line[512];
	uint64_t best = UINT64_MAX;
	bool found = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type, sym[256];

		if (sscanf(line, "%llx %c %255s", &a, &type, sym) != 3)
			continue;
		if (!found && !strcmp(sym, name) && a) {
			*addr = a;
			found = true;
		}
	}
	if (found) {
		/* The next symbol above it bounds the function (kallsyms has no sizes). */
		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			unsigned long long a;
			char type, sym[256];

			if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && a > *addr && a < best)
				best = a;
		}
		*size = best != UINT64_MAX ? best - *addr : 1;
	}
	fclose(f);
	return found ? 0 : -1;
}

static int add(struct ust_af *af, const struct ust_af_range *r)
{
	void *n = realloc(af->r, (size_t)(af->nr + 1) * sizeof(*af->r));

	if (!n)
		return -ENOMEM;
	af->r = n;
	af->r[af->nr++] = *r;
	return 0;
}

/* SOURCE:RANGE_SPEC of one filter, at column @col. */
static int parse_source(const char *tok, size_t len, int col, const struct ust_af_opts *o,
			struct ust_af_range *r, char *err, size_t errsz)
{
	const char *spec, *at = NULL, *slash, *end = tok + len;
	char what[512], name[256];
	size_t nlen;

	snprintf(what, sizeof(what), "%.*s", (int)len, tok);
	if (len > 5 && !strncmp(tok, "file:", 5)) {
		spec = tok + 5;
		at = memchr(spec, '@', (size_t)(end - spec));
		if (!at || at + 1 == end)
			return fail(err, errsz, col, EINVAL, "'%s': expected file:OFFSET[/SIZE]@PATH%s", what, "");
	} else if (len > 7 && !strncmp(tok, "kernel:", 7)) {
		spec = tok + 7;
		r->kernel = true;
	} else {
		return fail(err, errsz, col, EINVAL, "'%s': expected file:... or kernel:...%s", what, "");
	}
	if (!at)
		at = end;
	slash = memchr(spec, '/', (size_t)(at - spec));
	nlen = (size_t)((slash ? slash : at) - spec);
	if (!nlen)
		return fail(err, errsz, col, EINVAL, "'%s': no offset or symbol%s", what, "");
	r->size = 1;
	if (slash && !number(slash + 1, (size_t)(at - slash - 1), &r->size))
		return fail(err, errsz, col, EINVAL, "'%s': size is not a number%s", what, "");
	if (!r->size)
		return fail(err, errsz, col, EINVAL, "'%s': size 0%s", what, "");
	if (!number(spec, nlen, &r->start)) {
		if (nlen >= sizeof(name))
			return fail(err, errsz, col, EINVAL, "'%s': symbol name too long%s", what, "");
		memcpy(name, spec, nlen);
		name[nlen] = '\0';
		r->symbol = strdup(name);
	}
	if (r->kernel) {
		uint64_t size;

		if (r->symbol) {
			if (kallsyms_lookup(o && o->kallsyms ? o->kallsyms : "/proc/kallsyms", r->symbol,
					    &r->start, &size))
				return fail(err, errsz, col, ENOENT, "kernel symbol %s: not in kallsyms (or kallsyms unreadable)%s",
					    r->symbol, "");
			if (!slash)
				r->size = size;
		}
		return 0;
	} else {
		struct stat st;
		char e[160];

		r->path = strndup(at + 1, (size_t)(end - at - 1));
		if (!r->path)
			return -ENOMEM;
		if (stat(r->path, &st))
			return fail(err, errsz, col, ENOENT, "no such file: %s%s", r->path, "");
		if (!S_ISREG(st.st_mode))
			return fail(err, errsz, col, EINVAL, "not a regular file: %s%s", r->path, "");
		r->kdev = ust_res_dev_to_kdev(st.st_dev);
		r->ino = st.st_ino;
		if (r->symbol) {
			struct ust_sym_cache *c = ust_sym_cache_new(NULL);
			struct ust_sym_file *f = c ? ust_sym_cache_get(c, r->path, NULL, 0, e, sizeof(e)) : NULL;
			uint64_t off, size;
			int ret = 0;

			if (!f)
				ret = fail(err, errsz, col, c ? errno : ENOMEM, "%s: %s", r->path,
					   c ? e : "out of memory");
			else if (ust_sym_find_function(f, r->symbol, &off, &size))
				ret = fail(err, errsz, col, ENOENT, "no function %s in %s", r->symbol, r->path);
			else {
				r->start = off;
				if (!slash)
					r->size = size ? size : 1;
			}
			ust_sym_cache_free(c);
			return ret;
		}
	}
	return 0;
}

int ust_af_parse(const char *spec, const struct ust_af_opts *opts, struct ust_af *af,
		 char *err, size_t errsz)
{
	struct ust_af_range cur;
	const char *p = spec;
	bool want_action = true;
	int action_col = 0, ret;

	memset(af, 0, sizeof(*af));
	memset(&cur, 0, sizeof(cur));
	for (;;) {
		const char *tok;
		size_t len;
		int col;

		while (*p == ' ' || *p == ',' || *p == '\n' || *p == '\t')
			p++;
		if (!*p)
			break;
		tok = p;
		while (*p && *p != ' ' && *p != ',' && *p != '\n' && *p != '\t')
			p++;
		len = (size_t)(p - tok);
		col = (int)(tok - spec) + 1;
		if (want_action) {
			int a;

			for (a = 0; a < 3; a++)
				if (strlen(action_names[a]) == len && !strncmp(tok, action_names[a], len))
					break;
			if (a == 3) {
				char what[256];

				snprintf(what, sizeof(what), "%.*s", (int)len, tok);
				ret = fail(err, errsz, col, EINVAL, "expected filter, start or stop, got '%s'%s", what, "");
				goto bad;
			}
			memset(&cur, 0, sizeof(cur));
			cur.action = (enum ust_af_action)a;
			action_col = col;
			want_action = false;
			continue;
		}
		if ((ret = parse_source(tok, len, col, opts, &cur, err, errsz)) ||
		    (ret = add(af, &cur))) {
			free(cur.path);
			free(cur.symbol);
			goto bad;
		}
		want_action = true;
	}
	if (!want_action) {
		ret = fail(err, errsz, action_col, EINVAL, "'%s' without a range%s", action_names[cur.action], "");
		goto bad;
	}
	if (!af->nr) {
		snprintf(err, errsz, "column 1: empty filter");
		ret = -EINVAL;
		goto bad;
	}
	return 0;
bad:
	ust_af_free(af);
	return ret;
}

void ust_af_free(struct ust_af *af)
{
	int i;

	for (i = 0; i < af->nr; i++) {
		free(af->r[i].path);
		free(af->r[i].symbol);
	}
	free(af->r);
	af->r = NULL;
	af->nr = 0;
}

int ust_af_match_file(const struct ust_af *af, int action, uint32_t kdev, uint64_t ino,
		      uint64_t off)
{
	int i;

	for (i = 0; af && i < af->nr; i++) {
		const struct ust_af_range *r = &af->r[i];

		if (r->kernel || (action >= 0 && (int)r->action != action))
			continue;
		if (r->kdev == kdev && r->ino == ino && off >= r->start && off - r->start < r->size)
			return i;
	}
	return -ENOENT;
}

int ust_af_match_kernel(const struct ust_af *af, int action, uint64_t addr)
{
	int i;

	for (i = 0; af && i < af->nr; i++) {
		const struct ust_af_range *r = &af->r[i];

		if (!r->kernel || (action >= 0 && (int)r->action != action))
			continue;
		if (addr >= r->start && addr - r->start < r->size)
			return i;
	}
	return -ENOENT;
}

void ust_af_format(const struct ust_af *af, int i, char *buf, size_t len)
{
	const struct ust_af_range *r = &af->r[i];

	if (r->kernel)
		snprintf(buf, len, "%s kernel:0x%" PRIx64 "/0x%" PRIx64, action_names[r->action],
			 r->start, r->size);
	else
		snprintf(buf, len, "%s file:0x%" PRIx64 "/0x%" PRIx64 "@%s", action_names[r->action],
			 r->start, r->size, r->path);
}
