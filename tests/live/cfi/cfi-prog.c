// SPDX-License-Identifier: LGPL-2.1
/*
 * cfi-prog: the workload of the live CFI-unwinding tests.  Built
 * -O2 -fomit-frame-pointer (no frame-pointer chain anywhere: the stacks can
 * only be walked by .eh_frame), with lazy binding for its library.  Each
 * scenario is an exact, deterministic chain of noinline functions ending in
 * a system call of its own, so that a recording of that one system call
 * selects the scenario's events.  expected/SCENARIO.txt holds the chains.
 *
 *   leaf          cfi_leaf_a -> _b -> _c: raw getppid in the frameless leaf
 *   qsort         qsort comparator (called inside libc): raw getpgid
 *   bsearch       bsearch comparator (called inside libc): raw getsid
 *   sig-raise     handler of raise(SIGUSR1): raw getuid, then __restore_rt
 *   sig-thread    handler of a pthread_kill() from another thread, which
 *                 interrupts cfi_spin: raw getgid
 *   sig-altstack  handler on a sigaltstack, kill(getpid()): raw geteuid
 *   thread        a thread: cfi_thr_a -> _b -> sched_yield(), bottom
 *                 start_thread, clone3
 *   plt           cfi-lib through the PLT, lazily bound: getpriority
 *   plt-resolve   an IFUNC in cfi-lib whose resolver runs under ld.so's
 *                 _dl_runtime_resolve: raw getegid
 *   recursion     cfi_rec 200 deep: raw getpgrp (cut at 127 frames)
 *   bigframe      a 64 KiB local buffer mid-chain: raw times
 *   deep40        cfi_deep01 -> ... -> cfi_deep40: raw sched_getscheduler
 *   dlopen        dlopen() libcfi-dl.so (beside the program, not linked),
 *                 then at once its cfi_dl_entry -> _b -> _c: raw getresuid
 *
 * usage: cfi-prog SCENARIO [rounds [linger-ms]]   (rounds: default 3; linger-ms:
 *        how long to stay alive after them, default 0)
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfi-lib.h"
#include "cfi-sys.h"

volatile long cfi_sink;

/* ---- leaf: the top function has no frame at all ---------------------- */
CFI_FN void cfi_leaf_c(void)
{
	cfi_sink += cfi_sys0(SYS_getppid);
}

CFI_FN void cfi_leaf_b(void)
{
	cfi_leaf_c();
	cfi_sink++;
}

CFI_FN void cfi_leaf_a(void)
{
	cfi_leaf_b();
	cfi_sink++;
}

CFI_FN void sc_leaf(int rounds)
{
	for (int i = 0; i < rounds; i++)
		cfi_leaf_a();
}

/* ---- qsort / bsearch: comparators called from inside libc ------------ */
CFI_FN int cfi_qsort_cmp(const void *a, const void *b)
{
	cfi_sink += cfi_sys2(SYS_getpgid, 0, 0);
	return *(const int *)a - *(const int *)b;
}

CFI_FN void cfi_qsort_a(void)
{
	int v[2] = { 2, 1 };	/* two elements: exactly one comparison */

	qsort(v, 2, sizeof(v[0]), cfi_qsort_cmp);
	cfi_sink += v[0];
}

CFI_FN void sc_qsort(int rounds)
{
	for (int i = 0; i < rounds; i++)
		cfi_qsort_a();
}

CFI_FN int cfi_bsearch_cmp(const void *key, const void *elem)
{
	cfi_sink += cfi_sys2(SYS_getsid, 0, 0);
	return *(const int *)key - *(const int *)elem;
}

/* Through a pointer: with optimization, <stdlib.h> would inline bsearch
 * into the caller and the comparator would not be called from libc. */
void *(*volatile cfi_bsearch_fn)(const void *, const void *, size_t, size_t,
				 int (*)(const void *, const void *)) = bsearch;

CFI_FN void cfi_bsearch_a(void)
{
	static const int v[1] = { 7 };	/* one element: exactly one comparison */
	int key = 7;

	cfi_sink += cfi_bsearch_fn(&key, v, 1, sizeof(v[0]), cfi_bsearch_cmp) != NULL;
}

CFI_FN void sc_bsearch(int rounds)
{
	for (int i = 0; i < rounds; i++)
		cfi_bsearch_a();
}

/* ---- signal handlers ------------------------------------------------- */
static void on(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL)) {
		perror("sigaction");
		exit(1);
	}
}

CFI_FN void cfi_on_raise(int sig)
{
	cfi_sink += sig + cfi_sys0(SYS_getuid);
}

CFI_FN void cfi_raise_b(void)
{
	raise(SIGUSR1);
	cfi_sink++;
}

CFI_FN void cfi_raise_a(void)
{
	cfi_raise_b();
	cfi_sink++;
}

