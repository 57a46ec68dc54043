// SPDX-License-Identifier: LGPL-2.1
/*
 * The spec language of ust-mktrace: one directive or record per line,
 * `#` starts a comment, values are whitespace-separated (double quotes
 * keep spaces), numbers are decimal or 0x hex, keys are order-free:
 *
 *   cpus N | clock NAME | buffer NAME | format KEY | cmdline PID COMM | native
 *   event   cpu= ts= pid= [buf=] sys= name= [FIELD=VALUE ...]
 *   cookie  cpu= ts= pid= [buf=] cookie=
 *   stack   cpu= ts= pid= [buf=] cookie= frames=F[,F...] [corrupt=KIND]
 *   mapping cpu= ts= pid= [buf=] path= [as=] [buildid=none]
 *   lost    cpu= [buf=] count=
 *
 * Record layouts come from the format texts; the offsets this file relies
 * on by name are checked against kernel-bits/include/ustitch/abi.h.  A
 * trace with stacks has the ustitch/stack_flags format, as ustitch
 * record's traces have (every stack BPF makes comes with such a record);
 * `native` leaves it out: the trace is a kernel's own, seed 004's ftrace
 * records alone, whose stacks the report says the kernel's unwinder took.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <traceevent/event-parse.h>

#include "ustitch/abi.h"
#include "ustitch/resolve.h"
#include "mkt.h"

#define MAX_TOKENS	256

struct kv {
	char *key;
	char *val;
	bool used;
};

struct line {
	char *tok[MAX_TOKENS];
	int nr_tok;
	struct kv kv[MAX_TOKENS];
	int nr_kv;
};

/* Split @s in place; quotes group, '#' at a token start ends the line. */
static int tokenize(struct ust_mkt *m, char *s, struct line *l)
{
	char *r = s, *w;

	l->nr_tok = 0;
	for (;;) {
		while (*r == ' ' || *r == '\t' || *r == '\r' || *r == '\n')
			r++;
		if (!*r || *r == '#')
			return 0;
		if (l->nr_tok == MAX_TOKENS)
			return ust_mkt_set_error(m, "too many words");
		l->tok[l->nr_tok++] = w = r;
		while (*r && *r != ' ' && *r != '\t' && *r != '\r' && *r != '\n') {
			if (*r == '"') {
				for (r++; *r && *r != '"'; )
					*w++ = *r++;
				if (*r != '"')
					return ust_mkt_set_error(m, "unterminated quote");
				r++;
			} else {
				*w++ = *r++;
			}
		}
		if (*r)
			r++;
		*w = '\0';
	}
}

static int split_kv(struct ust_mkt *m, struct line *l)
{
	int i, j;
	char *eq;

	l->nr_kv = 0;
	for (i = 1; i < l->nr_tok; i++) {
		eq = strchr(l->tok[i], '=');
		if (!eq || eq == l->tok[i])
			return ust_mkt_set_error(m, "expected KEY=VALUE, got \"%s\"", l->tok[i]);
		*eq = '\0';
		for (j = 0; j < l->nr_kv; j++)
			if (!strcmp(l->kv[j].key, l->tok[i]))
				return ust_mkt_set_error(m, "%s= given twice", l->tok[i]);
		l->kv[l->nr_kv].key = l->tok[i];
		l->kv[l->nr_kv].val = eq + 1;
		l->kv[l->nr_kv].used = false;
		l->nr_kv++;
	}
	return 0;
}

static const char *get(struct line *l, const char *key)
{
	int i;

	for (i = 0; i < l->nr_kv; i++) {
		if (!strcmp(l->kv[i].key, key)) {
			l->kv[i].used = true;
			return l->kv[i].val;
		}
	}
	return NULL;
}

static int need_u64(struct ust_mkt *m, struct line *l, const char *key, uint64_t *v)
{
	const char *s = get(l, key);

	if (!s)
		return ust_mkt_set_error(m, "%s: %s= is required", l->tok[0], key);
	if (!ust_mkt_parse_u64(s, v))
		return ust_mkt_set_error(m, "%s=%s: not a number", key, s);
	return 0;
}

