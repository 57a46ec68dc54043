# Per-sample lines of ust-samples.awk or perf-samples.awk -> one line:
#   SAMPLES REACH LATER LATE DONE PROCS NEVER FIRST_MS MEAN_MS
# REACH: samples whose user frames match `re` (the bottom frames of a
# complete stack); LATER, LATE: the samples' flags summed; DONE: samples
# whose frames match `re` or whose stack says it is complete.  Of the
# processes whose name matches `comm` (a process is its TID and name: the
# name changes at exec): PROCS how many, NEVER how many had no sample
# reaching the bottom through the program's own code (`own`: past the
# dynamic loader, whose stacks reach _dl_start before any of the program's
# tables is needed), FIRST_MS the time from the first one's first sample
# (its exec, within a sampling period) to its first such sample, MEAN_MS
# the same averaged over the processes that had one ("-" where there is
# none).
{
	n++
	ok = ($7 ~ re)
	r += ok; later += $4; late += $5; done += (ok || $6)
	if ($3 !~ comm) next
	k = $2 " " $3
	if (!(k in t0)) { t0[k] = $1; np++; if (first == "" || $1 < t0[first]) first = k }
	if ($7 ~ own && !(k in t1)) t1[k] = $1
}
END {
	for (k in t1) { sum += t1[k] - t0[k]; nr++ }
	fms = (first != "" && first in t1) ? sprintf("%.1f", 1000 * (t1[first] - t0[first])) : "-"
	mms = nr ? sprintf("%.1f", 1000 * sum / nr) : "-"
	print n + 0, r + 0, later + 0, late + 0, done + 0, np + 0, np - nr, fms, mms
}
