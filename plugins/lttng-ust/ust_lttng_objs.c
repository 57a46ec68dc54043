// SPDX-License-Identifier: LGPL-2.1
/*
 * Loaded objects: address -> (file offset, inode, dev), the way the kernel
 * records a user stack, plus what a reader needs to find and symbolize
 * the file elsewhere (path, build-id, load bias, address range).
 *
 * The table is read from /proc/self/maps with plain syscalls into static
 * storage (lib/base/maps.c's ust_maps_each, which neither allocates nor
 * touches stdio), not with dl_iterate_phdr: that takes the loader lock and
 * allocates, and a refresh must be possible from the hot path when a
 * frame lies in an object loaded since the last one (a dlopen we were not
 * told about; interposing dlopen would change the caller glibc uses for
 * RUNPATH and $ORIGIN, and could break the application).  ELF headers,
 * program headers and build-id notes are read with process_vm_readv,
 * which cannot fault.  Refreshes are rare (rate-limited, one at a time);
 * readers never wait for them.
 *
 * Two tables alternate: a refresh fills the one not published, then
 * publishes it.  Each table has a version, odd while being written; a
 * reader that sees it change discards what it read and leaves the
 * address raw.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>

#include "ust_lttng.h"
#include "ust_lttng_tp.h"
#include "ustitch/abi.h"
#include "ustitch/hmap.h"
#include "ustitch/maps.h"

#define MAX_MAPS	2048
#define MAX_OBJS	512
#define POOL_SIZE	(64 * 1024)
#define BID_MAX		32
#define MAX_PHDRS	64
#define REFRESH_NS	20000000LL	/* at most one refresh per 20 ms */
#define EMIT_BITS	10

struct map {
	uintptr_t start, end;
	uint64_t pgoff;
	uint32_t obj;
};

struct obj {
	uintptr_t base, lo, hi;
	uint64_t ino;
	uint32_t kdev;
	uint32_t path;			/* offset into the pool */
	uint8_t bid_len;
	uint8_t bid[BID_MAX];
	uint32_t described;		/* generation seen described (hint) */
};

struct table {
	atomic_uint ver;
	unsigned int nr_maps, nr_objs;
	size_t pool_len;
	struct map maps[MAX_MAPS];
	struct obj objs[MAX_OBJS];
	char pool[POOL_SIZE];
};

static struct table tables[2];
static atomic_uint published;		/* index of the current table */
static atomic_flag refreshing = ATOMIC_FLAG_INIT;
static atomic_llong last_refresh;
static atomic_int stale;
static atomic_uint maps_cfi_gen;	/* ust_lttng_cfi_gen() at the last refresh */

/* Objects described in the trace: (dev, ino, base) -> generation. */
struct emitted {
	_Atomic uint64_t key;
	atomic_uint gen;
};
static struct emitted emitted[1 << EMIT_BITS];

/* Raw text of /proc/self/maps, one refresher at a time. */
static char rbuf[8192];

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static bool read_mem(uintptr_t addr, void *out, size_t len)
{
	struct iovec l = { out, len }, r = { (void *)addr, len };

	return process_vm_readv(ust_lttng_proc.pid, &l, 1, &r, 1, 0) == (ssize_t)len;
}

/* The GNU build-id among the notes at [addr, addr + size). */
static uint8_t read_build_id(uintptr_t addr, size_t size, uint8_t *out)
{
	uint8_t notes[1024];
	size_t off = 0;

	if (size > sizeof(notes))
		size = sizeof(notes);
	if (!read_mem(addr, notes, size))
		return 0;
	while (off + sizeof(Elf64_Nhdr) <= size) {
		Elf64_Nhdr nh;
		size_t name_off = off + sizeof(nh), desc_off;

		memcpy(&nh, notes + off, sizeof(nh));
		desc_off = name_off + ((nh.n_namesz + 3) & ~3u);
		if (desc_off > size || nh.n_descsz > size - desc_off)
			return 0;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(notes + name_off, "GNU", 4) && nh.n_descsz && nh.n_descsz <= BID_MAX) {
			memcpy(out, notes + desc_off, nh.n_descsz);
			return (uint8_t)nh.n_descsz;
		}
		off = desc_off + ((nh.n_descsz + 3) & ~3u);
	}
	return 0;
}