static int no_leftovers(struct ust_mkt *m, struct line *l)
{
	int i;

	for (i = 0; i < l->nr_kv; i++)
		if (!l->kv[i].used)
			return ust_mkt_set_error(m, "%s: unknown key %s=", l->tok[0], l->kv[i].key);
	return 0;
}

/* Where a record goes and whose it is: cpu=, ts=, pid=, buf=. */
struct target {
	int buf;
	int cpu;
	uint64_t ts;
	int pid;
};

static int get_target(struct ust_mkt *m, struct line *l, struct target *t, bool with_ts)
{
	const char *b = get(l, "buf");
	uint64_t v;

	if (need_u64(m, l, "cpu", &v) < 0)
		return -1;
	if (v > INT32_MAX)
		return ust_mkt_set_error(m, "cpu=%llu: too large", (unsigned long long)v);
	t->cpu = (int)v;
	t->buf = ust_mkt_buffer(m, b);
	if (t->buf < 0)
		return ust_mkt_set_error(m, "buf=%s: no such buffer (declare it with `buffer %s`)",
					 b, b);
	if (!with_ts)
		return 0;
	if (need_u64(m, l, "ts", &t->ts) < 0 || need_u64(m, l, "pid", &v) < 0)
		return -1;
	if (v > INT32_MAX)
		return ust_mkt_set_error(m, "pid=%llu: too large", (unsigned long long)v);
	t->pid = (int)v;
	return 0;
}

static int write_rec(struct ust_mkt *m, const struct target *t, struct ust_mkt_rec *r,
		     size_t len)
{
	return ust_mkt_write(m, t->buf, t->cpu, t->ts, r->buf, len);
}

/* A field the line names, and one whose offset abi.h fixes as well. */
static struct tep_format_field *abi_field(struct ust_mkt *m, struct tep_event *ev,
					  const char *name, int abi_off)
{
	struct tep_format_field *f = tep_find_field(ev, name);

	if (!f) {
		ust_mkt_set_error(m, "%s/%s has no field %s", ev->system, ev->name, name);
		return NULL;
	}
	if (abi_off >= 0 && f->offset != abi_off) {
		ust_mkt_set_error(m, "%s/%s: %s at offset %d, abi.h says %d", ev->system,
				  ev->name, name, f->offset, abi_off);
		return NULL;
	}
	return f;
}

/* ---------------------------------------------------------------- values */

/* Comma-separated numbers into @elem-byte elements. */
static int parse_num_list(struct ust_mkt *m, const char *key, const char *val,
			  unsigned int elem, bool is_signed, unsigned char **out, size_t *n)
{
	char *s = strdup(val), *p, *save = NULL;
	unsigned char *v = NULL, *nv;
	size_t cnt = 0;
	int64_t sv;
	uint64_t u;

	if (!s)
		return ust_mkt_set_error(m, "out of memory");
	if (elem != 1 && elem != 2 && elem != 4 && elem != 8) {
		free(s);
		return ust_mkt_set_error(m, "%s: unsupported element type", key);
	}
	for (p = strtok_r(s, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		if (is_signed ? !ust_mkt_parse_s64(p, &sv) : !ust_mkt_parse_u64(p, &u)) {
			ust_mkt_set_error(m, "%s=%s: \"%s\" is not a number", key, val, p);
			free(s);
			free(v);
			return -1;
		}
		if (is_signed)
			u = (uint64_t)sv;
		nv = realloc(v, (cnt + 1) * elem);
		if (!nv) {
			free(s);
			free(v);
			return ust_mkt_set_error(m, "out of memory");
		}
		v = nv;
		ust_mkt_store(v + cnt * elem, u, elem);
		cnt++;
	}
	free(s);
	*out = v;
	*n = cnt;
	return 0;
}

/* ---------------------------------------------------------------- event */

static bool reserved_key(const char *k)
{
	static const char *const keys[] = { "cpu", "ts", "pid", "buf", "sys", "name" };
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(k, keys[i]))
			return true;
	return false;
}

