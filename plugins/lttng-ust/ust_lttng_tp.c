// SPDX-License-Identifier: LGPL-2.1
/* The ustitch tracepoint provider, compiled into the preloaded object. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "ust_lttng_tp.h"
