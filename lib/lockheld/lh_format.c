// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_lh_format: the fields of an event format text, as much as the
 * lock_held() compiler needs to evaluate ftrace terms in BPF: offset,
 * size, signedness, and whether the field is a string or another array.
 */
#include <errno.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/lh.h"

static int add_field(struct ust_lh_format *f, const char *decl, size_t dlen, unsigned int off,
		     unsigned int size, bool sgn)
{
	struct ust_lh_field *n = realloc(f->fields, (size_t)(f->nr_fields + 1) * sizeof(*n));
	const char *end = decl + dlen, *p;
	bool array = false;

	if (!n)
		return -1;
	f->fields = n;
	n = &f->fields[f->nr_fields];
	memset(n, 0, sizeof(*n));
	/* "type name" or "type name[N]" or "__data_loc type[] name". */
	p = memchr(decl, '[', dlen);
	if (p && !strncmp(decl, "__data_loc", 10)) {
		array = true;
	} else if (p) {
		array = true;
		end = p;
	}
	while (end > decl && isspace((unsigned char)end[-1]))
		end--;
	p = end;
	while (p > decl && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
		p--;
	n->name = strndup(p, (size_t)(end - p));
	if (!n->name)
		return -1;
	n->off = off;
	n->size = size;
	n->is_signed = sgn;
	if (array) {
		const char *t = decl;

		if (!strncmp(t, "__data_loc ", 11))
			t += 11;
		if (!strncmp(t, "char", 4) || !strncmp(t, "const char", 10) ||
		    !strncmp(t, "unsigned char", 13))
			n->is_string = true;
		else
			n->is_array = true;
	}
	f->nr_fields++;
	return 0;
}

int ust_lh_format_parse(const char *text, struct ust_lh_format *f)
{
	const char *line = text;

	memset(f, 0, sizeof(*f));
	f->id = -1;
	while (line && *line) {
		const char *eol = strchr(line, '\n'), *p;
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		char buf[1024];
		unsigned int off, size;
		int sgn;

		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		memcpy(buf, line, len);
		buf[len] = '\0';
		line = eol ? eol + 1 : NULL;
		if (!strncmp(buf, "name: ", 6)) {
			free(f->name);
			f->name = strdup(buf + 6);
		} else if (!strncmp(buf, "ID: ", 4)) {
			f->id = atoi(buf + 4);
		} else if ((p = strstr(buf, "field:"))) {
			const char *semi = strchr(p, ';'), *o = strstr(buf, "offset:"),
				   *s = strstr(buf, "size:"), *g = strstr(buf, "signed:");

			if (!semi || !o || !s)
				continue;
			off = (unsigned int)strtoul(o + 7, NULL, 10);
			size = (unsigned int)strtoul(s + 5, NULL, 10);
			sgn = g ? atoi(g + 7) : 0;
			if (add_field(f, p + 6, (size_t)(semi - (p + 6)), off, size, sgn != 0))
				return -ENOMEM;
		}
	}
	return f->name && f->id >= 0 ? 0 : -EINVAL;
}

void ust_lh_format_free(struct ust_lh_format *f)
{
	int i;

	for (i = 0; i < f->nr_fields; i++)
		free(f->fields[i].name);
	free(f->fields);
	free(f->system);
	free(f->name);
	memset(f, 0, sizeof(*f));
}

const struct ust_lh_field *ust_lh_format_field(const struct ust_lh_format *f, const char *name)
{
	int i;

	for (i = 0; i < f->nr_fields; i++)
		if (!strcmp(f->fields[i].name, name))
			return &f->fields[i];
	return NULL;
}