/*
 * char arrays take text; unsigned char (u8) arrays are bytes and take
 * numbers, like every other array: build_id=0x12,0x34,...
 */
static bool is_text(const struct tep_format_field *f)
{
	return (f->flags & TEP_FIELD_IS_STRING) && !strstr(f->type, "unsigned char") &&
	       !strstr(f->type, "u8");
}

static int set_static_field(struct ust_mkt *m, struct ust_mkt_rec *r,
			    struct tep_format_field *f, const char *val)
{
	unsigned char *v;
	int64_t sv;
	uint64_t u;
	size_t n;

	if ((f->flags & TEP_FIELD_IS_ARRAY) && f->size == 0) {
		/* A flexible array (char buf[]): its data ends the record. */
		if ((size_t)f->offset != r->len)
			return ust_mkt_set_error(m, "%s: a flexible array must end the record",
						 f->name);
		if (is_text(f))
			return ust_mkt_rec_grow(r, val, strlen(val) + 1) < 0 ?
			       ust_mkt_set_error(m, "out of memory") : 0;
		if (parse_num_list(m, f->name, val, ust_mkt_elem_size(f),
				   f->flags & TEP_FIELD_IS_SIGNED, &v, &n) < 0)
			return -1;
		if (ust_mkt_rec_grow(r, v, n * ust_mkt_elem_size(f)) < 0) {
			free(v);
			return ust_mkt_set_error(m, "out of memory");
		}
		free(v);
		return 0;
	}
	if (f->flags & TEP_FIELD_IS_ARRAY) {
		if (is_text(f)) {
			/* char[N]: the text, NUL-padded; exactly N characters drop the NUL. */
			if (strlen(val) > (size_t)f->size)
				return ust_mkt_set_error(m, "%s: longer than %d bytes", f->name,
							 f->size);
			memset(r->buf + f->offset, 0, f->size);
			ust_mkt_rec_put_bytes(r, f, val, strlen(val));
			return 0;
		}
		if (parse_num_list(m, f->name, val, ust_mkt_elem_size(f),
				   f->flags & TEP_FIELD_IS_SIGNED, &v, &n) < 0)
			return -1;
		if (n * ust_mkt_elem_size(f) > (size_t)f->size) {
			free(v);
			return ust_mkt_set_error(m, "%s: more than %u elements", f->name,
						 f->size / ust_mkt_elem_size(f));
		}
		ust_mkt_rec_put_bytes(r, f, v, n * ust_mkt_elem_size(f));
		free(v);
		return 0;
	}
	if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)
		return ust_mkt_set_error(m, "%s: unsupported field size %d", f->name, f->size);
	if (f->flags & TEP_FIELD_IS_SIGNED) {
		if (!ust_mkt_parse_s64(val, &sv))
			return ust_mkt_set_error(m, "%s=%s: not a number", f->name, val);
		u = (uint64_t)sv;
	} else if (!ust_mkt_parse_u64(val, &u)) {
		return ust_mkt_set_error(m, "%s=%s: not a number", f->name, val);
	}
	ust_mkt_rec_put(r, f, u);
	return 0;
}

