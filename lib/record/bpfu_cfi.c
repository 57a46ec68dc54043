// SPDX-License-Identifier: LGPL-2.1
/*
 * Unwind tables for the BPF walk: tables come from lib/cfi/ (by build-id,
 * from memory or the disk cache when built before) and go into two maps:
 * the rows into one mmap()ed array, the file's slice of it into
 * ust_bpfu_cfi_files under the file's (inode, kernel dev_t).  Rows first,
 * then the file entry (a syscall, so a barrier): the walk never sees a
 * half-written table.
 *
 * Files with the same build-id (one library seen through two inodes, e.g.
 * a container's copy) share one slice.  Rows are never freed: a recording
 * maps a bounded set of files, and opts.cfi_rows bounds the total.
 *
 * Tables are loaded and built on worker threads (bpfu_pool.c): a build
 * takes up to ~400 ms (cc1plus), during which the thread reading the BPF
 * ring would otherwise read nothing, its ring would fill and the walks
 * meanwhile could not park.  The reader only opens the file (while the
 * process that mapped it lives) and queues it; a worker loads the table
 * and places it, rows then entry as above.  c->lock guards what both
 * touch: the row count, the placed and known tables, the files in flight
 * and the statistics; lib/cfi's cache guards itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <elf.h>
#include <bpf/bpf.h>

#include "ustitch/bpfu.h"
#include "ustitch/cfi.h"
#include "ustitch/hmap.h"
#include "ustitch/ldso.h"
#include "ustitch/maps.h"
#include "ustitch/resolve.h"
#include "bpfu_cfi.h"
#include "bpfu_pool.h"

/* An array map's elements are 8-byte aligned: a row's slot, 16 bytes as the row is. */
#define ROW_STRIDE	((sizeof(struct ust_cfi_row) + 7) & ~(size_t)7)

/* Tables of fewer rows have no index (a search of them takes 8 steps at most). */
#define INDEX_MIN_ROWS	256

/* A file the walk asked for and that could not be opened: asked again up to this often. */
#define CFI_MAX_TRIES	3

struct ust_bpfu_cfi {
	pthread_mutex_t lock;
	struct ust_bpfu_pool *pool;	/* the workers that load tables */
	int rows_fd;
	int files_fd;
	unsigned char *rows;		/* the array map, mmap()ed: ROW_STRIDE bytes a row */
	size_t map_bytes;
	struct ust_cfi_cache *cache;
	struct ust_hmap placed;		/* table pointer -> its first row */
	struct ust_hmap tries;		/* key hash -> failed attempts */
	/* key hash -> struct known *: the tables of files, for walks finished here (bpfu_park.c) */
	struct ust_hmap known;
	struct ust_hmap inflight;	/* key hash -> 1: queued or loading */
	struct ust_res *res;		/* files of processes gone: by (dev, inode) */
	struct ust_bpfu_cfi_stats st;
};

