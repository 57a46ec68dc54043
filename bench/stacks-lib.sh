# shellcheck shell=bash disable=SC2154  # $work, $debian_bottom: the sourcing script's
# Sourced by bench/perf-defer and bench/dwarf: measuring a recording and
# reading its user stacks, one definition for both.  Needs $work, and
# $UST_PLUGIN_DIR and $UST_PERF_SAMPLES for ustitch's traces; the chain
# helpers print one line per sample (or event), its user frames joined by
# ";" innermost first, "-" when it has none.

cpu_of() {	# cpu_of CMD...: CPU seconds of the command and its children
	local TIMEFORMAT='%3U %3S' t
	t=$({ time "$@" >/dev/null 2>>"$work/err"; } 2>&1 | tail -1)
	awk '{ print $1 + $2 }' <<<"$t"
}

# ust_sample_chains COMM_RE: from `trace-cmd report` output (with the
# plugin) on stdin, the user frames of ustitch's samples of the tasks whose
# name matches COMM_RE.
ust_sample_chains() { awk -f "$UST_PERF_SAMPLES" | awk -v c="$1" '$10 ~ c { print $5 }'; }
# ust_chains FILE.dat COMM_RE: the same from a trace file.
ust_chains() {
	env HOME="$work" TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" trace-cmd report "$1" 2>/dev/null |
		ust_sample_chains "$2"
}

# perf_script_chains COMM_RE: the same from `perf script` output on stdin,
# its default fields or -F comm,ip,sym (a sample's first line starts with
# the task's name; each frame is "ADDR SYM[+OFF] [(DSO)]").
perf_script_chains() {
	awk -v c="$1" '
		/^[^ \t]/ { if (on) print (ch == "" ? "-" : ch); on = ($1 ~ c); ch = ""; next }
		NF >= 2 { s = $2; sub(/@.*/, "", s); sub(/\+0x[0-9a-f]+$/, "", s); ch = ch (ch == "" ? "" : ";") s }
		END { if (on) print (ch == "" ? "-" : ch) }'
}
# perf_chains FILE COMM_RE: the same from a perf.data file.
perf_chains() { perf script -i "$1" -F comm,ip,sym --no-inline 2>/dev/null | perf_script_chains "$2"; }

# share: "samples reaching" of chain lines on stdin: those whose frames
# include one of $debian_bottom (tests/live/cfi/debian-progs.sh).
share() { awk -v re="$debian_bottom" '{ n++; if ($0 ~ re) r++ } END { print n + 0, r + 0 }'; }

# report_cpu CMD...: CPU seconds of a report, with ustitch's plugin and no
# plugins of the user's.
report_cpu() { cpu_of env HOME="$work" TRACEEVENT_PLUGIN_DIR="$UST_PLUGIN_DIR" "$@"; }
