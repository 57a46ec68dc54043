/* SPDX-License-Identifier: LGPL-2.1 */
/* ustitch report: trace-cmd report with this ustitch's own plugin. */
#ifndef USTITCH_REPORT_CMD_H
#define USTITCH_REPORT_CMD_H

/* argv[0] is "report".  Execs trace-cmd; returns only on failure (its exit status). */
int report_main(int argc, char **argv);

#endif
