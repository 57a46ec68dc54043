// SPDX-License-Identifier: LGPL-2.1
/*
 * ust-live-chain: the traced side of the live BPF test.  Known chains
 * main -> ust_live_a -> ust_live_b -> ust_live_c and ust_live_thread ->
 * ust_live_a -> ...; ust_live_c calls getppid() several times (each its own
 * kernel entry), then usleep() so that the next round starts afresh.
 *
 * usage: ust-live-chain ROUNDS CALLS [fork]
 * With "fork", a child process runs ust_live_forked -> ust_live_a -> ...
 * as well.  Prints "ready" once mapped and waits for one byte on stdin
 * before running, so the test can read /proc/PID/maps and attach first.
 * Built -O0 with frame pointers: every function keeps its frame.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int ust_live_a(int calls);
int ust_live_b(int calls);
int ust_live_c(int calls);

static int ust_live_rounds;
volatile int ust_live_sink;

__attribute__((noinline)) int ust_live_c(int calls)
{
	int r = 0;

	for (int i = 0; i < calls; i++)
		r += (int)getppid();
	ust_live_sink = r;
	return r;
}

__attribute__((noinline)) int ust_live_b(int calls)
{
	int r = ust_live_c(calls);

	ust_live_sink = r + 1;
	return r;
}

__attribute__((noinline)) int ust_live_a(int calls)
{
	int r = ust_live_b(calls);

	ust_live_sink = r + 2;
	return r;
}

__attribute__((noinline)) void *ust_live_thread(void *arg)
{
	int calls = *(int *)arg;

	for (int i = 0; i < ust_live_rounds; i++) {
		ust_live_a(calls);
		usleep(1000);
	}
	return NULL;
}

__attribute__((noinline)) int ust_live_forked(int calls)
{
	for (int i = 0; i < ust_live_rounds; i++) {
		ust_live_a(calls);
		usleep(1000);
	}
	return 0;
}

int main(int argc, char **argv)
{
	pid_t child = -1;
	pthread_t t;
	int calls, st;
	char go;

	if (argc != 3 && (argc != 4 || strcmp(argv[3], "fork")))
		return 2;
	ust_live_rounds = atoi(argv[1]);
	calls = atoi(argv[2]);
	printf("ready\n");
	fflush(stdout);
	if (read(0, &go, 1) != 1)
		return 3;
	if (argc == 4) {
		child = fork();
		if (child < 0)
			return 5;
		if (!child)
			_exit(ust_live_forked(calls));
	}
	if (pthread_create(&t, NULL, ust_live_thread, &calls))
		return 4;
	for (int i = 0; i < ust_live_rounds; i++) {
		ust_live_a(calls);
		usleep(1000);
	}
	pthread_join(t, NULL);
	if (child > 0 && (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st)))
		return 6;
	return 0;
}