static int do_event(struct ust_mkt *m, struct line *l)
{
	struct tep_format_field *dyn[64], *f;
	const char *dyn_val[64];
	const char *sys, *name, *key;
	struct ust_mkt_rec r = { 0 };
	struct tep_event *ev;
	struct target t;
	unsigned char *v;
	int i, nr_dyn = 0, ret = -1;
	size_t n;

	if (get_target(m, l, &t, true) < 0)
		return -1;
	sys = get(l, "sys");
	name = get(l, "name");
	if (!sys || !name)
		return ust_mkt_set_error(m, "event: sys= and name= are required");
	ev = ust_mkt_event(m, sys, name);
	if (!ev || ust_mkt_rec_init(&r, ev, t.pid) < 0)
		return ev ? ust_mkt_set_error(m, "out of memory") : -1;

	/* Dynamic fields are appended in format order, whatever the line's order. */
	for (f = ev->format.fields; f; f = f->next)
		if ((f->flags & TEP_FIELD_IS_DYNAMIC) && nr_dyn < 64) {
			dyn_val[nr_dyn] = NULL;
			dyn[nr_dyn++] = f;
		}
	for (i = 0; i < l->nr_kv; i++) {
		key = l->kv[i].key;
		if (reserved_key(key))
			continue;
		/* "field:NAME" reaches a field named like a line key (e.g. pid). */
		if (!strncmp(key, "field:", 6))
			key += 6;
		f = tep_find_any_field(ev, key);
		if (!f) {
			ust_mkt_set_error(m, "%s/%s has no field \"%s\"", sys, name, key);
			goto out;
		}
		l->kv[i].used = true;
		if (f->flags & TEP_FIELD_IS_DYNAMIC) {
			int k;

			for (k = 0; k < nr_dyn && dyn[k] != f; k++)
				;
			if (k < nr_dyn)
				dyn_val[k] = l->kv[i].val;
			continue;
		}
		if (set_static_field(m, &r, f, l->kv[i].val) < 0)
			goto out;
	}
	for (i = 0; i < nr_dyn; i++) {
		f = dyn[i];
		if (!dyn_val[i]) {
			ret = ust_mkt_rec_append(&r, f, NULL, 0);
		} else if (is_text(f)) {
			/* __string(): the text with its NUL */
			ret = ust_mkt_rec_append(&r, f, dyn_val[i], strlen(dyn_val[i]) + 1);
		} else {
			if (parse_num_list(m, f->name, dyn_val[i], ust_mkt_elem_size(f),
					   f->flags & TEP_FIELD_IS_SIGNED, &v, &n) < 0)
				goto out;
			ret = ust_mkt_rec_append(&r, f, v, n * ust_mkt_elem_size(f));
			free(v);
		}
		if (ret < 0) {
			ust_mkt_set_error(m, "%s: too large", f->name);
			goto out;
		}
	}
	ret = -1;
	if (no_leftovers(m, l) < 0 || write_rec(m, &t, &r, r.len) < 0)
		goto out;
	ret = 0;
out:
	ust_mkt_rec_fini(&r);
	return ret;
}

/* ---------------------------------------------------------------- cookie */

static int do_cookie(struct ust_mkt *m, struct line *l)
{
	struct tep_format_field *f;
	struct ust_mkt_rec r;
	struct tep_event *ev;
	struct target t;
	uint64_t cookie;
	int ret;

	if (get_target(m, l, &t, true) < 0 || need_u64(m, l, "cookie", &cookie) < 0 ||
	    no_leftovers(m, l) < 0)
		return -1;
	ev = ust_mkt_event(m, UST_ABI_SYSTEM_FTRACE, UST_ABI_EV_UNWIND_COOKIE);
	if (!ev || !(f = abi_field(m, ev, "cookie", UST_ABI_COOKIE_OFF)))
		return -1;
	if (ust_mkt_rec_init(&r, ev, t.pid) < 0)
		return ust_mkt_set_error(m, "out of memory");
	ust_mkt_rec_put(&r, f, cookie);
	ret = write_rec(m, &t, &r, r.len);
	ust_mkt_rec_fini(&r);
	return ret;
}

/* ---------------------------------------------------------------- stack */

enum corrupt {
	C_NONE,
	C_STACK_OOB,		/* stack __data_loc ends 8 bytes past the record */
	C_STACK_MISALIGNED,	/* stack length 4 bytes short of whole longs */
	C_INODES_SHORT,		/* one inode fewer than frames */
	C_DEV_OOB,		/* dev __data_loc ends 8 bytes past the record */
	C_TRUNCATE,		/* record cut to N bytes */
	C_ZERO_FRAMES,		/* all arrays empty */
};

