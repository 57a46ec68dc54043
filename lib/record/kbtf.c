// SPDX-License-Identifier: LGPL-2.1
/*
 * ust_kbtf: the running kernel's BTF, parsed once (see kbtf.h).
 */
#include <pthread.h>
#include <stddef.h>

#include "kbtf.h"

#ifdef UST_HAVE_LIBBPF
#include <bpf/btf.h>
#include <bpf/libbpf.h>

static struct btf *ust_kbtf_btf;
static pthread_once_t ust_kbtf_once = PTHREAD_ONCE_INIT;

static void ust_kbtf_load(void)
{
	struct btf *btf = btf__load_vmlinux_btf();

	/* libbpf 1.x returns NULL; 0.x an error pointer. */
	ust_kbtf_btf = btf && !libbpf_get_error(btf) ? btf : NULL;
}

/* The copy lives as long as the process: freed at exit for leak checkers. */
__attribute__((destructor)) static void ust_kbtf_free(void)
{
	btf__free(ust_kbtf_btf);
	ust_kbtf_btf = NULL;
}

const struct btf *ust_kbtf(void)
{
	pthread_once(&ust_kbtf_once, ust_kbtf_load);
	return ust_kbtf_btf;
}

#else

const struct btf *ust_kbtf(void)
{
	return NULL;
}

#endif
