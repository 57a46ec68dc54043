#!/bin/bash
# Live tests of lock_held() filters in `ustitch record` (root, tracefs,
# BPF).  The workload (lh-prog.c) runs phases whose lock state is known
# independently of the mechanisms under test: page faults under the VMA
# lock vs. MADV_POPULATE_WRITE under mmap_read_lock(), mmap()/munmap()
# under mmap_write_lock(), a signal sent by kill() (under rcu_read_lock())
# vs. one raised by a fault.  Each run records the same event twice: in the
# main buffer through ftrace, unfiltered (the reference), and through perf
# with the lock_held() filter (the "ustitch" buffer); per phase, the
# filtered count must equal the reference count of the events for which
# the predicate is true, and be 0 where it is false.
#
# usage: test-lockheld.sh mmap|rcu|fields|syscalls|address|stacks|refusals|track|track-spin
set -u
. "$(dirname "$0")/../lib.sh" lh "${1:-}" mmap rcu fields syscalls stacks refusals track track-spin

PAGES=64
ROUNDS=8

# rec OUT EVENT FILTER [extra args]: reference and filtered copies of EVENT.
# LH_PROG_ARGS: more arguments for the workload (track: its extra phases).
# Each recording is bounded (UST_LH_REC_TIMEOUT, 240 s): one that hangs
# fails by name, not the whole test by its timeout, and each says how
# long it took (the vm lane's guests are slow: the test's time is theirs).
rec() {
	local out=$1 ev=$2 filter=$3 t0=$SECONDS rc; shift 3
	timeout -k 5 "${UST_LH_REC_TIMEOUT:-240}" "$UST_USTITCH" record -q -o "$work/$out.dat" \
		-e syscalls:sys_enter_getppid "$@" -e "$ev" -B lh -e "$ev" -f "$filter" -- \
		"$UST_LH_PROG" $PAGES ${LH_PROG_ARGS:-} 2>"$work/$out.log"
	rc=$?
	echo "# record -f '$filter': $((SECONDS - t0)) s"
	[ $rc -eq 124 ] && { bad "record -f '$filter': still running after ${UST_LH_REC_TIMEOUT:-240} s: $(tail -3 "$work/$out.log")"; return 1; }
	[ $rc -eq 0 ] || { bad "record -f '$filter': $(cat "$work/$out.log")"; return 1; }
	trace-cmd report -N "$work/$out.dat" >"$work/$out.txt" 2>/dev/null
}

# count OUT EVENT BUF PHASE [KEY=VALUE-regex]: lines of the workload.
count() {
	local kv=${5:-}
	awk -v EV="$2" -v KEY="${kv%%=*}" -f "$here/phases.awk" "$work/$1.txt" |
		awk -v b="$3" -v p="$4" -v kv="$kv" '
			{ split($2, k, ":"); if ($1 != b || k[1] != p) next
			  if (kv != "" && k[2] !~ kv) next; n += $3 }
			END { print n + 0 }'
}

# write_held OUT PHASE: acquire_returned events of the reference at which
# the lock is write-held: write=true, and the downgrades
# (mmap_write_downgrade() traces a read acquire, then downgrades: no
# start_locking before it).
write_held() {
	awk -v P="$2" '$1 ~ /^lh-prog-/ && $4 == "sys_enter_getppid:" { phase++; next }
		$1 !~ /^lh-prog-/ || phase != P { next }
		$4 == "mmap_lock_start_locking:" { prev = "start"; next }
		$4 == "mmap_lock_acquire_returned:" {
			if ($7 == "write=true" || prev == "acquired") n++
			prev = "acquired"
		}
		END { print n + 0 }' "$work/$1.txt"
}