static int parse_corrupt(struct ust_mkt *m, const char *s, enum corrupt *c, uint64_t *n)
{
	static const struct { const char *name; enum corrupt c; } kinds[] = {
		{ "stack_oob", C_STACK_OOB }, { "stack_misaligned", C_STACK_MISALIGNED },
		{ "inodes_short", C_INODES_SHORT }, { "dev_oob", C_DEV_OOB },
		{ "zero_frames", C_ZERO_FRAMES },
	};
	size_t i;

	*c = C_NONE;
	if (!s)
		return 0;
	if (!strncmp(s, "truncate:", 9)) {
		if (!ust_mkt_parse_u64(s + 9, n) || *n == 0)
			return ust_mkt_set_error(m, "corrupt=%s: truncate:N needs N >= 1", s);
		*c = C_TRUNCATE;
		return 0;
	}
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (!strcmp(s, kinds[i].name)) {
			*c = kinds[i].c;
			return 0;
		}
	}
	return ust_mkt_set_error(m, "corrupt=%s: unknown (stack_oob, stack_misaligned, "
				 "inodes_short, dev_oob, truncate:N, zero_frames)", s);
}

static int parse_frames(struct ust_mkt *m, const char *val, struct ust_mkt_frame **out,
			size_t *n)
{
	char *s = strdup(val), *p, *save = NULL;
	struct ust_mkt_frame *v = NULL, *nv;
	size_t cnt = 0;

	if (!s)
		return ust_mkt_set_error(m, "out of memory");
	for (p = strtok_r(s, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		nv = realloc(v, (cnt + 1) * sizeof(*v));
		if (!nv) {
			ust_mkt_set_error(m, "out of memory");
			goto fail;
		}
		v = nv;
		if (ust_mkt_parse_frame(m, p, &v[cnt]) < 0)
			goto fail;
		cnt++;
	}
	free(s);
	*out = v;
	*n = cnt;
	return 0;
fail:
	free(s);
	free(v);
	return -1;
}

/* Copy @n values into @elem-byte slots (the kernel's array element type). */
static void *pack(const uint64_t *vals, size_t n, unsigned int elem)
{
	unsigned char *p = calloc(n ? n : 1, elem);
	size_t i;

	for (i = 0; p && i < n; i++)
		ust_mkt_store(p + i * elem, vals[i], elem);
	return p;
}

static int do_stack(struct ust_mkt *m, struct line *l)
{
	struct tep_format_field *fc, *fs, *fi = NULL, *fd = NULL;
	struct ust_mkt_frame *frames = NULL;
	struct ust_mkt_rec r = { 0 };
	uint64_t cookie, trunc = 0, *addr = NULL, *ino = NULL, *dev = NULL;
	unsigned int es, ei = 0, ed = 0;
	void *ps = NULL, *pi = NULL, *pd = NULL;
	const char *fv;
	size_t n = 0, nr_ino, i, len, hdr;
	struct tep_event *ev;
	enum corrupt c;
	struct target t;
	bool full;
	int ret = -1;

	if (get_target(m, l, &t, true) < 0 || need_u64(m, l, "cookie", &cookie) < 0 ||
	    parse_corrupt(m, get(l, "corrupt"), &c, &trunc) < 0)
		return -1;
	fv = get(l, "frames");
	if (!fv && c != C_ZERO_FRAMES)
		return ust_mkt_set_error(m, "stack: frames= is required");
	if (no_leftovers(m, l) < 0)
		return -1;

	if (!m->native && !ust_mkt_event(m, UST_ABI_SYSTEM_USTITCH, UST_ABI_EV_STACK_FLAGS))
		return -1;
	/* Whichever layout was declared (or the full one): the format decides. */
	ev = ust_mkt_event(m, UST_ABI_SYSTEM_FTRACE, UST_ABI_EV_UNWIND_STACK);
	if (!ev || !(fc = abi_field(m, ev, "cookie", UST_ABI_COOKIE_OFF)) ||
	    !(fs = abi_field(m, ev, "stack", UST_ABI_STACK_LOC_OFF)))
		return -1;
	full = tep_find_field(ev, "inodes") || tep_find_field(ev, "dev");
	if (full && (!(fi = abi_field(m, ev, "inodes", UST_ABI_INODES_LOC_OFF)) ||
		     !(fd = abi_field(m, ev, "dev", UST_ABI_DEV_LOC_OFF))))
		return -1;
	hdr = ust_mkt_fixed_size(ev);
	if (hdr != (full ? UST_ABI_STACK_HDR_SIZE : UST_ABI_STACK_HDR_SIZE_OLD))
		return ust_mkt_set_error(m, "user_unwind_stack: fixed size %zu, abi.h says %d",
					 hdr, full ? UST_ABI_STACK_HDR_SIZE :
					 UST_ABI_STACK_HDR_SIZE_OLD);
	es = ust_mkt_elem_size(fs);
	if (full) {
		ei = ust_mkt_elem_size(fi);
		ed = ust_mkt_elem_size(fd);
	}
	if (!full && (c == C_INODES_SHORT || c == C_DEV_OOB))
		return ust_mkt_set_error(m, "corrupt=%s needs the layout with inodes and dev",
					 get(l, "corrupt"));

	if (fv && parse_frames(m, fv, &frames, &n) < 0)
		return -1;
	if (c == C_ZERO_FRAMES)
		n = 0;
	if (!n && c != C_ZERO_FRAMES) {
		ust_mkt_set_error(m, "stack: no frames (use corrupt=zero_frames)");
		goto out;
	}
	addr = calloc(n + 1, sizeof(*addr));
	ino = calloc(n + 1, sizeof(*ino));
	dev = calloc(n + 1, sizeof(*dev));
	if (!addr || !ino || !dev)
		goto nomem;
	for (i = 0; i < n; i++) {
		addr[i] = frames[i].addr;
		ino[i] = frames[i].ino;
		dev[i] = frames[i].kdev;
	}
	nr_ino = c == C_INODES_SHORT ? n - 1 : n;
	ps = pack(addr, n, es);
	pi = pack(ino, nr_ino, ei ? ei : 8);
	pd = pack(dev, n, ed ? ed : 4);
	if (!ps || !pi || !pd || ust_mkt_rec_init(&r, ev, t.pid) < 0)
		goto nomem;
	ust_mkt_rec_put(&r, fc, cookie);
	if (ust_mkt_rec_append(&r, fs, ps, n * es) < 0 ||
	    (full && (ust_mkt_rec_append(&r, fi, pi, nr_ino * ei) < 0 ||
		      ust_mkt_rec_append(&r, fd, pd, n * ed) < 0)))
		goto nomem;

	len = r.len;
	switch (c) {
	case C_STACK_OOB:
		ust_mkt_rec_set_loc(&r, fs, (uint32_t)(len + 8 - n * es), (uint32_t)(n * es));
		break;
	case C_STACK_MISALIGNED:
		ust_mkt_rec_set_loc(&r, fs, (uint32_t)hdr, (uint32_t)(n * es - 4));
		break;
	case C_DEV_OOB:
		ust_mkt_rec_set_loc(&r, fd, (uint32_t)(len + 8 - n * ed), (uint32_t)(n * ed));
		break;
	case C_TRUNCATE:
		if (trunc > len) {
			ust_mkt_set_error(m, "corrupt=truncate:%llu: the record has only %zu bytes",
					  (unsigned long long)trunc, len);
			goto out;
		}
		len = trunc;
		break;
	default:
		break;
	}
	ret = write_rec(m, &t, &r, len);
	goto out;
nomem:
	ust_mkt_set_error(m, "out of memory or record too large");
out:
	ust_mkt_rec_fini(&r);
	free(frames);
	free(addr);
	free(ino);
	free(dev);
	free(ps);
	free(pi);
	free(pd);
	return ret;
}

/* ---------------------------------------------------------------- mapping */

static int do_mapping(struct ust_mkt *m, struct line *l)
{
	struct tep_format_field *f_ino, *f_dev, *f_bsz, *f_bid, *f_path;
	uint8_t bid[UST_ABI_BUILD_ID_MAX];
	const char *path, *as, *bopt;
	struct ust_mkt_rec r;
	struct tep_event *ev;
	struct target t;
	struct stat st;
	size_t blen = 0;
	int ret;

	if (get_target(m, l, &t, true) < 0)
		return -1;
	path = get(l, "path");
	as = get(l, "as");
	bopt = get(l, "buildid");
	if (!path)
		return ust_mkt_set_error(m, "mapping: path= is required");
	if (bopt && strcmp(bopt, "none"))
		return ust_mkt_set_error(m, "buildid=%s: only buildid=none is known", bopt);
	if (no_leftovers(m, l) < 0)
		return -1;
	if (stat(path, &st) < 0)
		return ust_mkt_set_error(m, "%s: %s", path, strerror(errno));

	ev = ust_mkt_event(m, UST_ABI_SYSTEM_USTITCH, UST_ABI_EV_USER_MAPPING);
	if (!ev || !(f_ino = abi_field(m, ev, "ino", -1)) ||
	    !(f_dev = abi_field(m, ev, "dev", -1)) ||
	    !(f_bsz = abi_field(m, ev, "build_id_size", -1)) ||
	    !(f_bid = abi_field(m, ev, "build_id", -1)) ||
	    !(f_path = abi_field(m, ev, "path", -1)))
		return -1;
	if (f_bid->size != UST_ABI_BUILD_ID_MAX)
		return ust_mkt_set_error(m, "user_mapping: build_id[%d], abi.h says %d",
					 f_bid->size, UST_ABI_BUILD_ID_MAX);
	if (!bopt)
		blen = ust_mkt_elf_build_id(path, bid, sizeof(bid));
	if (ust_mkt_rec_init(&r, ev, t.pid) < 0)
		return ust_mkt_set_error(m, "out of memory");
	ust_mkt_rec_put(&r, f_ino, st.st_ino);
	ust_mkt_rec_put(&r, f_dev, ust_res_dev_to_kdev(st.st_dev));
	ust_mkt_rec_put(&r, f_bsz, blen);
	ust_mkt_rec_put_bytes(&r, f_bid, bid, blen);
	as = as ? as : path;
	if (ust_mkt_rec_append(&r, f_path, as, strlen(as) + 1) < 0) {
		ust_mkt_rec_fini(&r);
		return ust_mkt_set_error(m, "path too long");
	}
	ret = write_rec(m, &t, &r, r.len);
	ust_mkt_rec_fini(&r);
	return ret;
}

/* ---------------------------------------------------------------- lines */

static int do_lost(struct ust_mkt *m, struct line *l)
{
	struct target t;
	uint64_t count;

	if (get_target(m, l, &t, false) < 0 || need_u64(m, l, "count", &count) < 0 ||
	    no_leftovers(m, l) < 0)
		return -1;
	return ust_mkt_lost(m, t.buf, t.cpu, (unsigned long)count);
}

static int one_arg(struct ust_mkt *m, struct line *l)
{
	if (l->nr_tok != 2)
		return ust_mkt_set_error(m, "%s takes one argument", l->tok[0]);
	return 0;
}

static int do_line(struct ust_mkt *m, struct line *l)
{
	const char *kw = l->tok[0];
	uint64_t v;

	if (!strcmp(kw, "cpus") || !strcmp(kw, "clock")) {
		if (one_arg(m, l) < 0)
			return -1;
		if (ust_mkt_started(m))
			return ust_mkt_set_error(m, "%s must come before records", kw);
		if (kw[1] == 'l') {
			free(m->clock);
			m->clock = strdup(l->tok[1]);
			return m->clock ? 0 : ust_mkt_set_error(m, "out of memory");
		}
		if (!ust_mkt_parse_u64(l->tok[1], &v) || v < 1 || v > 4096)
			return ust_mkt_set_error(m, "cpus %s: expected 1..4096", l->tok[1]);
		m->nr_cpus = (int)v;
		return 0;
	}
	if (!strcmp(kw, "native")) {
		if (l->nr_tok != 1 || ust_mkt_started(m))
			return ust_mkt_set_error(m, "native takes no argument and comes before records");
		m->native = true;
		return 0;
	}
	if (!strcmp(kw, "buffer"))
		return one_arg(m, l) < 0 ? -1 : ust_mkt_add_buffer(m, l->tok[1]);
	if (!strcmp(kw, "format"))
		return one_arg(m, l) < 0 ? -1 : ust_mkt_add_format(m, l->tok[1]);
	if (!strcmp(kw, "cmdline")) {
		char comm[256] = "";
		int i;

		if (l->nr_tok < 3 || !ust_mkt_parse_u64(l->tok[1], &v) || v > INT32_MAX)
			return ust_mkt_set_error(m, "cmdline PID COMM");
		/* COMM is the rest of the line: words joined by one space. */
		for (i = 2; i < l->nr_tok; i++) {
			if (i > 2)
				strncat(comm, " ", sizeof(comm) - strlen(comm) - 1);
			strncat(comm, l->tok[i], sizeof(comm) - strlen(comm) - 1);
		}
		return ust_mkt_add_cmdline(m, (int)v, comm);
	}

	if (strcmp(kw, "event") && strcmp(kw, "cookie") && strcmp(kw, "stack") &&
	    strcmp(kw, "mapping") && strcmp(kw, "lost"))
		return ust_mkt_set_error(m, "unknown keyword \"%s\"", kw);
	if (split_kv(m, l) < 0)
		return -1;
	if (!strcmp(kw, "event"))
		return do_event(m, l);
	if (!strcmp(kw, "cookie"))
		return do_cookie(m, l);
	if (!strcmp(kw, "stack"))
		return do_stack(m, l);
	if (!strcmp(kw, "mapping"))
		return do_mapping(m, l);
	if (!strcmp(kw, "lost"))
		return do_lost(m, l);
	return ust_mkt_set_error(m, "unknown keyword \"%s\"", kw);
}

int ust_mkt_run_spec(const char *spec_path, const char *out_path)
{
	bool is_stdin = !strcmp(spec_path, "-");
	const char *name = is_stdin ? "<stdin>" : spec_path;
	struct line *l;
	struct ust_mkt m;
	char *buf = NULL;
	size_t cap = 0;
	int lineno = 0, code = 0;
	FILE *in;

	in = is_stdin ? stdin : fopen(spec_path, "r");
	if (!in) {
		fprintf(stderr, "ust-mktrace: %s: %s\n", spec_path, strerror(errno));
		return 2;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		if (!is_stdin)
			fclose(in);
		fprintf(stderr, "ust-mktrace: out of memory\n");
		return 1;
	}
	ust_mkt_init(&m, out_path);
	while (getline(&buf, &cap, in) >= 0) {
		lineno++;
		if (tokenize(&m, buf, l) < 0 || (l->nr_tok && do_line(&m, l) < 0)) {
			fprintf(stderr, "%s:%d: %s\n", name, lineno, m.err);
			code = m.io_failed ? 1 : 2;
			break;
		}
	}
	if (!code && ferror(in)) {
		fprintf(stderr, "ust-mktrace: %s: read error\n", name);
		code = 2;
	}
	if (code)
		ust_mkt_discard(&m);
	else if (ust_mkt_finish(&m) < 0) {
		fprintf(stderr, "ust-mktrace: %s\n", m.err);
		code = m.io_failed ? 1 : 2;
	}
	free(buf);
	free(l);
	if (!is_stdin)
		fclose(in);
	return code;
}
