// SPDX-License-Identifier: LGPL-2.1
/*
 * Workload of the --addr-filter live test.  Each process makes 19
 * getppid() system calls:
 *   3 through libc and 3 by a syscall instruction of this program (outside)
 *   5 inside af_lib_call() (the library)
 *   between af_phase_begin() and af_phase_end(): 4 through libc and 2 in
 *     af_lib_call()
 *   2 through libc after the phase
 * so "filter file:af_lib_call@LIB" keeps 7 and "start af_phase_begin,
 * stop af_phase_end" keeps 6.  The first process then runs itself again as
 * "child", which maps 64 MiB first: the library lands at another address.
 * Each prints "af-prog PID FN-ADDRESS".
 *
 * With AF_SPIN_MS=MS set, each process also spins for the sampling tests,
 * MS milliseconds of CPU time per step:
 *   own_spin()                          user mode, this program
 *   af_lib_spin() from main()           user mode, the library
 *   zero_read()                         in the kernel (read() of /dev/zero)
 *   in the phase (af_phase_work()):  own_spin(), af_lib_spin()
 *   own_spin()                          after the phase
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Each also makes a system call of its own, for start/stop at kernel
 * addresses (kprobes on __x64_sys_getsid and __x64_sys_getpgid). */
__attribute__((noinline)) void af_phase_begin(void)
{
	getsid(0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void af_phase_end(void)
{
	getpgid(0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void own_getppid(void)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid) : "rcx", "r11", "memory");
}

static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

volatile unsigned long af_sink;

__attribute__((noinline)) void own_spin(double ms)
{
	double until = cpu_ms() + ms;

	while (cpu_ms() < until)
		for (int i = 0; i < 200000; i++)
			af_sink += (unsigned long)i * 7;
}

__attribute__((noinline)) void zero_read(double ms)
{
	static char buf[1 << 20];
	double until = cpu_ms() + ms;
	int fd = open("/dev/zero", O_RDONLY);

	while (fd >= 0 && cpu_ms() < until)
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
	if (fd >= 0)
		close(fd);
}

__attribute__((noinline)) void af_phase_work(void (*spin)(double), double ms)
{
	own_spin(ms);
	spin(ms);
	__asm__ volatile("" ::: "memory");	/* not a tail call: keep this frame */
}

int main(int argc, char **argv)
{
	void (*spin)(double) = NULL;
	const char *spin_ms = getenv("AF_SPIN_MS");
	double ms = spin_ms ? atof(spin_ms) : 0;
	long (*fn)(int);
	void *h;
	int i, st;

	if (argc < 2) {
		fprintf(stderr, "usage: af-prog LIB [child]\n");
		return 2;
	}
	if (argc > 2 && !strcmp(argv[2], "child") &&
	    mmap(NULL, 64 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
		return 1;
	h = dlopen(argv[1], RTLD_NOW);
	fn = h ? (long (*)(int))dlsym(h, "af_lib_call") : NULL;
	if (!fn) {
		fprintf(stderr, "af-prog: %s\n", dlerror());
		return 1;
	}
	if (ms > 0 && !(spin = (void (*)(double))dlsym(h, "af_lib_spin"))) {
		fprintf(stderr, "af-prog: %s\n", dlerror());
		return 1;
	}
	printf("af-prog %d %p\n", (int)getpid(), (void *)fn);
	fflush(stdout);
	for (i = 0; i < 3; i++) {
		getppid();
		own_getppid();
	}
	fn(5);
	if (spin) {
		own_spin(ms);
		spin(ms);
		zero_read(ms);
	}
	af_phase_begin();
	for (i = 0; i < 4; i++)
		getppid();
	fn(2);
	if (spin)
		af_phase_work(spin, ms);
	af_phase_end();
	for (i = 0; i < 2; i++)
		getppid();
	if (spin)
		own_spin(ms);
	if (argc > 2)
		return 0;
	if (fork() == 0) {
		char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		/* By its own name: the command name stays "af-prog". */
		if (n > 0) {
			self[n] = '\0';
			execl(self, argv[0], argv[1], "child", (char *)NULL);
		}
		_exit(127);
	}
	wait(&st);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
