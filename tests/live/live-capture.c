// SPDX-License-Identifier: LGPL-2.1
/*
 * live-capture: record a command's events on this kernel through a private
 * tracefs instance (ust_cap) into a trace.dat, for the live tests.
 * usage: live-capture OUT.dat SYSTEM:EVENT[,...] -- CMD [ARGS]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ustitch/capture.h"

int main(int argc, char **argv)
{
	struct ust_cap_event ev[16];
	struct ust_cap_opts o = { 0 };
	struct ust_cap_buffer main_buf = { 0 };
	struct ust_cap *c;
	char err[512], *list, *tok, *save = NULL;
	int go[2], status, n = 0;
	pid_t pid;

	if (argc < 5 || strcmp(argv[3], "--")) {
		fprintf(stderr, "usage: %s OUT.dat SYSTEM:EVENT[,...] -- CMD [ARGS]\n", argv[0]);
		return 2;
	}
	list = strdup(argv[2]);
	for (tok = strtok_r(list, ",", &save); tok && n < 16; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');

		if (!colon) {
			fprintf(stderr, "live-capture: event %s is not SYSTEM:EVENT\n", tok);
			return 2;
		}
		*colon = '\0';
		ev[n].system = tok;
		ev[n].event = colon + 1;
		ev[n].filter = NULL;
		n++;
	}
	if (pipe(go))
		return 1;
	pid = fork();
	if (pid == 0) {
		char b;

		close(go[1]);
		/* Wait until the instance follows us, so no event is missed. */
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		execvp(argv[4], argv + 4);
		_exit(127);
	}
	close(go[0]);
	main_buf.events = ev;
	main_buf.nr_events = n;
	o.buffers = &main_buf;
	o.nr_buffers = 1;
	o.pids = &pid;
	o.nr_pids = 1;
	o.clock = "mono";
	c = ust_cap_start(argv[1], &o, err, sizeof(err));
	if (!c) {
		fprintf(stderr, "live-capture: %s\n", err);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 1;
	}
	ust_cap_on(c);
	if (write(go[1], "g", 1) != 1)
		kill(pid, SIGKILL);
	close(go[1]);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		ust_cap_drain(c, NULL, 0);
		usleep(20000);
	}
	if (ust_cap_finish(c, err, sizeof(err))) {
		fprintf(stderr, "live-capture: %s\n", err);
		return 1;
	}
	free(list);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