CFI_FN void sc_sig_raise(int rounds)
{
	on(SIGUSR1, cfi_on_raise, 0);
	for (int i = 0; i < rounds; i++)
		cfi_raise_a();
}

/* sig-thread: another thread signals this one while it spins in cfi_spin
 * (interrupted at an arbitrary instruction, not at a call). */
static volatile int cfi_spinning, cfi_sig_done;
static pthread_t cfi_main_thread;

CFI_FN void cfi_on_sigthr(int sig)
{
	cfi_sink += sig + cfi_sys0(SYS_getgid);
	cfi_sig_done = 1;
}

CFI_FN void cfi_spin(void)
{
	cfi_spinning = 1;
	while (!cfi_sig_done)
		;
}

CFI_FN void cfi_sigthr_b(void)
{
	cfi_spin();
	cfi_sink++;
}

CFI_FN void cfi_sigthr_a(void)
{
	cfi_sigthr_b();
	cfi_sink++;
}

static void *cfi_killer(void *arg)
{
	(void)arg;
	while (!cfi_spinning)
		__builtin_ia32_pause();
	pthread_kill(cfi_main_thread, SIGUSR1);
	return NULL;
}

CFI_FN void sc_sig_thread(int rounds)
{
	pthread_t t;

	on(SIGUSR1, cfi_on_sigthr, 0);
	cfi_main_thread = pthread_self();
	for (int i = 0; i < rounds; i++) {
		cfi_spinning = 0;
		cfi_sig_done = 0;
		if (pthread_create(&t, NULL, cfi_killer, NULL)) {
			fprintf(stderr, "pthread_create failed\n");
			exit(1);
		}
		cfi_sigthr_a();
		pthread_join(t, NULL);
	}
}

/* sig-altstack: the handler runs on its own stack, away from the
 * interrupted frames. */
static char cfi_altstack[64 * 1024] __attribute__((aligned(64)));

CFI_FN void cfi_on_alt(int sig)
{
	cfi_sink += sig + cfi_sys0(SYS_geteuid);
}

CFI_FN void cfi_alt_b(void)
{
	kill(getpid(), SIGUSR1);
	cfi_sink++;
}

CFI_FN void cfi_alt_a(void)
{
	cfi_alt_b();
	cfi_sink++;
}

CFI_FN void sc_sig_altstack(int rounds)
{
	stack_t ss = { .ss_sp = cfi_altstack, .ss_size = sizeof(cfi_altstack) };

	if (sigaltstack(&ss, NULL)) {
		perror("sigaltstack");
		exit(1);
	}
	on(SIGUSR1, cfi_on_alt, SA_ONSTACK);
	for (int i = 0; i < rounds; i++)
		cfi_alt_a();
}

/* ---- thread ---------------------------------------------------------- */
CFI_FN void cfi_thr_b(void)
{
	sched_yield();
	cfi_sink++;
}

CFI_FN void cfi_thr_a(void)
{
	cfi_thr_b();
	cfi_sink++;
}

CFI_FN void *cfi_thread_fn(void *arg)
{
	int rounds = *(int *)arg;

	for (int i = 0; i < rounds; i++)
		cfi_thr_a();
	return NULL;
}

CFI_FN void sc_thread(int rounds)
{
	pthread_t t;

	if (pthread_create(&t, NULL, cfi_thread_fn, &rounds)) {
		fprintf(stderr, "pthread_create failed\n");
		exit(1);
	}
	pthread_join(t, NULL);
}

/* ---- PLT ------------------------------------------------------------- */
CFI_FN void cfi_plt_a(void)
{
	cfi_lib_entry();	/* the first call binds it lazily */
	cfi_sink++;
}

CFI_FN void sc_plt(int rounds)
{
	for (int i = 0; i < rounds; i++)
		cfi_plt_a();
}

CFI_FN void cfi_resolve_a(void)
{
	cfi_lib_ifunc();	/* the first call runs the resolver under ld.so */
	cfi_sink++;
}

CFI_FN void sc_plt_resolve(int rounds)
{
	for (int i = 0; i < rounds; i++)
		cfi_resolve_a();
}

/* ---- recursion deeper than 127 frames --------------------------------- */
CFI_FN long cfi_rec(int n)
{
	long r = n ? cfi_rec(n - 1) : cfi_sys0(SYS_getpgrp);

	cfi_sink++;	/* after the call: no tail call, no loop */
	return r + 1;
}

CFI_FN void sc_recursion(int rounds)
{
	for (int i = 0; i < rounds; i++)
		cfi_sink += cfi_rec(199);	/* 200 frames of cfi_rec */
}

/* ---- a 64 KiB frame mid-chain ------------------------------------------ */
CFI_FN void cfi_big_c(const volatile char *buf)
{
	cfi_sink += buf[0] + cfi_sys2(SYS_times, 0, 0);
}

