# Compares chains (lines "EVENT TID FLAGS frame;frame;...", as cfi-chains.awk
# prints them) with an expected file (expected/SCENARIO.txt):
#   frames:  one per line, top first; "a|b" lists the aliases one function
#            goes by (names at the same address in the symbol table)
#   tail:    frames a complete unwinder may also show below the last
#            expected one (all of them, in order, or none)
#   flags:   "truncated", "complete" (reached the outermost frame by CFI
#            alone) or "-"
# -v gdb=1: the chains come from gdb, which shows more than 127 frames (cut
# here when the expected flags say truncated) and drops a clone's ".N"
# suffix ("msort_with_tmp.part").
# Prints "match N/M" (M = events) and, for the first few that differ, the
# expected and actual frames side by side.  Exit status 0.
function alias_ok(want, got,    n, a, i, s) {
	n = split(want, a, "|")
	for (i = 1; i <= n; i++) {
		if (a[i] == got) return 1
		if (gdb) { s = a[i]; sub(/\.[0-9]+$/, "", s); if (s == got) return 1 }
	}
	return 0
}
FNR == NR {
	if ($0 ~ /^#/ || $0 == "") next
	if ($1 == "flags:") { wflags = $2; next }
	if ($1 == "tail:") { ntail = NF - 1; for (i = 2; i <= NF; i++) tail[i - 1] = $i; next }
	if ($1 == "frames:") { inframes = 1; next }
	if ($1 ~ /:$/) next
	if (inframes) want[++nwant] = $1
	next
}
{
	events++
	n = split($4, got, ";")
	if (gdb && wflags == "truncated" && n > 127) n = 127
	ok = (gdb || $3 == wflags)
	if (n != nwant && n != nwant + ntail) ok = 0
	for (i = 1; ok && i <= n; i++)
		if (!alias_ok(i <= nwant ? want[i] : tail[i - nwant], got[i])) ok = 0
	if (ok) { matched++; next }
	if (shown++ >= 2) next
	printf "  event %d (%s tid %s): flags %s (expected %s), %d frames (expected %d%s)\n",
	       events, $1, $2, $3, wflags, n, nwant, ntail ? " or " nwant + ntail : ""
	m = n > nwant + ntail ? n : nwant + ntail
	for (i = 1; i <= m; i++) {
		w = i <= nwant ? want[i] : (i <= nwant + ntail ? "(" tail[i - nwant] ")" : "")
		g = i <= n ? got[i] : ""
		printf "    %-3d %s %-45s %s\n", i, (i <= n && alias_ok(i <= nwant ? want[i] : tail[i - nwant], g)) ? " " : "*", w, g
	}
}
END { printf "match %d/%d\n", matched, events }
