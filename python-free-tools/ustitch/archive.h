/* SPDX-License-Identifier: LGPL-2.1 */
/* ustitch archive: a trace's files, by build-id, for reports elsewhere. */
#ifndef USTITCH_ARCHIVE_H
#define USTITCH_ARCHIVE_H

#include <stdio.h>

void archive_usage(FILE *out);
/* argv[0] is "archive".  The exit status. */
int archive_main(int argc, char **argv);

#endif