CFI_FN void cfi_big_b(void)
{
	volatile char buf[64 * 1024];

	for (size_t i = 0; i < sizeof(buf); i += 64)
		buf[i] = (char)i;
	cfi_big_c(buf);
	cfi_sink += buf[4096];
}

CFI_FN void cfi_big_a(void)
{
	cfi_big_b();
	cfi_sink++;
}

CFI_FN void sc_bigframe(int rounds)
{
	for (int i = 0; i < rounds; i++)
		cfi_big_a();
}

/* ---- 40 distinct frames ------------------------------------------------ */
CFI_FN void cfi_deep40(void)
{
	cfi_sink += cfi_sys2(SYS_sched_getscheduler, 0, 0);
}

#define DEEP(n, next)			\
	CFI_FN void cfi_deep##n(void)	\
	{				\
		cfi_deep##next();	\
		cfi_sink++;		\
	}
DEEP(39, 40) DEEP(38, 39) DEEP(37, 38) DEEP(36, 37) DEEP(35, 36)
DEEP(34, 35) DEEP(33, 34) DEEP(32, 33) DEEP(31, 32) DEEP(30, 31)
DEEP(29, 30) DEEP(28, 29) DEEP(27, 28) DEEP(26, 27) DEEP(25, 26)
DEEP(24, 25) DEEP(23, 24) DEEP(22, 23) DEEP(21, 22) DEEP(20, 21)
DEEP(19, 20) DEEP(18, 19) DEEP(17, 18) DEEP(16, 17) DEEP(15, 16)
DEEP(14, 15) DEEP(13, 14) DEEP(12, 13) DEEP(11, 12) DEEP(10, 11)
DEEP(09, 10) DEEP(08, 09) DEEP(07, 08) DEEP(06, 07) DEEP(05, 06)
DEEP(04, 05) DEEP(03, 04) DEEP(02, 03) DEEP(01, 02)

CFI_FN void sc_deep40(int rounds)
{
	for (int i = 0; i < rounds; i++)
		cfi_deep01();
}

/* ---- a library dlopen()ed while recording ------------------------------ */
static char cfi_dl_path[PATH_MAX];

CFI_FN void sc_dlopen(int rounds)
{
	char *path = cfi_dl_path;
	ssize_t n = readlink("/proc/self/exe", path, sizeof(cfi_dl_path) - 16);
	void (*entry)(int);
	char *slash;
	void *h;

	if (n <= 0 || !(path[n] = '\0', slash = strrchr(path, '/'))) {
		fprintf(stderr, "cfi-prog: /proc/self/exe: cannot read\n");
		exit(1);
	}
	strcpy(slash + 1, "libcfi-dl.so");
	h = dlopen(path, RTLD_NOW);
	entry = h ? (void (*)(int))dlsym(h, "cfi_dl_entry") : NULL;
	if (!entry) {
		fprintf(stderr, "cfi-prog: %s\n", dlerror());
		exit(1);
	}
	entry(rounds);
	/*
	 * Alive a while: a walk parked in the library (its table is built
	 * while the calls run) is finished by the recorder through our own
	 * and libc's frames, placed by our maps, which a recorder on a busy
	 * machine reads milliseconds late.
	 */
	usleep(300 * 1000);
	cfi_sink++;	/* after the call: no tail call */
}

static const struct {
	const char *name;
	void (*run)(int rounds);
} scenarios[] = {
	{ "leaf", sc_leaf },
	{ "qsort", sc_qsort },
	{ "bsearch", sc_bsearch },
	{ "sig-raise", sc_sig_raise },
	{ "sig-thread", sc_sig_thread },
	{ "sig-altstack", sc_sig_altstack },
	{ "thread", sc_thread },
	{ "plt", sc_plt },
	{ "plt-resolve", sc_plt_resolve },
	{ "recursion", sc_recursion },
	{ "bigframe", sc_bigframe },
	{ "deep40", sc_deep40 },
	{ "dlopen", sc_dlopen },
};

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 3;
	/* Alive that long after: a recorder late with a table still reads our maps. */
	int linger_ms = argc > 3 ? atoi(argv[3]) : 0;

	for (size_t i = 0; argc > 1 && i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (!strcmp(argv[1], scenarios[i].name)) {
			scenarios[i].run(rounds);
			cfi_sink++;
			if (linger_ms > 0)
				usleep((useconds_t)linger_ms * 1000);
			return 0;
		}
	fprintf(stderr, "usage: cfi-prog SCENARIO [rounds [linger-ms]]; scenarios:");
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		fprintf(stderr, " %s", scenarios[i].name);
	fprintf(stderr, "\n");
	return 2;
}
