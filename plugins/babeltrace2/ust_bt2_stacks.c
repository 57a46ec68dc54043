// SPDX-License-Identifier: LGPL-2.1
/*
 * What the trace told us about stacks and objects, and how they print.
 *
 * Stacks are kept for the whole trace: each distinct stack is emitted
 * once, possibly long before an event that uses its id.  A stack id is
 * unique in the trace (the provider salts it per process), so it is the
 * only key.  Objects are kept per process (pid, address range): frames
 * do not need them (they carry file offsets, inode and dev, which
 * ust_res maps to the object's path and build-id), but lock addresses
 * are plain addresses of that process.
 *
 * A stack may arrive before the ustitch:object events of its files (a
 * session started later gets the stack, then everything again), so a
 * stack is "complete" only once all its files are described; the
 * plugin waits a little for that, and only a complete rendering is kept.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ust_bt2.h"
#include "ustitch/grow.h"
#include "ustitch/res_debuginfod.h"

int ust_bt2_stacks_init(struct ust_bt2_stacks *s, const struct ust_bt2_opts *o)
{
	struct ust_sym_opts so = { .debug_dirs = o->debug_dirs, .nr_debug_dirs = o->nr_debug_dirs,
				   .raw_names = !o->demangle };
	const char *dirs[UST_BT2_MAX_DEBUG_DIRS + 1];
	const char *root;
	char err[512];
	int i;

	memset(s, 0, sizeof(*s));
	ust_hmap_init(&s->ids);
	ust_hmap_init(&s->obj_keys);
	ust_hmap_init(&s->files);
	s->res = ust_res_new(o->res);
	/* Asked for by name: an archive that cannot be used is an error, not
	 * a report that quietly lacks its names. */
	if (s->res && o->archive && ust_res_set_archive(s->res, o->archive, err, sizeof(err))) {
		fprintf(stderr, "ustitch: %s\n", err);
		return -1;
	}
	if (s->res && o->archive) {
		struct ust_sb sb;

		/* Nothing was looked up yet: the summary is only what is wrong
		 * in the archive (malformed manifest lines, a debug file that
		 * is a symlink), said once before the output. */
		ust_sb_init(&sb);
		ust_res_summary(s->res, &sb);
		fputs(ust_sb_str(&sb), stderr);
		ust_sb_fini(&sb);
	}
	/* Its debug files are a debug root, after the ones named (as the
	 * traceevent plugin does). */
	root = ust_res_debug_root(s->res);
	if (root && o->nr_debug_dirs <= UST_BT2_MAX_DEBUG_DIRS) {
		for (i = 0; i < o->nr_debug_dirs; i++)
			dirs[i] = o->debug_dirs[i];
		dirs[i] = root;
		so.debug_dirs = dirs;
		so.nr_debug_dirs = o->nr_debug_dirs + 1;
	}
	if (s->res && o->debuginfod) {
		if (ust_res_set_debuginfod(s->res, true, err, sizeof(err)) == 0) {
			so.fetch_debug = ust_res_debuginfod_fetch_debug;
			so.fetch_ctx = s->res;
		} else {
			fprintf(stderr, "ustitch: %s\n", err);
		}
	}
	s->sym = ust_sym_cache_new(&so);
	s->dsym = ust_bt2_datasym_new(o->demangle);
	if (!s->res || !s->sym || !s->dsym)
		return -1;
	s->rnd.opts.symbols = o->symbols;
	s->rnd.opts.lines = o->lines;
	s->rnd.opts.max_frames = o->max_frames;
	s->rnd.res = s->res;
	s->rnd.sym = s->sym;
	return 0;
}

void ust_bt2_stacks_fini(struct ust_bt2_stacks *s)
{
	size_t i;

	for (i = 0; i < s->nr; i++) {
		free(s->v[i].frames);
		free(s->v[i].text);
	}
	free(s->v);
	free(s->objs);
	ust_hmap_fini(&s->ids);
	ust_hmap_fini(&s->obj_keys);
	ust_hmap_fini(&s->files);
	ust_render_fini(&s->rnd);
	ust_res_free(s->res);
	ust_sym_cache_free(s->sym);
	ust_bt2_datasym_free(s->dsym);
	memset(s, 0, sizeof(*s));
}

