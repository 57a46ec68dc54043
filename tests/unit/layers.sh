#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1
#
# The include layering of lib/ and bpf/, read off the sources:
#
#  - lib/: every '#include "..."' of lib/*/ and lib/include/ustitch/ is an
#    edge between folders (a public header ustitch/H.h belongs to the
#    folder that implements it).  The folder graph must have no cycle, and
#    no folder may include a header of a folder in a layer above its own
#    (LAYERS below, lowest first).
#  - bpf/: every '#include "..."' of one bpf/ file naming another is an
#    edge between files.  The file graph must have no cycle, and no file
#    includes a .c: BPF objects share code through headers only.
#
# Usage: layers.sh SOURCE_ROOT.  Prints each violation and exits 1.
set -eu
root=${1:?usage: layers.sh SOURCE_ROOT}
cd "$root"

# Lowest first; a folder may include headers of its own layer and below.
LAYERS='
base
format sym tdw filter
perf cfi resolve
lockheld addrfilter
record report
'
# Public headers whose owner the file names do not tell (no H.c, no
# lib/H/, H_*.c in more than one folder).
OWNERS='
lh lockheld
'

[ -d lib ] && [ -d bpf ] || { echo "layers.sh: $root has no lib/ and bpf/" >&2; exit 2; }

# owner H: the folder of ustitch/H.h.
owner() {
	local h=$1 f n
	f=$(awk -v h="$h" '$1 == h { print $2 }' <<<"$OWNERS")
	[ -n "$f" ] && { echo "$f"; return; }
	f=$(ls lib/*/"$h".c 2>/dev/null || true)
	n=$(grep -c . <<<"$f" || true)
	[ "$n" = 1 ] && { basename "$(dirname "$f")"; return; }
	[ -d "lib/$h" ] && { echo "$h"; return; }
	f=$(ls lib/*/"$h"_*.c 2>/dev/null | xargs -r -n1 dirname | sort -u || true)
	n=$(grep -c . <<<"$f" || true)
	[ "$n" = 1 ] && { basename "$f"; return; }
	echo "?"
}