mmap() {
	local ev=kmem:mm_page_alloc e=mm_page_alloc
	rec held "$ev" 'lock_held(mmap_lock)' || return
	at_least "reference: page allocations in phase A (VMA lock)" "$(count held $e ft 1)" $PAGES
	at_least "reference: page allocations in phase B (mmap_read_lock)" "$(count held $e ft 2)" $PAGES
	expect_eq "lock_held(mmap_lock), phase A" "$(count held $e lh 1)" 0
	expect_eq "lock_held(mmap_lock), phase B" "$(count held $e lh 2)" "$(count held $e ft 2)"
	rec notheld "$ev" '!lock_held(mmap_lock)' || return
	expect_eq "!lock_held(mmap_lock), phase A" "$(count notheld $e lh 1)" "$(count notheld $e ft 1)"
	expect_eq "!lock_held(mmap_lock), phase B" "$(count notheld $e lh 2)" 0
	rec read "$ev" 'lock_held_read(mmap_lock)' || return
	expect_eq "lock_held_read(mmap_lock), phase A" "$(count read $e lh 1)" 0
	expect_eq "lock_held_read(mmap_lock), phase B" "$(count read $e lh 2)" "$(count read $e ft 2)"
	rec write "$ev" 'lock_held(mmap_lock:W)' || return
	expect_eq "lock_held(mmap_lock:W), phase A" "$(count write $e lh 1)" 0
	expect_eq "lock_held(mmap_lock:W), phase B" "$(count write $e lh 2)" 0
	# The mmap_lock events themselves say how the lock is held (write=).
	"$UST_USTITCH" record -q -o "$work/ev.dat" -e syscalls:sys_enter_getppid -e mmap_lock \
		-B lh -e mmap_lock:mmap_lock_start_locking -f 'lock_held(mmap_lock)' \
		-e mmap_lock:mmap_lock_acquire_returned -f 'lock_held_write(mmap_lock)' \
		-e mmap_lock:mmap_lock_released -f 'lock_held(mmap_lock:R)' \
		-- "$UST_LH_PROG" $PAGES 2>"$work/ev.log" || { bad "record mmap_lock: $(cat "$work/ev.log")"; return; }
	trace-cmd report -N "$work/ev.dat" >"$work/ev.txt" 2>/dev/null
	local p ft lh
	for p in 1 2 3 4; do
		expect_eq "start_locking with lock_held(mmap_lock), phase $p" \
			"$(count ev mmap_lock_start_locking lh $p)" 0
		ft=$(write_held ev $p)
		lh=$(count ev mmap_lock_acquire_returned lh $p)
		expect_eq "acquire_returned with lock_held_write(mmap_lock), phase $p (write-held)" "$lh" "$ft"
		ft=$(count ev mmap_lock_released ft $p write=false)
		lh=$(count ev mmap_lock_released lh $p)
		expect_eq "released with lock_held(mmap_lock:R), phase $p (= write=false)" "$lh" "$ft"
	done
	at_least "write holds in phase C" "$(count ev mmap_lock_acquire_returned ft 3 write=true)" $((ROUNDS * 2))
	at_least "read holds in phase B" "$(count ev mmap_lock_released ft 2 write=false)" 1
}

rcu() {
	local ev=signal:signal_generate e=signal_generate
	rec rcu "$ev" 'lock_held(rcu)' || return
	expect_eq "reference: kill() signals" "$(count rcu $e ft 4 sig=10)" $ROUNDS
	expect_eq "reference: fault signals" "$(count rcu $e ft 4 sig=11)" $ROUNDS
	expect_eq "lock_held(rcu): kill()" "$(count rcu $e lh 4 sig=10)" $ROUNDS
	expect_eq "lock_held(rcu): fault" "$(count rcu $e lh 4 sig=11)" 0
	rec notrcu "$ev" '!lock_held(rcu:R)' || return
	expect_eq "!lock_held(rcu:R): kill()" "$(count notrcu $e lh 4 sig=10)" 0
	expect_eq "!lock_held(rcu:R): fault" "$(count notrcu $e lh 4 sig=11)" $ROUNDS
	# rcu-trace: none of these events is in a Tasks Trace RCU section.
	rec trc "$ev" 'lock_held(rcu-trace)' || return
	expect_eq "lock_held(rcu-trace)" "$(count trc $e lh 4)" 0
	rec notrc "$ev" '!lock_held(rcu-trace)' || return
	expect_eq "!lock_held(rcu-trace)" "$(count notrc $e lh 4)" $((ROUNDS * 2))
}

