// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_lh_parse: lock_held() filter expressions into a tree (ustitch/lh.h
 * has the grammar).  Recursive descent over a hand lexer: errors name the
 * column of the offending token, counted from 1 as a user counts.
 *
 * The ftrace terms are only split into field, operator and value: the
 * kernel's own parser judges whatever stays an ftrace filter, and
 * lh_compile.c checks the ones BPF must evaluate against the event's
 * format.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ustitch/lh.h"

enum tok {
	T_END, T_OR, T_AND, T_NOT, T_LP, T_RP, T_WORD, T_NUM, T_STR, T_OP, T_BAD
};

struct parser {
	const char *s;
	size_t pos;		/* start of the current token */
	size_t len;		/* its length */
	enum tok tok;
	enum ust_lh_term_op op;	/* T_OP */
	struct ust_lh_expr *e;
	char *err;
	size_t errlen;
	bool failed;
	int code;		/* the first error's errno */
	int depth;
};

#define MAX_DEPTH 64

static const struct {
	const char *name;
	enum ust_lh_mode mode;
} lock_funcs[] = {
	{ "lock_held", UST_LH_MODE_ANY },
	{ "lock_held_read", UST_LH_MODE_READ },
	{ "lock_held_shared", UST_LH_MODE_READ },
	{ "lock_held_write", UST_LH_MODE_WRITE },
	{ "lock_held_exclusive", UST_LH_MODE_WRITE },
};

__attribute__((format(printf, 3, 4)))
static int perr(struct parser *p, size_t col0, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (p->failed)
		return -p->code;
	p->failed = true;
	p->code = strcmp(fmt, "out of memory") ? EINVAL : ENOMEM;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "column %zu: %s", col0 + 1, msg);
	return -p->code;
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.';
}

/* The token at p->pos (after blanks). */
static void lex(struct parser *p)
{
	const char *s = p->s;
	size_t i = p->pos + p->len;

	while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')
		i++;
	p->pos = i;
	p->len = 1;
	switch (s[i]) {
	case '\0':
		p->tok = T_END;
		p->len = 0;
		return;
	case '(':
		p->tok = T_LP;
		return;
	case ')':
		p->tok = T_RP;
		return;
	case '|':
		p->tok = s[i + 1] == '|' ? T_OR : T_BAD;
		p->len = s[i + 1] == '|' ? 2 : 1;
		return;
	case '&':
		if (s[i + 1] == '&') {
			p->tok = T_AND;
			p->len = 2;
		} else {
			p->tok = T_OP;
			p->op = UST_LH_T_BAND;
		}
		return;
	case '!':
		if (s[i + 1] == '=') {
			p->tok = T_OP;
			p->op = UST_LH_T_NE;
			p->len = 2;
		} else {
			p->tok = T_NOT;
		}
		return;
	case '=':
		p->tok = s[i + 1] == '=' ? T_OP : T_BAD;
		p->op = UST_LH_T_EQ;
		p->len = s[i + 1] == '=' ? 2 : 1;
		return;
	case '<':
	case '>':
		p->tok = T_OP;
		if (s[i + 1] == '=') {
			p->op = s[i] == '<' ? UST_LH_T_LE : UST_LH_T_GE;
			p->len = 2;
		} else {
			p->op = s[i] == '<' ? UST_LH_T_LT : UST_LH_T_GT;
		}
		return;
	case '~':
		p->tok = T_OP;
		p->op = UST_LH_T_GLOB;
		return;
	case '"':
	case '\'': {
		size_t j = i + 1;

		while (s[j] && s[j] != s[i])
			j++;
		if (!s[j]) {
			p->tok = T_BAD;
			return;
		}
		p->tok = T_STR;
		p->len = j - i + 1;
		return;
	}
	}
	if (s[i] == '-' || isdigit((unsigned char)s[i])) {
		size_t j = i + (s[i] == '-');

		while (isalnum((unsigned char)s[j]))
			j++;
		p->tok = j > i + (s[i] == '-') ? T_NUM : T_BAD;
		p->len = j - i;
		return;
	}
	if (word_char(s[i])) {
		size_t j = i;

		while (word_char(s[j]))
			j++;
		p->tok = T_WORD;
		p->len = j - i;
		return;
	}
	p->tok = T_BAD;
}

static const char *tok_desc(struct parser *p, char *buf, size_t len)
{
	if (p->tok == T_END)
		return "the end";
	snprintf(buf, len, "'%.*s'", (int)(p->len > 40 ? 40 : p->len), p->s + p->pos);
	return buf;
}

