// SPDX-License-Identifier: LGPL-2.1
/*
 * ust-demo: the README demo's workload.  A tiny "build system" that
 * compiles a few targets; every target's log line reaches write(2) through
 * a known chain of functions, built with frame pointers:
 *   main -> build_all -> build_target -> compile_unit -> run_pass ->
 *   emit_diagnostic -> log_line -> write()
 * usage: ust-demo [targets]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int log_fd = -1;

__attribute__((noinline)) void log_line(const char *msg)
{
	if (write(log_fd, msg, strlen(msg)) < 0)
		exit(1);
}

__attribute__((noinline)) void emit_diagnostic(const char *unit, const char *pass)
{
	char line[128];

	snprintf(line, sizeof(line), "%s: %s done\n", unit, pass);
	log_line(line);
}

__attribute__((noinline)) void run_pass(const char *unit, const char *pass)
{
	emit_diagnostic(unit, pass);
}

__attribute__((noinline)) void compile_unit(const char *unit)
{
	run_pass(unit, "parse");
	run_pass(unit, "optimize");
}

__attribute__((noinline)) void build_target(int n)
{
	char unit[32];

	snprintf(unit, sizeof(unit), "unit%d.c", n);
	compile_unit(unit);
}

__attribute__((noinline)) void build_all(int targets)
{
	for (int i = 0; i < targets; i++)
		build_target(i);
}

int main(int argc, char **argv)
{
	log_fd = STDOUT_FILENO;
	build_all(argc > 1 ? atoi(argv[1]) : 2);
	return 0;
}