fields() {
	local ev=signal:signal_generate e=signal_generate
	# Split: "sig == 11" stays an ftrace filter on the perf event.
	rec and "$ev" 'sig == 10 && lock_held(rcu)' || return
	expect_eq "sig == 10 && lock_held(rcu): kill()" "$(count and $e lh 4 sig=10)" $ROUNDS
	rec and2 "$ev" 'sig == 11 && lock_held(rcu)' || return
	expect_eq "sig == 11 && lock_held(rcu)" "$(count and2 $e lh 4)" 0
	# Not splittable: BPF reads sig from the raw record.
	rec or "$ev" 'sig == 11 || lock_held_read(rcu)' || return
	expect_eq "sig == 11 || lock_held_read(rcu): kill()" "$(count or $e lh 4 sig=10)" $ROUNDS
	expect_eq "sig == 11 || lock_held_read(rcu): fault" "$(count or $e lh 4 sig=11)" $ROUNDS
	rec or2 "$ev" '(sig == 12 || !lock_held(rcu)) && sig != 17' || return
	expect_eq "(sig == 12 || !lock_held(rcu)) && sig != 17" \
		"$(count or2 $e lh 4 sig=11)/$(count or2 $e lh 4 sig=10)/$(count or2 $e lh 5)" "$ROUNDS/0/0"
	# A field term and a lock in one event: gfp_flags & __GFP_ZERO (0x100).
	rec gfp kmem:mm_page_alloc 'gfp_flags & 0x100 && lock_held(mmap_lock)' || return
	expect_eq "gfp_flags & 0x100 && lock_held(mmap_lock), phase B" \
		"$(count gfp mm_page_alloc lh 2)" "$(count gfp mm_page_alloc ft 2 gfp_flags=.*__GFP_ZERO)"
	expect_eq "gfp_flags & 0x100 && lock_held(mmap_lock), phase A" "$(count gfp mm_page_alloc lh 1)" 0
	# A record with a __data_loc string (the exec's file name), through perf
	# and the filter, must read as ftrace's own record of the same exec.
	rec exec sched:sched_process_exec '!lock_held(mmap_lock:W)' || return
	local ft lh
	ft=$(awk '$1 !~ /^ustitch:/ && / sched_process_exec: / { sub(/.* sched_process_exec: */, ""); print }' "$work/exec.txt")
	lh=$(awk '$1 ~ /^ustitch:/ && / sched_process_exec: / { sub(/.* sched_process_exec: */, ""); print }' "$work/exec.txt")
	expect_eq "sched_process_exec (__data_loc filename): as ftrace's" "$lh" "$ft"
	expect_eq "sched_process_exec: the workload's exec" "$(grep -c "filename=$UST_LH_PROG " <<<"$lh")" 1
	# Again beside another recording whose BPF programs sit on the same
	# tracepoints (sched_process_exec/exit): a program that returns 0
	# there drops the event for every perf user, this filter included.
	local npid i
	"$UST_USTITCH" record -q -o "$work/neighbour.dat" -O userstacktrace_delay \
		-e sched:sched_process_exec -e syscalls:sys_enter_getppid 2>"$work/neighbour.log" &
	npid=$!
	for i in $(seq 100); do
		ls /sys/kernel/tracing/instances | grep -q "^ustitch-$npid" && break
		sleep 0.1
	done
	sleep 0.5
	rec exec2 sched:sched_process_exec '!lock_held(mmap_lock:W)'
	kill -INT "$npid"; wait "$npid"
	lh=$(awk '$1 ~ /^ustitch:/ && / sched_process_exec: / { sub(/.* sched_process_exec: */, ""); print }' "$work/exec2.txt")
	expect_eq "sched_process_exec beside another recording: the workload's exec" \
		"$(grep -c "filename=$UST_LH_PROG " <<<"$lh")" 1
}

stacks() {
	# -p lockheld as with trace-cmd: only events under the lock, each
	# with its lock, kernel stack and deferred user stack.
	"$UST_USTITCH" record -q -p lockheld -o "$work/st.dat" -O stacktrace -O userstacktrace_delay \
		-e kmem:mm_page_alloc -f 'lock_held(mmap_lock)' -- "$UST_LH_PROG" $PAGES \
		2>"$work/st.log" || { bad "record: $(cat "$work/st.log")"; return; }
	report "$work/st.dat" >"$work/st.txt"
	local n
	n=$(grep -c ' mm_page_alloc: ' "$work/st.txt")
	at_least "events kept" "$n" $PAGES
	expect_eq "each with its lock" "$(grep -c ' lock_match: *\[lock_held(mmap_lock)\]' "$work/st.txt")" "$n"
	expect_eq "each with its kernel stack" "$(grep -c ' kernel_stack: ' "$work/st.txt")" "$n"
	# Complete: by CFI to _start, or the new program's first instruction
	# (page allocations of the exec itself).  Page faults are no system
	# call: without BPF task_work their stacks are taken at the event.
	expect_eq "each with its complete user stack" \
		"$(grep -Ec ' user_unwind_cookie: .*<user stack unwind, [0-9]* frames?; (taken at the event: no BPF task_work on this kernel; )?complete(, by CFI)?>' "$work/st.txt")" "$n"
	at_least "user stacks through madvise() in main()" \
		"$(grep -A8 ' user_unwind_cookie: ' "$work/st.txt" | grep -c '=> main+')" $PAGES
	# madvise_populate(), inlined into do_madvise() on some kernels.
	at_least "kernel stacks through madvise()" \
		"$(grep -Ec '=> (madvise_populate|do_madvise)' "$work/st.txt")" $PAGES
	expect_eq "no plugin error" "$(grep -c '\[ustitch:' "$work/st.txt")" 0 ||
		grep -m3 -B6 '\[ustitch:' "$work/st.txt"
	grep -q 'note: while recording, the lock_held() BPF filter also drops the samples other perf users' \
		"$work/st.log" && ok "warned about other perf users" || bad "no warning: $(cat "$work/st.log")"
}