static int new_node(struct parser *p, enum ust_lh_node_kind k, size_t start)
{
	struct ust_lh_expr *e = p->e;
	void *n = realloc(e->nodes, (size_t)(e->nr_nodes + 1) * sizeof(*e->nodes));

	if (!n)
		return perr(p, start, "out of memory");
	e->nodes = n;
	memset(&e->nodes[e->nr_nodes], 0, sizeof(e->nodes[0]));
	e->nodes[e->nr_nodes].kind = k;
	e->nodes[e->nr_nodes].a = e->nodes[e->nr_nodes].b = e->nodes[e->nr_nodes].spec = -1;
	e->nodes[e->nr_nodes].start = (unsigned int)start;
	return e->nr_nodes++;
}

static char *dupn(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static const struct {
	const char *name;
	enum ust_lh_spec_kind kind;
	enum ust_lh_type type;
	bool has_read;		/* a shared mode exists */
} named_specs[] = {
	{ "mmap_lock", UST_LH_S_MMAP_LOCK, 0, true },
	{ "siglock", UST_LH_S_SIGLOCK, 0, false },
	{ "rq_lock", UST_LH_S_RQ_LOCK, 0, false },
	{ "zone_lock", UST_LH_S_ZONE_LOCK, 0, false },
	{ "rcu", UST_LH_S_RCU, 0, true },
	{ "rcu-trace", UST_LH_S_RCU_TRACE, 0, true },
	{ "srcu", UST_LH_S_SRCU, 0, true },
	{ "mutex", UST_LH_S_TYPE, UST_LH_TYPE_MUTEX, false },
	{ "spinlock", UST_LH_S_TYPE, UST_LH_TYPE_SPINLOCK, false },
	{ "rwsem", UST_LH_S_TYPE, UST_LH_TYPE_RWSEM, true },
	{ "rwlock", UST_LH_S_TYPE, UST_LH_TYPE_RWLOCK, true },
	{ "rt-mutex", UST_LH_S_TYPE, UST_LH_TYPE_RTMUTEX, false },
	{ "percpu-rwsem", UST_LH_S_TYPE, UST_LH_TYPE_PERCPU_RWSEM, true },
	{ "pcpu-sem", UST_LH_S_TYPE, UST_LH_TYPE_PERCPU_RWSEM, true },
	{ "semaphore", UST_LH_S_TYPE, UST_LH_TYPE_SEMAPHORE, false },
};

static bool ident(const char *s, size_t n)
{
	size_t i;

	if (!n || isdigit((unsigned char)s[0]))
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* SPEC at [start, end) of the source; @fmode from the function name. */
static int parse_spec(struct parser *p, size_t start, size_t end, enum ust_lh_mode fmode,
		      struct ust_lh_spec *sp)
{
	const char *s = p->s + start;
	size_t n = end - start, i;
	enum ust_lh_mode smode = UST_LH_MODE_ANY;
	bool amp = false, has_read = true;

	memset(sp, 0, sizeof(*sp));
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (!n)
		return perr(p, start, "lock_held() needs a lock: a symbol, an address, a slab cache, a well-known lock or a lock type");
	sp->text = dupn(s, n);
	if (!sp->text)
		return perr(p, start, "out of memory");
	if (n > 2 && s[n - 2] == ':') {
		char m = s[n - 1];

		if (m == 'R' || m == 'r')
			smode = UST_LH_MODE_READ;
		else if (m == 'W' || m == 'w')
			smode = UST_LH_MODE_WRITE;
		else
			return perr(p, start + n - 1, "unknown lock mode ':%c': use :R (shared) or :W (exclusive)", m);
		n -= 2;
	}
	if (smode && fmode && smode != fmode)
		return perr(p, start + n, "':%c' contradicts %s()", smode == UST_LH_MODE_READ ? 'R' : 'W',
			    fmode == UST_LH_MODE_READ ? "lock_held_read" : "lock_held_write");
	sp->mode = smode ? smode : fmode;
	if (s[0] == '&') {
		amp = true;
		s++;
		n--;
		start++;
	}
	if (!amp && n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		char *e;

		for (i = 2; i < n; i++)
			if (!isxdigit((unsigned char)s[i]))
				return perr(p, start + i, "bad hexadecimal address");
		if (n > 18)
			return perr(p, start, "address longer than 64 bits");
		errno = 0;
		sp->addr = strtoull(s, &e, 16);
		sp->kind = UST_LH_S_ADDR;
		return 0;
	}
	if (!amp) {
		for (i = 0; i < sizeof(named_specs) / sizeof(named_specs[0]); i++) {
			if (strlen(named_specs[i].name) != n || strncmp(named_specs[i].name, s, n))
				continue;
			sp->kind = named_specs[i].kind;
			sp->type = named_specs[i].type;
			has_read = named_specs[i].has_read;
			if (sp->mode == UST_LH_MODE_READ && !has_read)
				return perr(p, start, "%s has no shared (read) mode", named_specs[i].name);
			return 0;
		}
	}
	if (!ident(s, n))
		return perr(p, start, "'%.*s' is not a lock: expected a symbol, 0xADDRESS, &slab_cache, a well-known lock or a lock type",
			    (int)n, s);
	sp->name = dupn(s, n);
	if (!sp->name)
		return perr(p, start, "out of memory");
	/* "&name": a symbol or a slab cache, told apart against the kernel. */
	sp->kind = amp ? UST_LH_S_AMP : UST_LH_S_SYMBOL;
	return 0;
}

static int parse_or(struct parser *p);

static int parse_lock(struct parser *p, enum ust_lh_mode fmode, size_t start)
{
	struct ust_lh_expr *e = p->e;
	size_t sstart, i;
	int id, depth = 0;
	void *n;

	size_t nlen = p->len;

	/* The current token is the function name: '(' must follow. */
	p->pos += p->len;
	p->len = 0;
	while (p->s[p->pos] == ' ')
		p->pos++;
	if (p->s[p->pos] != '(')
		return perr(p, p->pos, "expected '(' after %.*s", (int)nlen, p->s + start);
	sstart = p->pos + 1;
	for (i = sstart; p->s[i]; i++) {
		if (p->s[i] == '(')
			depth++;
		else if (p->s[i] == ')' && depth-- == 0)
			break;
	}
	if (!p->s[i])
		return perr(p, start + (sstart - 1 - start), "unclosed '(' of lock_held");
	while (p->s[sstart] == ' ' || p->s[sstart] == '\t')
		sstart++;
	n = realloc(e->specs, (size_t)(e->nr_specs + 1) * sizeof(*e->specs));
	if (!n)
		return perr(p, start, "out of memory");
	e->specs = n;
	if (parse_spec(p, sstart, i, fmode, &e->specs[e->nr_specs])) {
		free(e->specs[e->nr_specs].text);
		free(e->specs[e->nr_specs].name);
		return -1;
	}
	e->nr_specs++;
	id = new_node(p, UST_LH_N_LOCK, start);
	if (id < 0)
		return -1;
	e->nodes[id].spec = e->nr_specs - 1;
	e->nodes[id].end = (unsigned int)(i + 1);
	p->pos = i;
	p->len = 1;
	lex(p);
	return id;
}

static int parse_term(struct parser *p)
{
	struct ust_lh_expr *e = p->e;
	size_t start = p->pos, flen = p->len;
	enum ust_lh_term_op op;
	char buf[64];
	int id;

	lex(p);
	if (p->tok != T_OP)
		return perr(p, p->pos, "expected a comparison (== != < <= > >= & ~) after '%.*s', found %s",
			    (int)flen, p->s + start, tok_desc(p, buf, sizeof(buf)));
	op = p->op;
	lex(p);
	if (p->tok == T_BAD && (p->s[p->pos] == '"' || p->s[p->pos] == '\''))
		return perr(p, p->pos, "unterminated string");
	if (p->tok != T_NUM && p->tok != T_STR && p->tok != T_WORD)
		return perr(p, p->pos, "expected a value, found %s", tok_desc(p, buf, sizeof(buf)));
	id = new_node(p, UST_LH_N_TERM, start);
	if (id < 0)
		return -1;
	e->nodes[id].field = dupn(p->s + start, flen);
	e->nodes[id].op = op;
	e->nodes[id].quoted = p->tok == T_STR;
	if (p->tok == T_STR)
		e->nodes[id].value = dupn(p->s + p->pos + 1, p->len - 2);
	else
		e->nodes[id].value = dupn(p->s + p->pos, p->len);
	e->nodes[id].end = (unsigned int)(p->pos + p->len);
	if (!e->nodes[id].field || !e->nodes[id].value)
		return perr(p, start, "out of memory");
	lex(p);
	return id;
}

static int parse_unary(struct parser *p)
{
	struct ust_lh_expr *e = p->e;
	size_t start = p->pos, i;
	char buf[64];
	int id, a;

	if (++p->depth > MAX_DEPTH)
		return perr(p, start, "expression nested too deeply");
	switch (p->tok) {
	case T_NOT:
		lex(p);
		a = parse_unary(p);
		if (a < 0)
			return -1;
		id = new_node(p, UST_LH_N_NOT, start);
		if (id < 0)
			return -1;
		e->nodes[id].a = a;
		e->nodes[id].end = e->nodes[a].end;
		p->depth--;
		return id;
	case T_LP:
		lex(p);
		a = parse_or(p);
		if (a < 0)
			return -1;
		if (p->tok != T_RP)
			return perr(p, p->pos, "expected ')' to close the '(' at column %zu, found %s",
				    start + 1, tok_desc(p, buf, sizeof(buf)));
		/* The span takes the parentheses: the ftrace text keeps them. */
		if (e->nodes[a].kind != UST_LH_N_LOCK) {
			e->nodes[a].start = (unsigned int)start;
			e->nodes[a].end = (unsigned int)(p->pos + 1);
		}
		lex(p);
		p->depth--;
		return a;
	case T_WORD:
		for (i = 0; i < sizeof(lock_funcs) / sizeof(lock_funcs[0]); i++)
			if (strlen(lock_funcs[i].name) == p->len &&
			    !strncmp(lock_funcs[i].name, p->s + p->pos, p->len)) {
				id = parse_lock(p, lock_funcs[i].mode, start);
				p->depth--;
				return id;
			}
		if (p->len > 9 && !strncmp(p->s + p->pos, "lock_held", 9))
			return perr(p, start, "unknown function '%.*s': lock_held, lock_held_read, lock_held_shared, lock_held_write or lock_held_exclusive",
				    (int)p->len, p->s + p->pos);
		/* A field name followed by "(" is a misspelled function. */
		i = p->pos + p->len;
		while (p->s[i] == ' ')
			i++;
		if (p->s[i] == '(')
			return perr(p, start, "unknown function '%.*s'", (int)p->len, p->s + p->pos);
		id = parse_term(p);
		p->depth--;
		return id;
	default:
		return perr(p, p->pos, "expected an expression, found %s", tok_desc(p, buf, sizeof(buf)));
	}
}

static int parse_bin(struct parser *p, enum tok t)
{
	struct ust_lh_expr *e = p->e;
	int a, b, id;

	a = t == T_OR ? parse_bin(p, T_AND) : parse_unary(p);
	while (a >= 0 && p->tok == t) {
		lex(p);
		b = t == T_OR ? parse_bin(p, T_AND) : parse_unary(p);
		if (b < 0)
			return -1;
		id = new_node(p, t == T_OR ? UST_LH_N_OR : UST_LH_N_AND, e->nodes[a].start);
		if (id < 0)
			return -1;
		e->nodes[id].a = a;
		e->nodes[id].b = b;
		e->nodes[id].end = e->nodes[b].end;
		a = id;
	}
	return a;
}

static int parse_or(struct parser *p)
{
	return parse_bin(p, T_OR);
}

int ust_lh_parse(const char *src, struct ust_lh_expr *e, char *err, size_t errsz)
{
	struct parser p = { .s = src, .e = e, .err = err, .errlen = errsz };
	char buf[64];

	memset(e, 0, sizeof(*e));
	e->root = -1;
	e->src = strdup(src);
	if (!e->src) {
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	lex(&p);
	if (p.tok == T_END)
		return perr(&p, p.pos, "empty filter");
	e->root = parse_or(&p);
	if (e->root < 0 || p.failed)
		return p.failed ? -p.code : -EINVAL;
	if (p.tok == T_RP)
		return perr(&p, p.pos, "')' without a matching '('");
	if (p.tok != T_END)
		return perr(&p, p.pos, "expected && or || or the end, found %s",
			    tok_desc(&p, buf, sizeof(buf)));
	return 0;
}

void ust_lh_expr_free(struct ust_lh_expr *e)
{
	int i;

	for (i = 0; i < e->nr_nodes; i++) {
		free(e->nodes[i].field);
		free(e->nodes[i].value);
	}
	for (i = 0; i < e->nr_specs; i++) {
		free(e->specs[i].text);
		free(e->specs[i].name);
	}
	free(e->nodes);
	free(e->specs);
	free(e->src);
	memset(e, 0, sizeof(*e));
	e->root = -1;
}

bool ust_lh_mentions(const char *src)
{
	return src && strstr(src, "lock_held") != NULL;
}

char *ust_lh_leaf_text(const struct ust_lh_expr *e, int spec)
{
	int i;

	for (i = 0; i < e->nr_nodes; i++) {
		const struct ust_lh_node *n = &e->nodes[i];

		if (n->kind == UST_LH_N_LOCK && n->spec == spec)
			return dupn(e->src + n->start, n->end - n->start);
	}
	return NULL;
}