/* Load bias, segment range and build-id from the ELF image at @start. */
static void read_elf(struct obj *o, uintptr_t start)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[MAX_PHDRS];
	uintptr_t lo = UINTPTR_MAX, hi = 0, first = UINTPTR_MAX;
	long page = sysconf(_SC_PAGESIZE);
	unsigned int i, n;

	if (!read_mem(start, &eh, sizeof(eh)) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr))
		return;
	n = eh.e_phnum < MAX_PHDRS ? eh.e_phnum : MAX_PHDRS;
	if (!n || !read_mem(start + eh.e_phoff, ph, n * sizeof(ph[0])))
		return;
	for (i = 0; i < n; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (first == UINTPTR_MAX)
			first = ph[i].p_vaddr & ~(uintptr_t)(page - 1);
		if (ph[i].p_vaddr < lo)
			lo = ph[i].p_vaddr;
		if (ph[i].p_vaddr + ph[i].p_memsz > hi)
			hi = ph[i].p_vaddr + ph[i].p_memsz;
	}
	if (first == UINTPTR_MAX)
		return;
	o->base = start - first;
	o->lo = o->base + (lo & ~(uintptr_t)(page - 1));
	o->hi = o->base + hi;
	for (i = 0; i < n && !o->bid_len; i++)
		if (ph[i].p_type == PT_NOTE)
			o->bid_len = read_build_id(o->base + ph[i].p_vaddr, ph[i].p_filesz, o->bid);
}

/* One line of /proc/self/maps into the table @arg. */
static int add_ent(struct ust_maps_ent *e, void *arg)
{
	struct table *t = arg;
	struct obj *o = NULL;
	size_t len;
	unsigned int i;

	if (!e->ino || t->nr_maps >= MAX_MAPS)
		return 0;
	len = strlen(e->path);
	if (len > 10 && !memcmp(e->path + len - 10, " (deleted)", 10))
		len -= 10;

	/* A new object at each image start; later pieces join the last
	 * object of the same file. */
	for (i = t->nr_objs; i-- > 0 && e->off;)
		if (t->objs[i].ino == e->ino && t->objs[i].kdev == e->kdev) {
			o = &t->objs[i];
			break;
		}
	if (!o) {
		if (t->nr_objs >= MAX_OBJS || t->pool_len + len + 1 > POOL_SIZE)
			return 0;
		o = &t->objs[t->nr_objs++];
		memset(o, 0, sizeof(*o));
		o->ino = e->ino;
		o->kdev = e->kdev;
		o->path = (uint32_t)t->pool_len;
		memcpy(t->pool + t->pool_len, e->path, len);
		t->pool[t->pool_len + len] = '\0';
		t->pool_len += len + 1;
		o->base = (uintptr_t)(e->start - e->off);
		o->lo = (uintptr_t)e->start;
		if (!e->off)
			read_elf(o, (uintptr_t)e->start);
	}
	if (e->end > o->hi)
		o->hi = (uintptr_t)e->end;
	if (e->start < o->lo)
		o->lo = (uintptr_t)e->start;
	t->maps[t->nr_maps].start = (uintptr_t)e->start;
	t->maps[t->nr_maps].end = (uintptr_t)e->end;
	t->maps[t->nr_maps].pgoff = e->off;
	t->maps[t->nr_maps].obj = (uint32_t)(o - t->objs);
	t->nr_maps++;
	return 0;
}

static void fill(struct table *t)
{
	int fd;

	t->nr_maps = t->nr_objs = 0;
	t->pool_len = 0;
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ust_maps_each(fd, rbuf, sizeof(rbuf), add_ent, t);
	close(fd);
}

void ust_lttng_objs_refresh(void)
{
	unsigned int next;
	struct table *t;

	if (atomic_flag_test_and_set(&refreshing))
		return;		/* someone else is at it */
	atomic_store(&last_refresh, now_ns());
	atomic_store(&maps_cfi_gen, ust_lttng_cfi_gen());
	atomic_store(&stale, 0);
	next = atomic_load(&published) ^ 1;
	t = &tables[next];
	atomic_fetch_add(&t->ver, 1);	/* odd: being written */
	fill(t);
	atomic_fetch_add(&t->ver, 1);
	atomic_store(&published, next);
	atomic_flag_clear(&refreshing);
}

void ust_lttng_objs_refresh_if_stale(void)
{
	if (atomic_load(&stale))
		ust_lttng_objs_refresh();
}

void ust_lttng_objs_init(void)
{
	ust_lttng_objs_refresh();
}

static const struct table *begin_read(unsigned int *ver)
{
	const struct table *t = &tables[atomic_load(&published)];

	*ver = atomic_load(&t->ver);
	return (*ver & 1) ? NULL : t;
}

