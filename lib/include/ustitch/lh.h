/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * ust_lh: lock_held() filter expressions (seed 000's grammar) for
 * `ustitch record -f`.
 *
 *   expr   := or
 *   or     := and { "||" and }
 *   and    := unary { "&&" unary }
 *   unary  := "!" unary | "(" expr ")" | lock | term
 *   lock   := ("lock_held" | "lock_held_read" | "lock_held_shared" |
 *              "lock_held_write" | "lock_held_exclusive") "(" SPEC ")"
 *   term   := FIELD OP VALUE        (an ftrace filter term, passed through)
 *   SPEC   := [&]symbol | 0xADDR | &slab_cache | mmap_lock | siglock |
 *             rq_lock | zone_lock | rcu | rcu-trace | srcu | mutex |
 *             spinlock | rwsem | rwlock | rt-mutex | percpu-rwsem |
 *             pcpu-sem | semaphore, with an optional ":R" or ":W"
 *
 * Parse (syntax, "column N: ..."), resolve each spec against this kernel
 * (kallsyms, slab caches, which mechanisms it allows), then compile: the
 * conjuncts without lock_held() stay an ftrace filter text, the rest
 * becomes a decision graph (ustitch/filter.h) for bpf/lockheld.bpf.c.
 */
#ifndef USTITCH_LH_H
#define USTITCH_LH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ustitch/filter.h"

enum ust_lh_spec_kind {
	UST_LH_S_SYMBOL,	/* a global lock, in kallsyms (resolved: addr) */
	UST_LH_S_ADDR,		/* a hex kernel address */
	UST_LH_S_SLAB,		/* &cache: a lock inside an object of that slab cache */
	UST_LH_S_AMP,		/* &name before resolution: a symbol or a slab cache */
	UST_LH_S_MMAP_LOCK,
	UST_LH_S_SIGLOCK,
	UST_LH_S_RQ_LOCK,
	UST_LH_S_ZONE_LOCK,
	UST_LH_S_RCU,
	UST_LH_S_RCU_TRACE,
	UST_LH_S_SRCU,
	UST_LH_S_TYPE,		/* a lock type: type says which */
};

/* Lock types (UST_LH_S_TYPE); the numbers are the BPF type tags. */
enum ust_lh_type {
	UST_LH_TYPE_MUTEX = 1,
	UST_LH_TYPE_SPINLOCK,
	UST_LH_TYPE_RWSEM,
	UST_LH_TYPE_RWLOCK,
	UST_LH_TYPE_RTMUTEX,
	UST_LH_TYPE_PERCPU_RWSEM,
	UST_LH_TYPE_SEMAPHORE,
};

enum ust_lh_mode {
	UST_LH_MODE_ANY = 0,
	UST_LH_MODE_READ,	/* :R, lock_held_read(), lock_held_shared() */
	UST_LH_MODE_WRITE,	/* :W, lock_held_write(), lock_held_exclusive() */
};

/* How a resolved spec is decided (and what that needs from the kernel). */
enum ust_lh_mech {
	UST_LH_MECH_NONE = 0,
	UST_LH_MECH_OWNER,	/* owner inspection at an address */
	UST_LH_MECH_MMAP,	/* current->mm->mmap_lock: owner + mmap_lock tracepoints */
	UST_LH_MECH_RCU,	/* current->rcu_read_lock_nesting */
	UST_LH_MECH_RCU_TRACE,	/* current->trc_reader_nesting */
	UST_LH_MECH_TRACK,	/* fentry/fexit held-lock tracking */
};

struct ust_lh_spec {
	char *text;		/* as written between the parentheses */
	char *name;		/* symbol or cache name, without "&" */
	enum ust_lh_spec_kind kind;
	enum ust_lh_type type;	/* UST_LH_S_TYPE */
	enum ust_lh_mode mode;	/* from the suffix and the function name */
	uint64_t addr;		/* UST_LH_S_ADDR, resolved symbols and caches */
	enum ust_lh_mech mech;	/* set by ust_lh_resolve() */
	unsigned int families;	/* UST_LH_MECH_TRACK: UST_LH_FAM_* bits */
};

enum ust_lh_node_kind { UST_LH_N_OR, UST_LH_N_AND, UST_LH_N_NOT, UST_LH_N_LOCK, UST_LH_N_TERM };

enum ust_lh_term_op { UST_LH_T_EQ = 1, UST_LH_T_NE, UST_LH_T_LT, UST_LH_T_LE, UST_LH_T_GT,
		      UST_LH_T_GE, UST_LH_T_BAND, UST_LH_T_GLOB };

struct ust_lh_node {
	enum ust_lh_node_kind kind;
	int a, b;		/* children (OR, AND: both; NOT: a) */
	unsigned int start, end;	/* byte span in the source, parentheses included */
	int spec;		/* LOCK: index into specs */
	/* TERM */
	char *field;
	enum ust_lh_term_op op;
	char *value;		/* as written (quotes removed) */
	bool quoted;
};

struct ust_lh_expr {
	char *src;
	struct ust_lh_node *nodes;
	int nr_nodes;
	int root;
	struct ust_lh_spec *specs;	/* one per lock leaf, in source order */
	int nr_specs;
};

/*
 * Parse @src.  0, or -EINVAL (-ENOMEM) with @err = "column N: what" (N
 * counts from 1).  ust_lh_expr_free() in both cases.
 */
int ust_lh_parse(const char *src, struct ust_lh_expr *e, char *err, size_t errsz);
void ust_lh_expr_free(struct ust_lh_expr *e);
/* Does the filter text use lock_held() at all (a cheap scan, no parse)? */
bool ust_lh_mentions(const char *src);
/* The leaf as written: "lock_held_read(&dentry)" (malloc'ed). */
char *ust_lh_leaf_text(const struct ust_lh_expr *e, int spec);

/* ---- resolution against a kernel ----------------------------------- */

/* Held-lock tracking families (lib/lockheld/lh_track.c). */
#define UST_LH_FAM_MUTEX	(1U << 0)
#define UST_LH_FAM_RWSEM	(1U << 1)
#define UST_LH_FAM_SPINLOCK	(1U << 2)
#define UST_LH_FAM_RWLOCK	(1U << 3)
#define UST_LH_FAM_RTMUTEX	(1U << 4)
#define UST_LH_FAM_PERCPU_RWSEM	(1U << 5)
#define UST_LH_FAM_SEMAPHORE	(1U << 6)
#define UST_LH_FAM_SRCU		(1U << 7)
#define UST_LH_FAM_RCU_GP	(1U << 8)
#define UST_LH_FAM_SRCU_GP	(1U << 9)
#define UST_LH_FAM__ALL		((1U << 10) - 1)

/*
 * What the kernel offers, as callbacks so that unit tests can describe a
 * kernel.  ust_lh_env_live() (ustitch/lh_env.h) fills it for the running one.
 */
struct ust_lh_env {
	void *ctx;
	/* Address of a kallsyms symbol; false when absent. */
	bool (*ksym)(void *ctx, const char *name, uint64_t *addr);
	/* A slab cache of that name exists. */
	bool (*slab)(void *ctx, const char *name);
	/* Its kmem_cache's address, or false with why (NULL: not asked). */
	bool (*slab_addr)(void *ctx, const char *name, uint64_t *addr, char *why, size_t whylen);
	/* A struct member exists in the kernel's BTF (e.g. "task_struct", "rcu_read_lock_nesting"). */
	bool (*btf_member)(void *ctx, const char *type, const char *member);
	/* A tracepoint exists ("mmap_lock/mmap_lock_released"). */
	bool (*tracepoint)(void *ctx, const char *name);
	/* Tracing programs (fentry/fexit) load; @why says why not. */
	bool tracing;
	const char *no_tracing_why;
	/* Families whose functions are all in BTF (lib/lockheld/lh_track.c). */
	unsigned int families;
	/* No kallsyms for data: the kernel lists only functions. */
	bool kallsyms_no_data;
	/*
	 * No bpf_get_kmem_cache kfunc (before 6.13) and no data symbols to
	 * walk from an address to its slab by hand: no slab specs.
	 */
	bool no_kmem_cache;
	/*
	 * Why spinlocks cannot be tracked though their functions exist (the
	 * hooks tell interrupt contexts apart by preempt_count(), found
	 * through kallsyms); NULL: they can.
	 */
	const char *no_spin_why;
};

/*
 * Decide how each spec of @e is evaluated here.  0, or -EOPNOTSUPP with
 * @err naming the spec, the mechanism it needs and why this kernel lacks it.
 */
int ust_lh_resolve(struct ust_lh_expr *e, const struct ust_lh_env *env, char *err, size_t errsz);
/* The mechanism's name for messages: "owner inspection", ... */
const char *ust_lh_mech_name(enum ust_lh_mech m);

/* ---- compilation ---------------------------------------------------- */

struct ust_lh_field {
	char *name;
	unsigned int off, size;
	bool is_signed;
	bool is_string;		/* char[] or __data_loc char[] */
	bool is_array;		/* any other array: not comparable */
};

struct ust_lh_format {
	char *system, *name;
	int id;
	struct ust_lh_field *fields;
	int nr_fields;
};

/* Parse an event format text (tracefs events/S/E/format).  0, -EINVAL (no
 * name or ID) or -ENOMEM. */
int ust_lh_format_parse(const char *text, struct ust_lh_format *f);
void ust_lh_format_free(struct ust_lh_format *f);
const struct ust_lh_field *ust_lh_format_field(const struct ust_lh_format *f, const char *name);

struct ust_lh_compiled {
	char *ftrace;		/* the ftrace part for PERF_EVENT_IOC_SET_FILTER, or NULL */
	struct ust_filter_graph graph;	/* what BPF evaluates */
	int nr_leaves;
	char **leaf_text;	/* per leaf (= spec index): "lock_held(x)" */
	bool *leaf_negated;	/* the leaf matches when not held */
	unsigned int families;	/* tracking families the graph needs */
	bool mmap_read;		/* needs the mmap_lock read trackers */
	bool rcu;		/* tests current->rcu_read_lock_nesting (calibrate) */
	bool needs_track_slab;
};

/*
 * Split and compile a resolved expression for the event @fmt.  Conjuncts
 * of the top-level && without lock_held() go to ->ftrace unchanged (the
 * kernel's filter parser evaluates them); the others are compiled, their
 * field terms included (numeric fields, == != < <= > >= &).  When
 * @bpf_all, the ftrace conjuncts that BPF can evaluate are compiled too
 * (the recorder asks for it when kept events get user stacks: a cookie
 * must not go to an event the ftrace filter then drops).  0, or with @err
 * -E2BIG (too many tests or lock_held() leaves for BPF), -EINVAL (a term
 * BPF cannot evaluate), -ENOMEM.
 */
int ust_lh_compile(const struct ust_lh_expr *e, const struct ust_lh_format *fmt, bool bpf_all,
		   struct ust_lh_compiled *out, char *err, size_t errsz);
void ust_lh_compiled_free(struct ust_lh_compiled *c);
#endif