int ust_bt2_stacks_add(struct ust_bt2_stacks *s, uint64_t id, int pid, const uint64_t *off,
		       const uint64_t *ino, const uint32_t *kdev, unsigned int nr)
{
	struct ust_bt2_stack *st;
	uint64_t have;
	unsigned int i;

	if (ust_hmap_get(&s->ids, id, &have))
		return 0;
	st = ust_grow(s->v, &s->cap, s->nr + 1, sizeof(*st), 256);
	if (!st)
		return -1;
	s->v = st;
	st = &s->v[s->nr];
	st->pid = pid;
	st->nr = nr;
	st->text = NULL;
	st->complete = false;
	st->frames = calloc(nr ? nr : 1, sizeof(*st->frames));
	if (!st->frames)
		return -1;
	for (i = 0; i < nr; i++) {
		st->frames[i].off = off[i];
		st->frames[i].ino = ino[i];
		st->frames[i].kdev = kdev[i];
	}
	if (ust_hmap_put(&s->ids, id, s->nr + 1)) {
		free(st->frames);
		return -1;
	}
	s->nr++;
	return 0;
}

int ust_bt2_take_stack(struct ust_bt2_stacks *s, const struct ust_bt2_stack_ev *ev)
{
	uint32_t *kdev;
	uint64_t i;
	int ret;

	/* A stack whose arrays disagree is not one stack: never guess. */
	if (!ev->offs || !ev->inos || !ev->devs || ev->nr_inos != ev->nr_offs ||
	    ev->nr_devs != ev->nr_offs || ev->nr_offs > UINT32_MAX)
		return 0;
	kdev = calloc(ev->nr_offs + 1, sizeof(*kdev));
	if (!kdev)
		return -1;
	for (i = 0; i < ev->nr_offs; i++)
		kdev[i] = (uint32_t)ev->devs[i];	/* a kernel dev_t: 32 bits */
	ret = ust_bt2_stacks_add(s, ev->id, (int)ev->pid, ev->offs, ev->inos, kdev,
				 (unsigned int)ev->nr_offs);
	free(kdev);
	return ret;
}

int ust_bt2_take_object(struct ust_bt2_stacks *s, const struct ust_bt2_object_ev *ev)
{
	uint8_t bid[64];
	uint64_t n = ev->nr_bid, i;

	if (!ev->path)
		return 0;
	/* Longer than any build-id: not one, the object is still described. */
	if (n > sizeof(bid) || !ev->bid)
		n = 0;
	for (i = 0; i < n; i++)
		bid[i] = (uint8_t)ev->bid[i];
	return ust_bt2_objs_add(s, (int)ev->pid, ev->base, ev->lo, ev->hi, (uint32_t)ev->dev,
				ev->ino, ev->path, n ? bid : NULL, n);
}

bool ust_bt2_each_lock(const char *s, bool (*fn)(void *data, uint64_t addr, bool more), void *data)
{
	while (s && *s) {
		char *end;
		uint64_t a;

		while (*s == ' ')
			s++;
		if (!*s)
			break;
		if (!strncmp(s, "...", 3)) {
			if (!fn(data, 0, true))
				return false;
			s += 3;
			continue;
		}
		a = strtoull(s, &end, 16);
		if (end == s)
			break;
		if (!fn(data, a, false))
			return false;
		s = end;
	}
	return true;
}

struct ust_bt2_stack *ust_bt2_stacks_find(const struct ust_bt2_stacks *s, uint64_t id)
{
	uint64_t idx;

	return ust_hmap_get(&s->ids, id, &idx) ? &s->v[idx - 1] : NULL;
}

static uint64_t file_key(uint32_t kdev, uint64_t ino)
{
	return ust_hmap_mix(ino ^ ust_hmap_mix(kdev));
}

bool ust_bt2_stack_complete(struct ust_bt2_stacks *s, struct ust_bt2_stack *st)
{
	uint64_t have;
	unsigned int i;

	for (i = 0; !st->complete && i < st->nr; i++)
		if (st->frames[i].ino &&
		    !ust_hmap_get(&s->files, file_key(st->frames[i].kdev, st->frames[i].ino), &have))
			return false;
	st->complete = true;
	return true;
}