# System-call events are kept without perf (rec_lockheld.c, raw_ok()): a
# BPF program on sys_enter/sys_exit builds the record as ftrace does and
# sends it when the filter keeps it (the filter reads the record's fields
# there).  Each kept madvise() entry and exit must read as ftrace's own
# record of the same call, recorded beside it,
# and again when perf keeps them (USTITCH_LH_PERF=1, the way of events
# with stacks or an ftrace part in their filter).
syscalls() {
	local way ft lh n
	for way in raw perf; do
		if [ $way = perf ]; then export USTITCH_LH_PERF=1; else unset USTITCH_LH_PERF; fi
		"$UST_USTITCH" record -q -o "$work/sc-$way.dat" \
			-e syscalls:sys_enter_madvise -e syscalls:sys_exit_madvise -B lh \
			-e syscalls:sys_enter_madvise -f '!lock_held(mmap_lock:W)' \
			-e syscalls:sys_exit_madvise -f 'ret == 0 || lock_held(rcu)' \
			-- "$UST_LH_PROG" $PAGES 2>"$work/sc-$way.log" ||
			{ bad "$way: record: $(cat "$work/sc-$way.log")"; continue; }
		trace-cmd report -N "$work/sc-$way.dat" >"$work/sc-$way.txt" 2>/dev/null
		# task, event and fields: the CPU and time are each copy's own
		ft=$(awk '$1 !~ /^ustitch:/ && / sys_(enter|exit)_madvise: / { t = $1; sub(/.*\] +[0-9.]+: */, ""); print t, $0 }' "$work/sc-$way.txt")
		lh=$(awk '$1 ~ /^ustitch:/ && / sys_(enter|exit)_madvise: / { t = $2; sub(/.*\] +[0-9.]+: */, ""); print t, $0 }' "$work/sc-$way.txt")
		n=$(grep -c ' sys_enter_madvise: ' <<<"$ft")
		at_least "$way: madvise() calls in ftrace's copy" "$n" 3
		expect_eq "$way: each kept entry and exit as ftrace's record" "$lh" "$ft"
		# Exits pass by their field, read from the record BPF built: no lock matched.
		expect_eq "$way: each entry with its lock match" \
			"$(grep -c '^ustitch: .* lock_match: ' "$work/sc-$way.txt")" "$n"
		# The perf users' note names the events perf keeps, and only them.
		if [ $way = perf ]; then
			grep -q 'also drops the samples other perf users .* syscalls:sys_enter_madvise, syscalls:sys_exit_madvise' \
				"$work/sc-$way.log" && ok "perf: perf keeps them" || bad "perf: $(cat "$work/sc-$way.log")"
		else
			grep -q 'other perf users' "$work/sc-$way.log" &&
				bad "raw: perf keeps them: $(cat "$work/sc-$way.log")" || ok "raw: no perf event"
		fi
	done
	unset USTITCH_LH_PERF
}

# Held-lock tracking (fexit on lock functions, fentry on unlock ones):
# only where the kernel loads tracing programs (not on the project's
# machine: the vm lane runs this on Debian's 6.12).  Truth per phase of
# lh-prog (see there), from the kernel's source:
#   A  anonymous faults: the allocation in do_anonymous_page() may sleep
#      (no spinlock), no mutex, no SRCU; under the VMA lock, an
#      rw_semaphore read-held (down_read_trylock in lock_vma_under_rcu)
#   B  MADV_POPULATE_WRITE: under mmap_read_lock(), an rwsem read-held
#   E  pipe_write(): each buffer page allocated under pipe->mutex
#   F  inotify: each event allocated under fsnotify_mark_srcu
# Phase E and F events that are not pipe or inotify allocations would
# make the comparisons inexact: the workload touches its buffers first.
# need_tracking: skip where tracing programs are refused; the workload's
# extra phases on.
need_tracking() {
	if "$UST_USTITCH" probe | grep -q '^bpf-tracing-progs: no'; then
		skip_all "this kernel refuses tracing programs (fentry/fexit): held-lock tracking cannot run here"
	fi
	LH_PROG_ARGS=track
}

