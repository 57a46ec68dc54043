# Sourced by the bench scripts (bash).
# best CMD [ARG...]: run CMD $UST_BENCH_RUNS times (3 unless set) and print
# the line that sorts least as a number (its first field): a 2-core VM is
# noisy, and the least disturbed run is the one to compare.
best() {
	local i out=
	for ((i = 0; i < ${UST_BENCH_RUNS:-3}; i++)); do
		out+="$("$@")"$'\n'
	done
	printf '%s' "$out" | sort -g | head -1
}
