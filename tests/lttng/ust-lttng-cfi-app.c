// SPDX-License-Identifier: LGPL-2.1
/*
 * ust-lttng-cfi-app: known call chains through code WITHOUT frame
 * pointers (it and its libraries are built -O2 -fomit-frame-pointer, as
 * Debian builds its packages); the tracepoint is in libustlt-cfi.so's
 * leaf cfi_emit().  Each chain has a tag:
 *
 *   1  main -> c_run -> c_locked -> cfi_emit, under cfi_lock
 *   2  a qsort() comparator: ... -> qsort (libc) -> c_cmp -> cfi_emit
 *   3  a signal handler: c_raise -> raise (libc) -> [signal frame]
 *      -> c_on_signal -> cfi_emit
 *   4  a thread: c_thread -> c_thread_work -> lib_entry -> lib_mid
 *      -> cfi_emit
 *   5  JIT code (an anonymous executable mapping with a frame pointer):
 *      c_jit -> [jit] -> c_jit_target -> cfi_emit
 *   6  dlopen(DL): c_dl -> dl_entry -> dl_mid -> cfi_emit; then dlclose,
 *      its old place taken, dlopen again elsewhere:
 *   7  the same chain at the new address
 *
 *   ust-lttng-cfi-app all DL   every chain once
 *   ust-lttng-cfi-app bench DEPTH N
 *                              N events at recursion depth DEPTH
 *                              (thread CPU ns per event)
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ust_lttng_cfi.h"

pthread_mutex_t cfi_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int first_cmp = 1;

CFI_NOINLINE static void c_locked(void)
{
	pthread_mutex_lock(&cfi_lock);
	cfi_emit(1, 1);
	pthread_mutex_unlock(&cfi_lock);
}

CFI_NOINLINE static int c_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (first_cmp) {
		first_cmp = 0;
		cfi_emit(2, 0);
	}
	return (x > y) - (x < y);
}

/*
 * libc's own qsort, found in libc: in the sanitized lane the preloaded
 * ASan runtime interposes one of its own, and the chain would differ.
 */
CFI_NOINLINE static void c_sort(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void (*libc_qsort)(void *, size_t, size_t, int (*)(const void *, const void *));
	int v[2] = { 2, 1 };

	libc_qsort = libc ? (void (*)(void *, size_t, size_t, int (*)(const void *, const void *)))
			    dlsym(libc, "qsort") : NULL;
	if (!libc_qsort)
		libc_qsort = qsort;
	libc_qsort(v, 2, sizeof(v[0]), c_cmp);
	if (libc)
		dlclose(libc);
	cfi_sink += v[0];
}

CFI_NOINLINE static void c_on_signal(int signo)
{
	cfi_emit(3, signo);
	cfi_sink++;
}

CFI_NOINLINE static void c_raise(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = c_on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	cfi_sink++;
}

CFI_NOINLINE static void c_thread_work(void)
{
	lib_entry(4);
	cfi_sink++;
}

CFI_NOINLINE static void *c_thread(void *arg)
{
	c_thread_work();
	cfi_sink++;
	return arg;
}

CFI_NOINLINE static void c_jit_target(void)
{
	cfi_emit(5, 0);
	cfi_sink++;
}

/* push %rbp; mov %rsp,%rbp; call *%rdi; pop %rbp; ret */
static const unsigned char jit_code[] = { 0x55, 0x48, 0x89, 0xe5, 0xff, 0xd7, 0x5d, 0xc3 };

CFI_NOINLINE static int c_jit(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void (*fn)(void (*)(void));

	if (p == MAP_FAILED)
		return 1;
	memcpy(p, jit_code, sizeof(jit_code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 1;
	fn = (void (*)(void (*)(void)))p;
	fn(c_jit_target);
	cfi_sink++;
	munmap(p, 4096);
	return 0;
}

/* Where the library's first segment was loaded, and how long it all is. */
static int dl_range(void *h, uintptr_t *lo, size_t *len)
{
	struct link_map *lm;
	const ElfW(Ehdr) *eh;
	const ElfW(Phdr) *ph;
	uintptr_t hi = 0;
	int i;

	if (dlinfo(h, RTLD_DI_LINKMAP, &lm))
		return -1;
	eh = (const void *)lm->l_addr;	/* the first PT_LOAD maps the ELF header at vaddr 0 */
	ph = (const void *)(lm->l_addr + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr + ph[i].p_memsz > hi)
			hi = ph[i].p_vaddr + ph[i].p_memsz;
	*lo = lm->l_addr;
	*len = (hi + 4095) & ~(uintptr_t)4095;
	return 0;
}

CFI_NOINLINE static int c_dl(const char *path, int tag)
{
	void *h = dlopen(path, RTLD_NOW);
	void (*entry)(int);

	if (!h) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		return -1;
	}
	entry = (void (*)(int))dlsym(h, "dl_entry");
	if (!entry)
		return -1;
	entry(tag);
	cfi_sink++;
	if (tag == 6) {
		uintptr_t lo;
		size_t len;

		/* Unload it, and take its place so that it comes back elsewhere. */
		if (dl_range(h, &lo, &len) || dlclose(h))
			return -1;
		if (mmap((void *)lo, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0) != (void *)lo)
			return -1;
	}
	return 0;
}

CFI_NOINLINE static int c_run(const char *dl)
{
	pthread_t th;

	c_locked();
	c_sort();
	c_raise();
	if (pthread_create(&th, NULL, c_thread, NULL) || pthread_join(th, NULL))
		return 1;
	if (c_jit())
		return 1;
	if (c_dl(dl, 6) || c_dl(dl, 7))
		return 1;
	cfi_sink++;
	return 0;
}

/* --- bench ------------------------------------------------------------- */

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

CFI_NOINLINE static void c_bench_loop(int n)
{
	for (int i = 0; i < n; i++)
		cfi_emit(0, i);
}

CFI_NOINLINE static void c_bench_at(int depth, int n)
{
	if (depth > 1)
		c_bench_at(depth - 1, n);
	else
		c_bench_loop(n);
	cfi_sink++;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "all")) {
		int ret = c_run(argv[2]);

		cfi_sink++;	/* no tail call: main stays on the stack */
		return ret;
	}
	if (argc >= 4 && !strcmp(argv[1], "bench")) {
		int n = atoi(argv[3]);
		long long t0 = now_ns();

		c_bench_at(atoi(argv[2]), n);
		printf("%.1f\n", (double)(now_ns() - t0) / n);
		return 0;
	}
	fprintf(stderr, "usage: %s all DL | bench DEPTH N\n", argv[0]);
	return 2;
}
