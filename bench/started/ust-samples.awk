# `trace-cmd report` with plugin_ustitch -> one line per event named by
# the regex ev (-v ev=sample: ustitch/sample):
#   TIME TID COMM LATER LATE DONE user;frames;innermost;first
# LATER is 1 when the stack's header says the recorder walked it on after
# recording (UST_ABI_STACK_F_LATER, lib/report/render.c), LATE 1 when it
# says a file's unwind table was not loaded yet or not in time
# (UST_ABI_STACK_F_NO_TABLE), DONE 1 when it says the walk reached the
# outermost frame ("complete": UST_ABI_STACK_F_BOTTOM, whatever the frames'
# names; a stripped program's have none); frames are bare function names, "-" when
# there are none, "LOST" when the plugin says the stack never arrived.
# The sample's fields as tests/live/perf/samples.awk reads them.  The
# report names a task by its last name: a child's samples before its exec
# carry the name it took at exec.
function flush() {
	if (on)
		print t, tid, comm, later, late, done, (uf == "" ? "-" : uf)
	on = 0; uf = ""; sect = ""; later = 0; late = 0; done = 0
}
$0 ~ (" " ev ": ") {
	flush(); on = 1; sect = "s"
	for (i = 1; i <= NF; i++) {
		if ($i ~ /^\[[0-9]+\]$/) { x = $(i - 1); comm = x; sub(/^.*-/, "", x); tid = x; sub(/-[0-9]+$/, "", comm) }
		if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = $i; sub(/:$/, "", t) }
	}
	next
}
/ kernel_stack: / { if (on) sect = "k"; next }
/ user_unwind_cookie: / {
	if (on) {
		sect = "u"
		later = index($0, "; walked on by the recorder") > 0 ||
			index($0, "not loaded in time: walked on") > 0
		late = index($0, "unwind table was not loaded") > 0
		done = index($0, "; complete") > 0
	}
	next
}
/^=> / {
	if (sect == "u") { f = $2; sub(/\+0x[0-9a-f]+$/, "", f); uf = uf (uf == "" ? "" : ";") f }
	next
}
/^\[ustitch: / { if (on && sect == "u") uf = "LOST"; next }
/: [a-z_]+: / { flush() }
END { flush() }