# Sleeping locks: mutexes, rw_semaphores, SRCU.
track() {
	local pa=kmem:mm_page_alloc e=mm_page_alloc km=kmem:kmalloc site=call_site=inotify_handle_inode_event
	need_tracking
	rec mutex "$pa" 'lock_held(mutex)' || return
	at_least "reference: page allocations in phase A" "$(count mutex $e ft 1)" $PAGES
	at_least "reference: pipe buffer pages in phase E" "$(count mutex $e ft 5)" 1
	expect_eq "lock_held(mutex), phase A (faults)" "$(count mutex $e lh 1)" 0
	expect_eq "lock_held(mutex), phase E (pipe_write)" "$(count mutex $e lh 5)" "$(count mutex $e ft 5)"
	rec notmutex "$pa" '!lock_held(mutex)' || return
	expect_eq "!lock_held(mutex), phase A" "$(count notmutex $e lh 1)" "$(count notmutex $e ft 1)"
	expect_eq "!lock_held(mutex), phase E" "$(count notmutex $e lh 5)" 0
	rec rwsem "$pa" 'lock_held(rwsem:R)' || return
	expect_eq "lock_held(rwsem:R), phase A (VMA lock)" "$(count rwsem $e lh 1)" "$(count rwsem $e ft 1)"
	expect_eq "lock_held(rwsem:R), phase B (mmap_read_lock)" "$(count rwsem $e lh 2)" "$(count rwsem $e ft 2)"
	expect_eq "lock_held(rwsem:R), phase E" "$(count rwsem $e lh 5)" 0
	rec rwsemw "$pa" 'lock_held_write(rwsem)' || return
	expect_eq "lock_held_write(rwsem), phases A, B, E" \
		"$(count rwsemw $e lh 1)/$(count rwsemw $e lh 2)/$(count rwsemw $e lh 5)" 0/0/0
	rec srcu "$km" 'lock_held(srcu)' || return
	at_least "reference: inotify event allocations in phase F" "$(count srcu kmalloc ft 6 $site)" 1
	expect_eq "lock_held(srcu), phase F (inotify)" \
		"$(count srcu kmalloc lh 6 $site)" "$(count srcu kmalloc ft 6 $site)"
	expect_eq "lock_held(srcu), phases A and E" "$(count srcu kmalloc lh 1)/$(count srcu kmalloc lh 5)" 0/0
	rec notsrcu "$km" '!lock_held(srcu:R)' || return
	expect_eq "!lock_held(srcu:R), phase F (inotify)" "$(count notsrcu kmalloc lh 6 $site)" 0
	expect_eq "!lock_held(srcu:R), phase E" "$(count notsrcu kmalloc lh 5)" "$(count notsrcu kmalloc ft 5)"
}