declare -A own
for h in lib/include/ustitch/*.h; do
	b=$(basename "$h" .h)
	own[$b]=$(owner "$b")
done

# "FILE INCLUDE" for each '#include "INCLUDE"' of the files named.
incs() {
	awk '{
		if (match($0, /^[ \t]*#[ \t]*include[ \t]*"[^"]*"/)) {
			s = substr($0, RSTART, RLENGTH)
			sub(/^[^"]*"/, "", s); sub(/"$/, "", s)
			print FILENAME, s
		}
	}' "$@"
}

# One line per lib/ include: FROM TO FILE INCLUDE (TO "-": not a lib/ folder).
lib_edges() {
	local f inc from to b
	while read -r f inc; do
		case $f in
		lib/include/*) b=${f##*/}; from=${own[${b%.h}]} ;;
		*) from=${f#lib/}; from=${from%%/*} ;;
		esac
		to=-
		case $inc in
		ustitch/*.h)
			b=${inc#ustitch/}
			# Generated (kernel-bits/include/ustitch/abi.h): not lib/'s.
			[ -f "lib/include/$inc" ] && to=${own[${b%.h}]} ;;
		../*/*)
			to=${inc#../}; to=${to%%/*} ;;
		esac
		echo "$from $to $f $inc"
	done < <(incs lib/*/*.[ch] lib/include/ustitch/*.h)
}

# One line per bpf/ include of a bpf/ file: FROM TO.
bpf_edges() {
	local f inc
	while read -r f inc; do
		[ -f "bpf/$inc" ] && echo "$f bpf/$inc"
	done < <(incs bpf/*.c bpf/*.h)
	return 0
}

# Cycles of a graph given as "FROM TO" lines on stdin: prints each one
# found as "a -> b -> ... -> a" (one per back edge of a depth-first walk).
cycles() {
	awk '
	$1 != $2 { if (!((($1) SUBSEP ($2)) in e)) { e[$1, $2] = 1; succ[$1] = succ[$1] " " $2 }
		   node[$1] = 1; node[$2] = 1 }
	function dfs(u,    n, v, i, s, k, p) {
		color[u] = 1; stack[++depth] = u
		n = split(succ[u], v, " ")
		for (i = 1; i <= n; i++) {
			if (color[v[i]] == 1) {
				p = ""
				for (k = depth; k >= 1 && stack[k] != v[i]; k--) ;
				for (s = k; s <= depth; s++) p = p stack[s] " -> "
				print p v[i]
			} else if (!color[v[i]])
				dfs(v[i])
		}
		depth--; color[u] = 2
	}
	END { nn = 0; for (x in node) names[++nn] = x
	      # a stable order, so that the message is the same each run
	      for (i = 2; i <= nn; i++) for (j = i; j > 1 && names[j-1] > names[j]; j--) {
		      t = names[j]; names[j] = names[j-1]; names[j-1] = t }
	      for (i = 1; i <= nn; i++) if (!color[names[i]]) dfs(names[i]) }'
}

fail=0
edges=$(lib_edges)

# Every public header has an owner; every folder a layer.
for b in "${!own[@]}"; do
	if [ "${own[$b]}" = "?" ]; then
		echo "FAIL: lib/include/ustitch/$b.h: no owning folder (no lib/*/$b.c, no lib/$b/, $b""_*.c in several folders): name it in OWNERS"
		fail=1
	fi
done
declare -A rank
r=0
while read -r line; do
	[ -n "$line" ] || continue
	for d in $line; do rank[$d]=$r; done
	r=$((r + 1))
done <<<"$LAYERS"
for d in lib/*/; do
	d=$(basename "$d")
	[ "$d" = include ] && continue
	if [ -z "${rank[$d]:-}" ]; then
		echo "FAIL: lib/$d/ is in no layer of tests/unit/layers.sh's LAYERS"
		fail=1
	fi
done

# No header of a folder above.
while read -r from to f inc; do
	[ "$to" = - ] || [ "$to" = "?" ] || [ "$from" = "$to" ] && continue
	[ -n "${rank[$from]:-}" ] && [ -n "${rank[$to]:-}" ] || continue
	if [ "${rank[$to]}" -gt "${rank[$from]}" ]; then
		echo "FAIL: $f includes \"$inc\" of lib/$to/, a layer above lib/$from/"
		fail=1
	fi
done <<<"$edges"

# No cycle among lib/ folders.
cyc=$(awk '$2 != "-" && $2 != "?" { print $1, $2 }' <<<"$edges" | cycles)
if [ -n "$cyc" ]; then
	while read -r c; do
		echo "FAIL: include cycle among lib/ folders: $c"
		# the includes that make it
		read -ra hop <<<"${c// -> / }"
		for ((i = 0; i + 1 < ${#hop[@]}; i++)); do
			awk -v a="${hop[i]}" -v b="${hop[i+1]}" \
				'$1 == a && $2 == b { print "        " $3 ": #include \"" $4 "\"" }' <<<"$edges"
		done
	done <<<"$cyc"
	fail=1
fi

# bpf/: no .c included, no cycle among files.
bedges=$(bpf_edges)
while read -r from to; do
	[ -n "$from" ] || continue
	case $to in
	*.c) echo "FAIL: $from includes $to: BPF objects share code through headers only"; fail=1 ;;
	esac
done <<<"$bedges"
cyc=$(cycles <<<"$bedges")
if [ -n "$cyc" ]; then
	while read -r c; do echo "FAIL: include cycle among bpf/ files: $c"; done <<<"$cyc"
	fail=1
fi

if [ $fail = 0 ]; then
	n=$(awk '$2 != "-" && $2 != "?" && $1 != $2' <<<"$edges" | awk '{ print $1, $2 }' | sort -u | wc -l)
	echo "ok: $(ls -d lib/*/ | grep -vc include) lib/ folders, $n folder edges, layers and no cycle; $(grep -c . <<<"$bedges") bpf/ includes, no cycle"
fi
exit $fail
