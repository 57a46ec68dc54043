/* SPDX-License-Identifier: LGPL-2.1 */
/* ustitch record's command line, into a struct ust_rec_opts (rec_cli.c). */
#ifndef USTITCH_REC_CLI_H
#define USTITCH_REC_CLI_H

#include <stdbool.h>
#include <stdio.h>

struct ust_rec_opts;

/*
 * Parse; on error print "ustitch record: ..." and return 2.  *@compression:
 * --compression's algorithm, or NULL (the tool's, not the library's).
 */
int rec_parse(int argc, char **argv, struct ust_rec_opts *o, const char **compression);
/* ust_rec_validate(); on error print why and return 2. */
int rec_validate(struct ust_rec_opts *o, bool *native_deferred);
void rec_usage(FILE *out);

#endif