static bool end_read(const struct table *t, unsigned int ver)
{
	return atomic_load(&t->ver) == ver;
}

static const struct map *find_map(const struct table *t, uintptr_t addr)
{
	unsigned int lo = 0, hi = t->nr_maps;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (addr < t->maps[mid].start)
			hi = mid;
		else if (addr >= t->maps[mid].end)
			lo = mid + 1;
		else
			return &t->maps[mid];
	}
	return NULL;
}

static const struct obj *find_obj(const struct table *t, uintptr_t addr)
{
	const struct map *m = find_map(t, addr);
	unsigned int i;

	if (m)
		return &t->objs[m->obj];
	/* .bss past the file-backed pages is anonymous memory. */
	for (i = 0; i < t->nr_objs; i++)
		if (addr >= t->objs[i].lo && addr < t->objs[i].hi)
			return &t->objs[i];
	return NULL;
}

/* Describe @o in the trace once per generation. */
static void emit_obj(const struct table *t, const struct obj *o, uint32_t gen)
{
	uint64_t key;
	size_t i, mask = (1u << EMIT_BITS) - 1;

	/* Fast path for the common case: described already, this table. */
	if (__atomic_load_n(&o->described, __ATOMIC_RELAXED) == gen)
		return;
	key = ust_hmap_mix(o->ino ^ ust_hmap_mix((uint64_t)o->kdev << 32 ^ o->base));
	if (!key)
		key = 1;
	for (i = 0; i < 64; i++) {
		struct emitted *e = &emitted[(key + i) & mask];
		uint64_t k = atomic_load(&e->key);
		unsigned int g;

		if (!k) {
			if (!atomic_compare_exchange_strong(&e->key, &k, key) && k != key)
				continue;
		} else if (k != key) {
			continue;
		}
		g = atomic_load(&e->gen);
		if (g == gen || !atomic_compare_exchange_strong(&e->gen, &g, gen)) {
			__atomic_store_n((uint32_t *)&o->described, gen, __ATOMIC_RELAXED);
			return;
		}
		break;
	}
	/* Table full (i == 64): describe it again, harmless. */
	lttng_ust_tracepoint(ustitch, object, ust_lttng_proc.pid, o->base, o->lo, o->hi,
			     o->kdev, o->ino, t->pool + o->path, o->bid, o->bid_len);
	if (i < 64)
		__atomic_store_n((uint32_t *)&o->described, gen, __ATOMIC_RELAXED);
}

static bool lookup(uintptr_t addr, uint64_t *off, uint64_t *ino, uint32_t *kdev, uint32_t gen)
{
	unsigned int ver;
	const struct table *t = begin_read(&ver);
	const struct map *m;

	if (!t || !(m = find_map(t, addr)))
		return false;
	*off = addr - m->start + m->pgoff;
	*ino = t->objs[m->obj].ino;
	*kdev = t->objs[m->obj].kdev;
	if (!end_read(t, ver))
		return false;
	if (gen && lttng_ust_tracepoint_enabled(ustitch, object))
		emit_obj(t, &t->objs[m->obj], gen);
	return true;
}

/* Rate-limited, unless the CFI registry saw a dlopen() since the last one. */
static bool refresh_allowed(void)
{
	return now_ns() - atomic_load(&last_refresh) >= REFRESH_NS ||
	       atomic_load(&maps_cfi_gen) != ust_lttng_cfi_gen();
}

void ust_lttng_objs_resolve(const uintptr_t *pc, int nr, uint64_t *off, uint64_t *ino,
			    uint32_t *kdev, uint32_t gen)
{
	bool refreshed = false;
	int i;

	for (i = 0; i < nr; i++) {
		if (lookup(pc[i], &off[i], &ino[i], &kdev[i], gen))
			continue;
		if (!refreshed && refresh_allowed()) {
			ust_lttng_objs_refresh();
			refreshed = true;
			if (lookup(pc[i], &off[i], &ino[i], &kdev[i], gen))
				continue;
		}
		if (!refreshed)
			atomic_store(&stale, 1);
		off[i] = pc[i];		/* raw, as the kernel does without a VMA */
		ino[i] = 0;
		kdev[i] = 0;
	}
}

void ust_lttng_objs_describe(uintptr_t addr, uint32_t gen)
{
	unsigned int ver;
	const struct table *t;
	const struct obj *o;

	if (!lttng_ust_tracepoint_enabled(ustitch, object))
		return;
	t = begin_read(&ver);
	if (!t || !(o = find_obj(t, addr)))
		return;
	emit_obj(t, o, gen);
}
