// SPDX-License-Identifier: LGPL-2.1
/*
 * Fuzz target: the babeltrace2 sink's stack and object events as plain
 * values (ust_bt2_take_stack(), ust_bt2_take_object(), the lock lists of
 * ust_bt2_each_lock(), then the questions the sink asks: stack found,
 * complete, lock covered).  Reading babeltrace2's field objects is
 * babeltrace2's; what the values mean is ours.
 *
 * An input is a list of operations, each a byte (modulo 4) then its
 * arguments; what is missing at the end reads as 0:
 *   0 stack   id(1) pid(1) n(1) shape(1), then n offsets, inodes, devs (8 each)
 *             shape: bit 0/1 inodes/devs one longer, bit 2/3 inodes/devs
 *             missing, bit 4 offsets missing
 *   1 object  pid(1) base lo hi(8 each) dev(4) ino(1) path: len(1) bytes,
 *             build-id: len(1) bytes (a byte per element; > 64 is none)
 *   2 locks   pid(1) len(1) text
 *   3 find    id(1): and an event with that stack id into the profiles
 *             (sink.ustitch.text's folded, flamegraph, pprof, top; written
 *             to /dev/null at the end, their lines on stdout too)
 * A stack whose arrays agree must be found, frame for frame, unless its
 * id was taken before.
 *
 * UST_FUZZ_BT2_MKSEEDS=DIR: write the seeds (made by the encoder below,
 * the same format) into DIR and exit.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ust_bt2.h"
#include "ustitch/abi.h"
#include "ustitch/resolve.h"

#define MAX_FRAMES	255

struct cur {
	const uint8_t *p;
	size_t n;
};

/* @bytes little-endian bytes (at most 8) as a number. */
static uint64_t get(struct cur *c, size_t bytes)
{
	uint64_t v = 0;

	for (size_t i = 0; i < bytes && c->n; i++) {
		v |= (uint64_t)*c->p << (8 * i);
		c->p++;
		c->n--;
	}
	return v;
}

/* The bytes of a length-prefixed string, NUL-terminated (embedded NULs stay). */
static char *get_str(struct cur *c)
{
	size_t len = (size_t)get(c, 1);
	char *s = malloc(len + 1);

	if (!s)
		abort();
	for (size_t i = 0; i < len; i++)
		s[i] = (char)get(c, 1);
	s[len] = '\0';
	return s;
}

struct locks_seen {
	struct ust_bt2_stacks *st;
	int pid;
	unsigned int calls, stop_at;
};

static bool on_lock(void *data, uint64_t addr, bool more)
{
	struct locks_seen *l = data;

	if (!more)
		(void)ust_bt2_objs_cover(l->st, l->pid, addr);
	return ++l->calls != l->stop_at;
}

static void op_stack(struct ust_bt2_stacks *st, struct cur *c, bool *taken)
{
	static uint64_t offs[MAX_FRAMES + 1], inos[MAX_FRAMES + 1], devs[MAX_FRAMES + 1];
	struct ust_bt2_stack_ev ev = { 0 };
	unsigned int shape, i;
	struct ust_bt2_stack *s;
	bool agree;

	ev.id = get(c, 1);
	ev.pid = get(c, 1);
	ev.nr_offs = get(c, 1);
	shape = (unsigned int)get(c, 1);
	ev.nr_inos = ev.nr_offs + (shape & 1);
	ev.nr_devs = ev.nr_offs + ((shape >> 1) & 1);
	for (i = 0; i < ev.nr_offs; i++)
		offs[i] = get(c, 8);
	for (i = 0; i < ev.nr_inos; i++)
		inos[i] = get(c, 8);
	for (i = 0; i < ev.nr_devs; i++)
		devs[i] = get(c, 8);
	ev.offs = shape & 16 ? NULL : offs;
	ev.inos = shape & 4 ? NULL : inos;
	ev.devs = shape & 8 ? NULL : devs;
	if (ust_bt2_take_stack(st, &ev))
		return;		/* out of memory */
	agree = ev.offs && ev.inos && ev.devs && ev.nr_inos == ev.nr_offs && ev.nr_devs == ev.nr_offs;
	s = ust_bt2_stacks_find(st, ev.id);
	if (agree && !taken[ev.id]) {
		if (!s || s->nr != ev.nr_offs) {
			fprintf(stderr, "fuzz_bt2: stack %llu of %llu frames not kept\n",
				(unsigned long long)ev.id, (unsigned long long)ev.nr_offs);
			abort();
		}
		for (i = 0; i < s->nr; i++)
			if (s->frames[i].off != offs[i] || s->frames[i].ino != inos[i] ||
			    s->frames[i].kdev != (uint32_t)devs[i]) {
				fprintf(stderr, "fuzz_bt2: stack %llu frame %u differs\n",
					(unsigned long long)ev.id, i);
				abort();
			}
		taken[ev.id] = true;
	} else if (!taken[ev.id] && s) {
		fprintf(stderr, "fuzz_bt2: stack %llu kept though its arrays disagree\n",
			(unsigned long long)ev.id);
		abort();
	}
}