struct known {
	struct ust_bpfu_cfi_key key;
	const struct ust_cfi_table *t;
	struct known *next;		/* same hash */
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t key_hash(const struct ust_bpfu_cfi_key *k)
{
	return ust_hmap_mix(k->ino ^ ust_hmap_mix((uint64_t)k->dev + 1));
}

struct ust_bpfu_cfi *ust_bpfu_cfi_new(int rows_fd, int files_fd, uint32_t cap,
				      char *err, size_t errsz)
{
	struct ust_bpfu_cfi *c = calloc(1, sizeof(*c));
	long page = sysconf(_SC_PAGESIZE);

	if (!c) {
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	c->rows_fd = rows_fd;
	c->files_fd = files_fd;
	c->st.cap = cap;
	c->map_bytes = ((size_t)cap * ROW_STRIDE + (size_t)page - 1) &
		       ~((size_t)page - 1);
	c->rows = mmap(NULL, c->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, rows_fd, 0);
	if (c->rows == MAP_FAILED) {
		snprintf(err, errsz, "mapping the unwind-table map: %s", strerror(errno));
		free(c);
		return NULL;
	}
	c->cache = ust_cfi_cache_new(NULL, NULL);
	if (!c->cache) {
		snprintf(err, errsz, "unwind-table cache: out of memory");
		munmap(c->rows, c->map_bytes);
		free(c);
		return NULL;
	}
	ust_hmap_init(&c->placed);
	ust_hmap_init(&c->tries);
	ust_hmap_init(&c->known);
	ust_hmap_init(&c->inflight);
	pthread_mutex_init(&c->lock, NULL);
	c->pool = ust_bpfu_pool_new(ust_bpfu_pool_default_threads());
	if (!c->pool) {
		snprintf(err, errsz, "unwind-table workers: out of memory");
		ust_bpfu_cfi_free(c);
		return NULL;
	}
	c->st.threads = ust_bpfu_pool_threads(c->pool);
	/* By handle or a live process's maps: no directory walks while recording.
	 * (USTITCH_TEST_NO_HANDLE: as on 9p, which has no file handles.) */
	c->res = ust_res_new(&(struct ust_res_opts){ .no_index = true, .no_local_dirs = true,
						     .no_archive = true,
						     .no_handle = getenv("USTITCH_TEST_NO_HANDLE") != NULL });
	return c;
}

void ust_bpfu_cfi_free(struct ust_bpfu_cfi *c)
{
	struct known *k, *next;
	uint64_t h, v;
	size_t pos;

	if (!c)
		return;
	/* First: no worker may place into what goes below. */
	ust_bpfu_pool_free(c->pool);
	munmap(c->rows, c->map_bytes);
	ust_cfi_cache_free(c->cache);
	ust_hmap_fini(&c->placed);
	ust_hmap_fini(&c->tries);
	for (pos = 0; ust_hmap_next(&c->known, &pos, &h, &v);) {
		for (k = (struct known *)(uintptr_t)v; k; k = next) {
			next = k->next;
			free(k);
		}
	}
	ust_hmap_fini(&c->known);
	ust_hmap_fini(&c->inflight);
	ust_res_free(c->res);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* Under c->lock. */
static void note_error(struct ust_bpfu_cfi *c, const char *what, const char *msg)
{
	c->st.failed++;
	snprintf(c->st.last_error, sizeof(c->st.last_error), "%s: %s", what, msg);
}

/*
 * The shape of @t's index (UST_BPFU_CFI_SHAPE(), ust_bpfu_abi.h): buckets
 * about half as many as the rows, so that a bucket brackets two or three
 * rows; 0 (none) for a table a search crosses in a few steps anyway.
 */
static uint32_t index_shape(const struct ust_cfi_table *t)
{
	uint64_t last, want;
	uint32_t shift = 4;

	if (t->nr_rows < INDEX_MIN_ROWS)
		return 0;
	last = t->rows[t->nr_rows - 1].off;
	want = t->nr_rows / 2;
	while (shift < 31 && (last >> shift) + 1 > want)
		shift++;
	if ((last >> shift) + 1 >= 1ULL << UST_BPFU_CFI_SHAPE_NB_BITS)
		return 0;
	return UST_BPFU_CFI_SHAPE(shift, (last >> shift) + 1);
}

/* The elements of the rows array an index of @shape takes: four entries each. */
static uint32_t index_elems(uint32_t shape)
{
	return (UST_BPFU_CFI_SHAPE_NB(shape) + 3) / 4;
}

_Static_assert(ROW_STRIDE == 4 * sizeof(uint32_t), "an element of the rows array holds four index entries");

/* @t's index, of @shape, into the rows array from element @at. */
static void put_index(struct ust_bpfu_cfi *c, uint32_t at, const struct ust_cfi_table *t,
		      uint32_t shape)
{
	uint32_t shift = UST_BPFU_CFI_SHAPE_SHIFT(shape), nb = UST_BPFU_CFI_SHAPE_NB(shape);
	uint32_t b, j = 0, v;

	for (b = 0; b < nb; b++) {
		while (j < t->nr_rows && t->rows[j].off <= (uint64_t)b << shift)
			j++;
		v = j ? j - 1 : UST_BPFU_CFI_IDX_NONE;
		memcpy(c->rows + (size_t)(at + b / 4) * ROW_STRIDE + (b % 4) * sizeof(v), &v, sizeof(v));
	}
}

/*
 * @key's entry: @t's rows at @first, then its index (or, @t NULL, no
 * table, as @state says).  Under c->lock: the entry is a syscall, the
 * barrier after the rows written before it.
 */
static int set_file(struct ust_bpfu_cfi *c, const struct ust_bpfu_cfi_key *key,
		    enum ust_bpfu_cfi_state state, uint32_t first, const struct ust_cfi_table *t)
{
	struct ust_bpfu_cfi_file f = { .state = state };

	if (t) {
		f.first = first;
		f.nr = t->nr_rows;
		f.shape = index_shape(t);
		f.idx = first + t->nr_rows;
	}
	if (bpf_map_update_elem(c->files_fd, key, &f, BPF_ANY))
		return -errno;
	if (state == UST_BPFU_CFI_READY)
		c->st.files++;
	else
		c->st.files_none++;
	return 0;
}

static void set_file_locked(struct ust_bpfu_cfi *c, const struct ust_bpfu_cfi_key *key,
			    enum ust_bpfu_cfi_state state)
{
	pthread_mutex_lock(&c->lock);
	set_file(c, key, state, 0, NULL);
	pthread_mutex_unlock(&c->lock);
}

/* Under c->lock. */
static struct known *find_known(const struct ust_bpfu_cfi *c, const struct ust_bpfu_cfi_key *key)
{
	struct known *k = NULL;
	uint64_t v;

	if (ust_hmap_get(&c->known, key_hash(key), &v))
		k = (struct known *)(uintptr_t)v;
	for (; k; k = k->next)
		if (k->key.ino == key->ino && k->key.dev == key->dev)
			return k;
	return NULL;
}

/*
 * @key's table as the recorder holds it, whether or not the map has room
 * for it: a walk the BPF side parked is finished with it (bpfu_park.c).
 * Under c->lock.
 */
static void remember(struct ust_bpfu_cfi *c, const struct ust_bpfu_cfi_key *key,
		     const struct ust_cfi_table *t)
{
	struct known *k = find_known(c, key), *head = NULL;
	uint64_t v;

	if (k) {
		k->t = t;
		return;
	}
	k = calloc(1, sizeof(*k));
	if (!k)
		return;		/* such a walk goes on by frame pointers */
	k->key.ino = key->ino;
	k->key.dev = key->dev;
	k->t = t;
	if (ust_hmap_get(&c->known, key_hash(key), &v))
		head = (struct known *)(uintptr_t)v;
	k->next = head;
	if (ust_hmap_put(&c->known, key_hash(key), (uint64_t)(uintptr_t)k))
		free(k);
}

int ust_bpfu_cfi_table_of(struct ust_bpfu_cfi *c, uint32_t dev, uint64_t ino,
			  const struct ust_cfi_table **t)
{
	struct ust_bpfu_cfi_key key = { .ino = ino, .dev = dev };
	struct ust_bpfu_cfi_file f;
	struct known *k;

	pthread_mutex_lock(&c->lock);
	k = find_known(c, &key);
	*t = k ? k->t : NULL;
	pthread_mutex_unlock(&c->lock);
	if (*t)
		return UST_BPFU_CFI_READY;
	if (bpf_map_lookup_elem(c->files_fd, &key, &f))
		return -ENOENT;
	/* READY in the map but not known here cannot be: memory ran out; so NONE. */
	return f.state == UST_BPFU_CFI_PENDING ? UST_BPFU_CFI_PENDING : UST_BPFU_CFI_NONE;
}

/*
 * @t's rows in the array (once per table) and their index, then @key's
 * entry.  The rows are reserved under the lock and copied without it:
 * the reader, asking for a table meanwhile, does not wait for cc1plus's
 * 11 MB.  Nobody reads them before the entry that names them.
 */
static int place(struct ust_bpfu_cfi *c, const struct ust_bpfu_cfi_key *key,
		 const struct ust_cfi_table *t)
{
	uint32_t first, i, shape;
	uint64_t v, need;
	int ret;

	pthread_mutex_lock(&c->lock);
	if (!t->nr_rows) {
		ret = set_file(c, key, UST_BPFU_CFI_NONE, 0, NULL);
		goto out;
	}
	remember(c, key, t);
	if (ust_hmap_get(&c->placed, (uint64_t)(uintptr_t)t, &v)) {
		ret = set_file(c, key, UST_BPFU_CFI_READY, (uint32_t)v, t);
		goto out;
	}
	shape = index_shape(t);
	need = (uint64_t)t->nr_rows + index_elems(shape);
	if (need > c->st.cap - c->st.rows) {
		c->st.full++;
		snprintf(c->st.last_error, sizeof(c->st.last_error),
			 "unwind tables: %" PRIu64 " rows more do not fit the %" PRIu32
			 " rows of the table map (frame pointers for that file)", need, c->st.cap);
		ret = set_file(c, key, UST_BPFU_CFI_NONE, 0, NULL);
		goto out;
	}
	first = c->st.rows;
	c->st.rows += (uint32_t)need;
	pthread_mutex_unlock(&c->lock);
	for (i = 0; i < t->nr_rows; i++)
		memcpy(c->rows + (size_t)(first + i) * ROW_STRIDE, &t->rows[i], sizeof(t->rows[i]));
	put_index(c, first + t->nr_rows, t, shape);
	pthread_mutex_lock(&c->lock);
	/* Not kept (out of memory): a file of the same build-id takes a copy of its own. */
	ust_hmap_put(&c->placed, (uint64_t)(uintptr_t)t, first);
	ret = set_file(c, key, UST_BPFU_CFI_READY, first, t);
out:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/*
 * Test aid: USTITCH_TEST_TABLE_DELAY=MS:NAME makes the tables of files
 * named NAME asked for while recording (a walk's NEED_CFI, an executable
 * mmap's, an exec's program and libraries) come MS ms late, so that a
 * test can rely on walks meeting that file without its table
 * (tests/live/cfi: walks parked, finished by the recorder).  @path: the
 * file, or a link to it.  Slept on the worker that loads it.
 */
static void test_delay(const char *path)
{
	const char *v = getenv("USTITCH_TEST_TABLE_DELAY"), *name, *base;
	char real[4096];
	ssize_t n;
	char *end;
	long ms;

	if (!v || !*v)
		return;
	ms = strtol(v, &end, 10);
	if (*end != ':' || ms <= 0 || ms > 10000)
		return;
	name = end + 1;
	n = readlink(path, real, sizeof(real) - 1);
	if (n > 0) {
		real[n] = '\0';
		path = real;
	}
	base = strrchr(path, '/');
	if (strcmp(base ? base + 1 : path, name) != 0)
		return;
	nanosleep(&(struct timespec){ .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L }, NULL);
}

/* The table of the file @path (already checked to be @key's), placed.  On a worker. */
static int load(struct ust_bpfu_cfi *c, const struct ust_bpfu_cfi_key *key, const char *path,
		const char *what)
{
	const struct ust_cfi_table *t;
	struct ust_cfi_cache_stats cs;
	char err[200];
	double t0 = now_ms(), ms;
	int ret;

	ret = ust_cfi_cache_get_path(c->cache, path, &t, err, sizeof(err));
	if (ret < 0) {
		pthread_mutex_lock(&c->lock);
		note_error(c, what, err);
		/* Not ELF, corrupt: frame pointers for it, and no more asking. */
		set_file(c, key, UST_BPFU_CFI_NONE, 0, NULL);
		pthread_mutex_unlock(&c->lock);
	} else {
		ret = place(c, key, t);
	}
	ust_cfi_cache_stats(c->cache, &cs);
	ms = now_ms() - t0;
	pthread_mutex_lock(&c->lock);
	c->st.builds = cs.builds;
	c->st.disk_loads = cs.disk_loads;
	c->st.load_ms += ms;
	if (ms > c->st.longest_ms)
		c->st.longest_ms = ms;
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/* A table to load on a worker: the file by @path, or open as @fd (/proc/self/fd/N). */
struct job {
	struct ust_bpfu_cfi *c;
	struct ust_bpfu_cfi_key key;
	int fd;			/* -1: none */
	bool delay;		/* asked for while recording: test_delay() applies */
	const char *what;	/* the file, as errors name it (after path[]) */
	char path[];
};

static void run_job(void *arg, bool run)
{
	struct job *j = arg;
	struct ust_bpfu_cfi *c = j->c;

	if (run) {
		if (j->delay)
			test_delay(j->path);
		load(c, &j->key, j->path, j->what);
	}
	/* After the entry is set: have_key() or in flight, never neither. */
	pthread_mutex_lock(&c->lock);
	ust_hmap_put(&c->inflight, key_hash(&j->key), 0);
	pthread_mutex_unlock(&c->lock);
	if (j->fd >= 0)
		close(j->fd);
	free(j);
}

/*
 * @key's table from @path queued for a worker, unless it is queued or
 * loading already (an exec's library a walk asks for too).  @fd (or -1)
 * is closed once loaded.  0 or -ENOMEM.
 */
static int queue(struct ust_bpfu_cfi *c, const struct ust_bpfu_cfi_key *key, const char *path,
		 int fd, const char *what, bool delay)
{
	size_t len = strlen(path) + 1, wlen = strlen(what) + 1;
	struct job *j;
	uint64_t busy = 0;

	pthread_mutex_lock(&c->lock);
	ust_hmap_get(&c->inflight, key_hash(key), &busy);
	if (!busy && ust_hmap_put(&c->inflight, key_hash(key), 1))
		busy = 2;	/* no memory to say so: not queued */
	pthread_mutex_unlock(&c->lock);
	if (busy) {
		if (fd >= 0)
			close(fd);
		return busy == 2 ? -ENOMEM : 0;
	}
	j = calloc(1, sizeof(*j) + len + wlen);
	if (!j) {
		if (fd >= 0)
			close(fd);
		pthread_mutex_lock(&c->lock);
		ust_hmap_put(&c->inflight, key_hash(key), 0);
		pthread_mutex_unlock(&c->lock);
		return -ENOMEM;
	}
	j->c = c;
	j->key = *key;
	j->fd = fd;
	j->delay = delay;
	memcpy(j->path, path, len);
	j->what = memcpy(j->path + len, what, wlen);
	if (ust_bpfu_pool_submit(c->pool, run_job, j)) {
		run_job(j, false);
		return -ENOMEM;
	}
	return 0;
}

static bool have_key(const struct ust_bpfu_cfi *c, const struct ust_bpfu_cfi_key *key)
{
	struct ust_bpfu_cfi_file f;

	return !bpf_map_lookup_elem(c->files_fd, key, &f) && f.state != UST_BPFU_CFI_PENDING;
}

static int add_path(struct ust_bpfu_cfi *c, const char *path, bool delay)
{
	struct ust_bpfu_cfi_key key = { 0 };
	struct stat st;

	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	key.ino = st.st_ino;
	key.dev = ust_res_dev_to_kdev(st.st_dev);
	if (have_key(c, &key))
		return 0;
	return queue(c, &key, path, -1, path, delay);
}

int ust_bpfu_cfi_add_path(struct ust_bpfu_cfi *c, const char *path)
{
	return add_path(c, path, false);
}

/*
 * /proc/TGID/map_files/START-END opens the mapped file itself, whatever
 * its path (deleted, renamed, in another mount namespace); its (dev,
 * inode) is checked against what the walk saw.  Opened here, while the
 * process lives: the worker reads it through /proc/self/fd.
 */
void ust_bpfu_cfi_need(struct ust_bpfu_cfi *c, const struct ust_bpfu_rec_need *n)
{
	struct ust_bpfu_cfi_key key = { .ino = n->ino, .dev = n->dev };
	char path[96], what[128];
	uint64_t tries = 0;
	struct stat st;
	int fd;

	pthread_mutex_lock(&c->lock);
	c->st.asked++;
	if (n->why == UST_BPFU_NEED_MMAP)
		c->st.asked_mmap++;
	pthread_mutex_unlock(&c->lock);
	if (n->ino == UST_BPFU_CFI_VDSO_INO) {
		/* A few dozen rows of our own memory: here and now. */
		if (ust_bpfu_cfi_add_vdso(c) < 0)
			set_file_locked(c, &key, UST_BPFU_CFI_NONE);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", n->h.tgid,
		 (unsigned long long)n->vm_start, (unsigned long long)n->vm_end);
	snprintf(what, sizeof(what), "dev %u:%u ino %llu (pid %u)", n->dev >> 20,
		 n->dev & 0xfffff, (unsigned long long)n->ino, n->h.tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || st.st_ino != n->ino ||
	    ust_res_dev_to_kdev(st.st_dev) != n->dev) {
		struct ust_res_hit hit;

		if (fd >= 0)
			close(fd);
		/*
		 * The process is gone (a command run by a script lives a
		 * millisecond), its file is not: opened by its (dev, inode),
		 * the next process of that program has its table.
		 */
		if (c->res && !ust_res_lookup(c->res, n->dev, n->ino, &hit) && hit.path &&
		    !stat(hit.path, &st) && st.st_ino == n->ino &&
		    ust_res_dev_to_kdev(st.st_dev) == n->dev) {
			queue(c, &key, hit.path, -1, what, true);
			return;
		}
		/* Gone already (the mapping, the process): let a later walk ask again. */
		ust_hmap_get(&c->tries, key_hash(&key), &tries);
		ust_hmap_put(&c->tries, key_hash(&key), tries + 1);
		if (tries + 1 >= CFI_MAX_TRIES) {
			pthread_mutex_lock(&c->lock);
			note_error(c, what, "the mapped file could not be opened");
			set_file(c, &key, UST_BPFU_CFI_NONE, 0, NULL);
			pthread_mutex_unlock(&c->lock);
		} else {
			bpf_map_delete_elem(c->files_fd, &key);
		}
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (queue(c, &key, path, fd, what, true) < 0)
		/* Nobody will answer: let the next walk ask again. */
		bpf_map_delete_elem(c->files_fd, &key);
}

static int add_one_now(const char *path, void *ctx)
{
	return add_path(ctx, path, true);
}

void ust_bpfu_cfi_exec(struct ust_bpfu_cfi *c, const char *path)
{
	ust_ldso_deps(path, add_one_now, c);
}

int ust_bpfu_cfi_add_pid(struct ust_bpfu_cfi *c, pid_t pid)
{
	char path[64], line[4352];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct ust_maps_ent e;

		if (ust_maps_parse(line, &e) || !e.ino || !e.exec || e.path[0] != '/')
			continue;
		if (ust_bpfu_cfi_add_path(c, e.path) == 0)
			n++;
	}
	fclose(f);
	return n;	/* the vDSO's table went in when the maps were made */
}

static int add_one(const char *path, void *ctx)
{
	return ust_bpfu_cfi_add_path(ctx, path);
}

int ust_bpfu_cfi_add_program(struct ust_bpfu_cfi *c, const char *path)
{
	int ret = ust_ldso_deps(path, add_one, c);

	return ret < 0 ? ret : 0;
}

bool ust_bpfu_cfi_wait(struct ust_bpfu_cfi *c, int timeout_ms)
{
	return ust_bpfu_pool_wait(c->pool, timeout_ms);
}

unsigned int ust_bpfu_cfi_busy(struct ust_bpfu_cfi *c)
{
	return ust_bpfu_pool_busy(c->pool);
}

/* The vDSO image: the ELF at AT_SYSINFO_EHDR, as long as its last segment. */
int ust_bpfu_cfi_add_vdso(struct ust_bpfu_cfi *c)
{
	struct ust_bpfu_cfi_key key = { .ino = UST_BPFU_CFI_VDSO_INO };
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	const struct ust_cfi_table *t;
	const Elf64_Phdr *ph;
	size_t size = 0;
	char err[200];
	int i, ret;

	if (have_key(c, &key))
		return 0;
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOENT;
	ph = (const void *)((const char *)eh + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > size)
			size = ph[i].p_offset + ph[i].p_filesz;
	if (eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize > size)
		size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	ret = ust_cfi_cache_get_mem(c->cache, eh, size, &t, err, sizeof(err));
	if (ret < 0) {
		pthread_mutex_lock(&c->lock);
		note_error(c, "vDSO", err);
		pthread_mutex_unlock(&c->lock);
		return ret;
	}
	return place(c, &key, t);
}

void ust_bpfu_cfi_get_stats(struct ust_bpfu_cfi *c, struct ust_bpfu_cfi_stats *st)
{
	pthread_mutex_lock(&c->lock);
	*st = c->st;
	pthread_mutex_unlock(&c->lock);
}
