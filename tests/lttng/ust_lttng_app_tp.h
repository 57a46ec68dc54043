/* SPDX-License-Identifier: LGPL-2.1 */
/* The test application's own tracepoints (provider "ustlt"). */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER ustlt

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./ust_lttng_app_tp.h"

#if !defined(UST_LTTNG_APP_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define UST_LTTNG_APP_TP_H

#include <lttng/tracepoint.h>

/* tag: which call site of the test (the expected output is keyed by it). */
LTTNG_UST_TRACEPOINT_EVENT(ustlt, work,
	LTTNG_UST_TP_ARGS(int, tag, int, n),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int, tag, tag)
		lttng_ust_field_integer(int, n, n)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(ustlt, sig,
	LTTNG_UST_TP_ARGS(int, signo),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int, signo, signo)
	)
)

#endif

#include <lttng/tracepoint-event.h>
