/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * The variants of the BPF unwinder's object (bpf/bpfu.bpf.c, bpf/meson.build):
 * which the running kernel takes, and opening one through the one
 * skeleton.  Internal to lib/record/.
 */
#ifndef UST_BPFU_VARIANT_H
#define UST_BPFU_VARIANT_H

#include <stdbool.h>
#include <stddef.h>

/* The task_work kfunc of a variant (UST_BPFU_TW). */
enum ust_bpfu_tw {
	UST_BPFU_TW_NONE = 0,
	UST_BPFU_TW_618 = 1,	/* bpf_task_work_schedule_resume_impl(..., void *aux__prog) */
	UST_BPFU_TW_619 = 2,	/* bpf_task_work_schedule_resume(task, tw, map, cb) */
};

/*
 * The task_work kfunc the running kernel's BTF has, by the prototype a
 * variant was built for; NONE with @why (may be NULL) saying why not.
 */
enum ust_bpfu_tw ust_bpfu_variant_tw(char *why, size_t len);

/*
 * Whether system-call tracepoints may run BPF programs preemptible here
 * (faultable tracepoints: BTF's struct tracepoint_ext, 6.14+), so that
 * the programs on them turn preemption off (bpf/bpfu_cookie.bpf.h).
 */
bool ust_bpfu_variant_faultable(void);

/* "cfi/tw2" and the like, for messages. */
const char *ust_bpfu_variant_name(bool cfi, enum ust_bpfu_tw tw);

/*
 * Refusals of a task_work variant, remembered for the boot.  On a kernel
 * that has the kfunc but refuses ustitch's callback (6.18.44: "sleepable
 * callback in a program that is not sleepable"), every recording loaded
 * and verified the refused variant before the one without task_work: a
 * quarter of the CPU of recording /bin/true.  The verdict depends on the
 * kernel and the object's bytes only, so it is kept in /run (cleared at
 * boot) under the boot id and a hash of the bytes.  Only refusals of the
 * task_work kfunc itself are remembered; ustitch probe always asks.
 * $USTITCH_RUN_DIR names another directory for the file (tests keep their
 * own); set but empty, nothing is remembered.
 */
#define UST_BPFU_RUN_DIR_ENV "USTITCH_RUN_DIR"
#define UST_BPFU_RUN_DIR "/run/ustitch"
#define UST_BPFU_REFUSED_NAME "bpf-refused"
/* Was (@cfi, @tw) refused earlier this boot?  Then @why: the refusal. */
bool ust_bpfu_variant_refused(bool cfi, enum ust_bpfu_tw tw, char *why, size_t len);
/* Remembers @why (its first line, without the log's path); best effort. */
void ust_bpfu_variant_remember_refused(bool cfi, enum ust_bpfu_tw tw, const char *why);

struct ust_bpfu_skel;

/* The skeleton, opened on the variant's object; NULL with errno. */
struct ust_bpfu_skel *ust_bpfu_variant_open(bool cfi, enum ust_bpfu_tw tw);

#endif
