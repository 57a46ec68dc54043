// SPDX-License-Identifier: LGPL-2.1
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "ust_lttng_app_tp.h"