int ust_bt2_objs_add(struct ust_bt2_stacks *s, int pid, uint64_t base, uint64_t lo,
		     uint64_t hi, uint32_t kdev, uint64_t ino, const char *path,
		     const uint8_t *bid, size_t bid_len)
{
	uint64_t key = ust_hmap_mix(ust_hmap_mix((uint64_t)(uint32_t)pid << 32 ^ kdev) ^ base) ^ ino;
	struct ust_bt2_obj *o;
	uint64_t have;

	if (ust_hmap_get(&s->obj_keys, key, &have))
		return 0;
	if (ino && (ust_res_add_mapping(s->res, kdev, ino, path, bid, bid_len) ||
		    ust_hmap_put(&s->files, file_key(kdev, ino), 1)))
		return -1;
	o = ust_grow(s->objs, &s->cap_objs, s->nr_objs + 1, sizeof(*o), 64);
	if (!o)
		return -1;
	s->objs = o;
	o = &s->objs[s->nr_objs++];
	o->pid = pid;
	o->base = base;
	o->lo = lo;
	o->hi = hi;
	o->kdev = kdev;
	o->ino = ino;
	return ust_hmap_put(&s->obj_keys, key, 1);
}

/* The newest object of @pid (any pid when < 0) covering @addr. */
static const struct ust_bt2_obj *find_obj(const struct ust_bt2_stacks *s, int pid, uint64_t addr)
{
	size_t i;

	for (i = s->nr_objs; i-- > 0;) {
		const struct ust_bt2_obj *o = &s->objs[i];

		if ((pid < 0 || o->pid == pid) && addr >= o->lo && addr < o->hi)
			return o;
	}
	return NULL;
}

bool ust_bt2_objs_cover(const struct ust_bt2_stacks *s, int pid, uint64_t addr)
{
	return find_obj(s, pid, addr) != NULL;
}

/*
 * A stack prints the same under every event that uses it, so it is
 * rendered (symbolized) once; a trace repeats few stacks many times.
 */
void ust_bt2_render_stack(struct ust_bt2_stacks *s, struct ust_bt2_stack *st,
			  struct ust_sb *out)
{
	struct ust_sb sb;

	if (!st->text && !ust_bt2_stack_complete(s, st)) {
		ust_render_frames(&s->rnd, st->frames, st->nr, true, out);
		return;
	}
	if (!st->text) {
		ust_sb_init(&sb);
		ust_render_frames(&s->rnd, st->frames, st->nr, true, &sb);
		if (!sb.oom)
			st->text = ust_sb_steal(&sb);
		else
			ust_sb_fini(&sb);
		if (!st->text) {
			ust_render_frames(&s->rnd, st->frames, st->nr, true, out);
			return;
		}
	}
	ust_sb_puts(out, st->text);
}

void ust_bt2_name_addr(struct ust_bt2_stacks *s, int pid, uint64_t addr, struct ust_sb *out)
{
	const struct ust_bt2_obj *o = find_obj(s, pid, addr);
	struct ust_res_hit hit = { 0 };
	const char *name = NULL, *obj, *dbg;
	uint64_t off = 0;
	char err[160];

	if (!o || !o->ino || ust_res_lookup(s->res, o->kdev, o->ino, &hit) || !hit.path) {
		ust_sb_printf(out, "0x%" PRIx64, addr);
		return;
	}
	/* Shown by the name the file is known by, as its frames are (a copy
	 * in an archive or debuginfod's cache is not a name). */
	obj = hit.name ? hit.name : hit.path;
	obj = strrchr(obj, '/') ? strrchr(obj, '/') + 1 : obj;
	if (s->rnd.opts.symbols) {
		name = ust_bt2_datasym_lookup(s->dsym, hit.path, addr - o->base, &off);
		/* A stripped file's symbols are in the debug file the
		 * symbolizer found for it (a root, the archive, debuginfod). */
		dbg = name ? NULL : ust_sym_file_debug_path(ust_sym_cache_get(
			s->sym, hit.path, hit.build_id, hit.build_id_len, err, sizeof(err)));
		if (dbg)
			name = ust_bt2_datasym_lookup(s->dsym, dbg, addr - o->base, &off);
	}
	if (!name)
		ust_sb_printf(out, "0x%" PRIx64 " (%s+0x%" PRIx64 ")", addr, obj, addr - o->base);
	else if (off)
		ust_sb_printf(out, "%s+0x%" PRIx64 " (%s)", name, off, obj);
	else
		ust_sb_printf(out, "%s (%s)", name, obj);
}
