/* SPDX-License-Identifier: LGPL-2.1 */
/* ustitch record --addr-filter: the option (see rec_addrfilter.c). */
#ifndef USTITCH_REC_ADDRFILTER_H
#define USTITCH_REC_ADDRFILTER_H

#include <stdio.h>

struct rec_opts;

#define REC_AF_OPT	0x1700	/* getopt_long code of --addr-filter */

/* Parse, check and add one --addr-filter.  0, or prints why and returns 2. */
int rec_af_option(struct rec_opts *o, const char *spec);
void rec_af_usage(FILE *out);

#endif