# Spinlocks, and locks by the slab cache of the object they are in (a
# test of its own: each recording loads the tracking hooks, which takes a
# guest the better part of a minute).
track-spin() {
	local why pa=kmem:mm_page_alloc e=mm_page_alloc
	need_tracking
	# Spinlocks (tracked per CPU, bpf/lockheld_abi.h): each signal of
	# phase D (kill() to itself, and a fault's SIGSEGV) is generated under
	# current's siglock; the page allocations of phases A and E may sleep,
	# so they hold no spinlock.
	local sg=signal:signal_generate
	rec spin "$sg" 'lock_held(spinlock)' || return
	expect_eq "reference: signals in phase D" "$(count spin signal_generate ft 4)" $((2 * ROUNDS))
	expect_eq "lock_held(spinlock), phase D (signals)" "$(count spin signal_generate lh 4)" $((2 * ROUNDS))
	rec siglock "$sg" 'lock_held(siglock)' || return
	expect_eq "lock_held(siglock), phase D (signals)" "$(count siglock signal_generate lh 4)" $((2 * ROUNDS))
	# The same signals by the slab cache of their lock: a spinlock inside
	# a slab object (sighand_struct), as a dentry's d_lock is.
	rec sighand "$sg" 'lock_held(&sighand_cache)' || return
	expect_eq "lock_held(&sighand_cache), phase D (signals)" "$(count sighand signal_generate lh 4)" $((2 * ROUNDS))
	# ... and a spinlock held in another cache's object does not count.
	rec sigdentry "$sg" 'lock_held(&dentry)' || return
	expect_eq "lock_held(&dentry), phase D (signals)" "$(count sigdentry signal_generate lh 4)" 0
	rec nospin "$pa" '!lock_held(spinlock)' || return
	expect_eq "!lock_held(spinlock), phase A (faults)" "$(count nospin $e lh 1)" "$(count nospin $e ft 1)"
	expect_eq "!lock_held(spinlock), phase E (pipe_write)" "$(count nospin $e lh 5)" "$(count nospin $e ft 5)"
	# Slab specs: the cache of each lock, by bpf_get_kmem_cache (6.13+)
	# or by the hooks' own walk to the slab.  Phase G allocates its pages
	# under a tmpfs inode's i_rwsem (in guests, /tmp is tmpfs); no dentry
	# lock is held in any page allocation of the workload.
	if [ "$(stat -f -c %T /tmp)" != tmpfs ]; then
		why="/tmp is not tmpfs here (phase G needs shmem inodes)"
		skip_part "reference: page allocations in phase G (tmpfs writes)" "$why"
		skip_part "lock_held(&shmem_inode_cache), phase G" "$why"
		skip_part "lock_held(&shmem_inode_cache), phases A and E" "$why"
		skip_part "lock_held(&dentry), phases A, E and G" "$why"
		return
	fi
	rec shm "$pa" 'lock_held(&shmem_inode_cache)' || return
	at_least "reference: page allocations in phase G (tmpfs writes)" "$(count shm $e ft 7)" $ROUNDS
	expect_eq "lock_held(&shmem_inode_cache), phase G" "$(count shm $e lh 7)" "$(count shm $e ft 7)"
	expect_eq "lock_held(&shmem_inode_cache), phases A and E" "$(count shm $e lh 1)/$(count shm $e lh 5)" 0/0
	rec dentry "$pa" 'lock_held(&dentry)' || return
	expect_eq "lock_held(&dentry), phases A, E and G" \
		"$(count dentry $e lh 1)/$(count dentry $e lh 5)/$(count dentry $e lh 7)" 0/0/0
}

refusals() {
	local before after tracing kall
	before=$(ls /sys/kernel/tracing/instances)
	tracing=$("$UST_USTITCH" probe | grep '^bpf-tracing-progs: no' || true)
	# Data symbols in kallsyms (CONFIG_KALLSYMS_ALL), seen as the kernel
	# shows them: not every kernel has /proc/config.gz.
	kall=$(grep -c ' [bBdD] cgroup_mutex$' /proc/kallsyms || true)
	while IFS=$'\t' read -r need filter msg; do
		[ -z "$filter" ] && continue
		[ "$need" = notracing ] && [ -z "$tracing" ] && { skip_part "refused: $filter" "tracing programs load here"; continue; }
		[ "$need" = nokallsymsall ] && [ "$kall" != 0 ] && { skip_part "refused: $filter" "kallsyms has data"; continue; }
		out=$(cd "$work" && "$UST_USTITCH" record -e kmem:mm_page_alloc -f "$filter" -- true 2>&1); rc=$?
		[ $rc -eq 2 ] && [ "$out" = "$msg" ] && ok "refused: $filter" ||
			bad "$filter: status $rc, said '$out', expected '$msg'"
		[ ! -e "$work/trace.dat" ] || { bad "$filter left a trace.dat"; rm -f "$work/trace.dat"; }
	done <"$here/refusals.txt"
	out=$(cd "$work" && "$UST_USTITCH" record -p lockheld -e kmem:mm_page_alloc -- true 2>&1); rc=$?
	expect_eq "-p lockheld without lock_held()" "$rc: $out" "2: ustitch record: -p lockheld: no -f filter uses lock_held()"
	# Other recorders may come and go meanwhile: only instances left by
	# a recorder that has exited (ours) count.
	after=$(comm -13 <(echo "$before" | sort) <(ls /sys/kernel/tracing/instances | sort) |
		sed -n 's/^ustitch-\([0-9]*\).*/\1/p' | while read -r pid; do
			kill -0 "$pid" 2>/dev/null || echo "ustitch-$pid"; done)
	[ -z "$after" ] && ok "no instance left" || bad "instances left: $after"
	[ "$(bpftool prog show 2>/dev/null | grep -c 'name ust_lh_' || true)" = 0 ] &&
		ok "no BPF program left" || bad "BPF programs left"
}

"$1"
finish