static void op_object(struct ust_bt2_stacks *st, struct cur *c)
{
	static uint64_t bid[256];
	struct ust_bt2_object_ev ev = { 0 };
	char *path;

	ev.pid = get(c, 1);
	ev.base = get(c, 8);
	ev.lo = get(c, 8);
	ev.hi = get(c, 8);
	ev.dev = get(c, 4);
	ev.ino = get(c, 1);
	path = get_str(c);
	ev.path = path;
	ev.nr_bid = get(c, 1);
	for (uint64_t i = 0; i < ev.nr_bid; i++)
		bid[i] = get(c, 1);
	ev.bid = bid;
	(void)ust_bt2_take_object(st, &ev);
	free(path);
}

static void op_locks(struct ust_bt2_stacks *st, struct cur *c)
{
	struct locks_seen l = { .st = st };
	char *text;

	l.pid = (int)get(c, 1);
	text = get_str(c);
	l.stop_at = (unsigned int)(strlen(text) % 7);	/* 0: never stop */
	(void)ust_bt2_each_lock(text, on_lock, &l);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Frames of files no object event described are not looked for on
	 * this machine: a directory index per input would be most of the time. */
	static const struct ust_res_opts ro = {
		.no_proc = true, .no_index = true, .no_handle = true, .no_local_dirs = true,
	};
	const struct ust_bt2_opts o = { .symbols = false, .lines = false, .res = &ro };
	const struct ust_bt2_profile_opts po = {
		.folded = "/dev/null", .flamegraph = "/dev/null", .pprof = "/dev/null", .top = 3,
	};
	static bool quiet;
	struct cur c = { data, size };
	struct ust_bt2_stacks st;
	struct ust_bt2_profile prof;
	bool taken[256] = { false };

	if (!quiet)	/* the profiles' lines: not the fuzzer's */
		quiet = freopen("/dev/null", "w", stdout) != NULL;
	if (ust_bt2_stacks_init(&st, &o) || ust_bt2_profile_init(&prof, &po, &st)) {
		ust_bt2_profile_fini(&prof);
		ust_bt2_stacks_fini(&st);
		return 0;
	}
	while (c.n) {
		struct ust_bt2_stack *s;

		switch (get(&c, 1) % 4) {
		case 0:
			op_stack(&st, &c, taken);
			break;
		case 1:
			op_object(&st, &c);
			break;
		case 2:
			op_locks(&st, &c);
			break;
		default: {
			uint64_t id = get(&c, 1);
			struct ust_bt2_profile_ev pe = { .event = id & 1 ? "a:b" : "c:d", .tid = 1, .cpu = -1 };

			s = ust_bt2_stacks_find(&st, id);
			if (s && ust_bt2_stack_complete(&st, s))
				pe.stack_key = id;
			pe.stack = s;
			ust_bt2_profile_add(&prof, &pe);
			break;
		}
		}
	}
	ust_bt2_profile_finish(&prof);
	ust_bt2_profile_fini(&prof);
	ust_bt2_stacks_fini(&st);
	return 0;
}

/* ---- seeds: the encoder of the format above ------------------------------ */

struct enc {
	uint8_t b[8192];
	size_t n;
};

static void put(struct enc *e, uint64_t v, size_t bytes)
{
	for (size_t i = 0; i < bytes && e->n < sizeof(e->b); i++)
		e->b[e->n++] = (uint8_t)(v >> (8 * i));
}

static void put_str(struct enc *e, const char *s)
{
	put(e, strlen(s), 1);
	while (*s)
		put(e, (uint8_t)*s++, 1);
}

static void enc_stack(struct enc *e, uint8_t id, uint8_t pid, unsigned int n, uint8_t shape,
		      uint64_t ino, uint32_t dev)
{
	unsigned int nr_inos = n + (shape & 1), nr_devs = n + ((shape >> 1) & 1);

	put(e, 0, 1);
	put(e, id, 1);
	put(e, pid, 1);
	put(e, n, 1);
	put(e, shape, 1);
	for (unsigned int i = 0; i < n; i++)
		put(e, 0x1130 + 0x40 * i, 8);
	for (unsigned int i = 0; i < nr_inos; i++)
		put(e, i + 1 == n ? 0 : ino + i % 2, 8);	/* the last frame: no file */
	for (unsigned int i = 0; i < nr_devs; i++)
		put(e, dev, 8);
}

