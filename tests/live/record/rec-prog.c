// SPDX-License-Identifier: LGPL-2.1
/*
 * rec-prog: the workload of the live recorder tests, with known call
 * chains (frame pointers, -O0, noinline):
 *   main -> rec_a -> rec_b -> rec_c -> getppid() x3     (3 kernel entries)
 *   main -> rec_thread (pthread) -> thr_a -> thr_b -> getppid(), switching
 *        CPUs between calls (the stacks must follow the thread)
 *   main -> fork -> child_x -> child_y -> getppid(); the child exits while
 *        the recording goes on (its frames must still be symbolized)
 * usage: rec-prog [rounds]
 *
 * rec-prog twins ROUNDS: main -> twin_a or twin_b -> twin_mid -> twin_leaf
 * -> getppid(), a, a, b, b, a, a, ...: both twins call from the same stack
 * depth, so every getppid() starts from the same registers, and only a
 * return address two frames up tells a from b.  A walk that reuses the
 * last one (the BPF walk's memo) must see that word change.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

volatile int rec_sink;

__attribute__((noinline)) void rec_c(void)
{
	rec_sink += getppid();
	rec_sink += getppid();
	rec_sink += getppid();
}

__attribute__((noinline)) void rec_b(void)
{
	rec_c();
	rec_sink++;
}

__attribute__((noinline)) void rec_a(void)
{
	rec_b();
	rec_sink++;
}

__attribute__((noinline)) void thr_b(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);	/* migrate, then call */
	rec_sink += getppid();
}

__attribute__((noinline)) void thr_a(int cpu)
{
	thr_b(cpu);
	rec_sink++;
}

static void *rec_thread(void *arg)
{
	int rounds = *(int *)arg, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), i;

	for (i = 0; i < rounds * 2; i++)
		thr_a(i % (ncpu > 0 ? ncpu : 1));
	return NULL;
}

__attribute__((noinline)) void child_y(void)
{
	rec_sink += getppid();
}

__attribute__((noinline)) void child_x(void)
{
	child_y();
	rec_sink++;
}

__attribute__((noinline)) void twin_leaf(void)
{
	rec_sink += getppid();
}

__attribute__((noinline)) void twin_mid(void)
{
	twin_leaf();
	rec_sink++;
}

__attribute__((noinline)) void twin_a(void)
{
	twin_mid();
	rec_sink++;
}

__attribute__((noinline)) void twin_b(void)
{
	twin_mid();
	rec_sink++;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 2, i;
	pthread_t t;
	pid_t pid;

	if (argc > 2 && !strcmp(argv[1], "twins")) {
		/* One call site: main's return address is the same for all. */
		for (i = 0; i < 2 * atoi(argv[2]); i++) {
			void (*twin)(void) = i & 2 ? twin_b : twin_a;

			twin();
		}
		return 0;
	}

	pid = fork();
	if (pid == 0) {
		child_x();
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	for (i = 0; i < rounds; i++)
		rec_a();
	pthread_create(&t, NULL, rec_thread, &rounds);
	pthread_join(t, NULL);
	usleep(100000);		/* the child is long gone when recording ends */
	return 0;
}
