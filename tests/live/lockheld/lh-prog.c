// SPDX-License-Identifier: LGPL-2.1
/*
 * The lock_held() live tests' workload: phases whose lock state is known,
 * each ended by a getppid() marker (recorded through ftrace, so the test
 * can tell the phases apart by time):
 *
 *   1 A  touch fresh anonymous pages: faults under the VMA lock, no
 *        mmap_lock (the region's first fault, which may take mmap_lock to
 *        set up the anon_vma, happens before marker 1)
 *   2 B  madvise(MADV_POPULATE_WRITE): the same page allocations under
 *        mmap_read_lock()
 *   3 C  mmap() + munmap(): mmap_write_lock()
 *   4 D  signals: kill() to itself (signal_generate under rcu_read_lock(),
 *        in kill_pid_info()), and SIGSEGV from a write to a PROT_NONE page
 *        (raised by the page fault handler, outside any RCU read section)
 *   5    end
 *
 * usage: lh-prog [pages]
 */
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define ROUNDS 8

static sigjmp_buf jb;
static volatile sig_atomic_t usr1;

static void marker(void)
{
	syscall(SYS_getppid);
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(jb, 1);
}

int main(int argc, char **argv)
{
	long pages = argc > 1 ? atol(argv[1]) : 64, pg = sysconf(_SC_PAGESIZE), i;
	size_t len = (size_t)(pages + 1) * (size_t)pg;
	struct sigaction sa;
	char *a, *b, *guard;

	a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	guard = mmap(NULL, (size_t)pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || b == MAP_FAILED || guard == MAP_FAILED)
		return 1;
	madvise(a, len, MADV_NOHUGEPAGE);
	madvise(b, len, MADV_NOHUGEPAGE);
	a[0] = 1;		/* the anon_vma: set up outside phase A */
	b[0] = 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_segv;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);

	marker();		/* 1: phase A */
	for (i = 1; i <= pages; i++)
		a[i * pg] = 1;
	marker();		/* 2: phase B */
	if (madvise(b + pg, (size_t)(pages * pg), MADV_POPULATE_WRITE))
		return 2;
	marker();		/* 3: phase C */
	for (i = 0; i < ROUNDS; i++) {
		void *p = mmap(NULL, (size_t)pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 3;
		munmap(p, (size_t)pg);
	}
	marker();		/* 4: phase D */
	for (i = 0; i < ROUNDS; i++) {
		kill(getpid(), SIGUSR1);
		if (!sigsetjmp(jb, 1))
			*(volatile char *)guard = 1;
	}
	marker();		/* 5: end */
	return usr1 == ROUNDS ? 0 : 4;
}