static void enc_object(struct enc *e, uint8_t pid, uint64_t base, uint64_t size, uint32_t dev,
		       uint8_t ino, const char *path, unsigned int bid_len)
{
	put(e, 1, 1);
	put(e, pid, 1);
	put(e, base, 8);
	put(e, base, 8);
	put(e, base + size, 8);
	put(e, dev, 4);
	put(e, ino, 1);
	put_str(e, path);
	put(e, bid_len, 1);
	for (unsigned int i = 0; i < bid_len; i++)
		put(e, 0xa0 + i, 1);
}

static void enc_locks(struct enc *e, uint8_t pid, const char *text)
{
	put(e, 2, 1);
	put(e, pid, 1);
	put_str(e, text);
}

static void enc_find(struct enc *e, uint8_t id)
{
	put(e, 3, 1);
	put(e, id, 1);
}

static void write_seed(const char *dir, const char *name, const struct enc *e)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(e->b, 1, e->n, f) != e->n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void make_seeds(const char *dir)
{
	const uint32_t dev = UST_ABI_MKKDEV(254, 1);
	struct enc e;

	/* What the LTTng provider emits: the objects of a process, a stack
	 * in them, locks in its data, asked for in that order. */
	memset(&e, 0, sizeof(e));
	enc_object(&e, 42, 0x555555554000ULL, 0x5000, dev, 7, "/usr/bin/ust-app", 20);
	enc_object(&e, 42, 0x7ffff7d80000ULL, 0x1c0000, dev, 8,
		   "/usr/lib/x86_64-linux-gnu/libc.so.6", 20);
	enc_stack(&e, 1, 42, 4, 0, 7, dev);
	enc_find(&e, 1);
	enc_locks(&e, 42, "555555558040 7ffff7f9a100 ...");
	write_seed(dir, "provider", &e);

	/* A stack re-emitted (a session started later), before its objects. */
	memset(&e, 0, sizeof(e));
	enc_stack(&e, 9, 7, 3, 0, 7, dev);
	enc_find(&e, 9);
	enc_stack(&e, 9, 7, 3, 0, 7, dev);
	enc_object(&e, 7, 0x400000, 0x3000, dev, 7, "/tmp/prog", 0);
	enc_find(&e, 9);
	write_seed(dir, "late-objects", &e);

	/* Arrays that disagree, or are missing: not a stack. */
	memset(&e, 0, sizeof(e));
	enc_stack(&e, 2, 1, 3, 1, 7, dev);
	enc_stack(&e, 3, 1, 3, 2, 7, dev);
	enc_stack(&e, 4, 1, 3, 4, 7, dev);
	enc_stack(&e, 5, 1, 0, 16, 7, dev);
	enc_stack(&e, 6, 1, 0, 0, 7, dev);
	enc_find(&e, 2);
	enc_find(&e, 6);
	write_seed(dir, "arrays", &e);

	/* Build-ids: none, the usual 20 bytes, the most (64), one too many. */
	memset(&e, 0, sizeof(e));
	enc_object(&e, 3, 0x10000, 0x1000, dev, 1, "/lib/a.so", 0);
	enc_object(&e, 3, 0x20000, 0x1000, dev, 2, "/lib/b.so", 20);
	enc_object(&e, 3, 0x30000, 0x1000, dev, 3, "/lib/c.so", 64);
	enc_object(&e, 3, 0x40000, 0x1000, dev, 4, "/lib/d.so", 65);
	enc_locks(&e, 3, "10010 20020 30030 40040 50050");
	write_seed(dir, "build-ids", &e);

	/* Lock lists as the provider writes them, and worse. */
	memset(&e, 0, sizeof(e));
	enc_object(&e, 5, 0x600000, 0x1000, dev, 5, "/tmp/locks", 20);
	enc_locks(&e, 5, "");
	enc_locks(&e, 5, "600040");
	enc_locks(&e, 5, "  600040   600080 ... ");
	enc_locks(&e, 5, "0x600040 zz 600080");
	enc_locks(&e, 5, "ffffffffffffffffff -1 ......");
	write_seed(dir, "locks", &e);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *mk = getenv("UST_FUZZ_BT2_MKSEEDS");

	(void)argc;
	(void)argv;
	if (mk) {
		make_seeds(mk);
		exit(0);
	}
	return 0;
}
