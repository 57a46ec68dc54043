# `trace-cmd report` with plugin_ustitch -> one line per ustitch/sample:
#   MODE TID CPU USER_STACK user;frames;innermost;first kernel;frames;innermost;first IP UNRESOLVED HOW COMM
# MODE is "user" or "kernel" (where the sample hit), USER_STACK the
# sample's own field (deferred, immediate, lost, none); frames are bare
# function names; "-" when there are none, "LOST" when the plugin says the
# stack never arrived.  IP is the sample's, its function name for kernel
# IPs (the report symbolizes those), an address for user IPs.  UNRESOLVED
# is "unresolved" when the stack's header says some of its frames were
# left unresolved when recorded (a sample's walk finds one new VMA: see
# bpf/bpfu_walk.bpf.h), else "-".  HOW is "complete" when the stack's
# header says the walk reached the outermost frame, "kernel" when the
# kernel's own unwinder made it (perf defer_callchain), else "-".  COMM is
# the task's name as the report prints it.
function flush() {
	if (on)
		print mode, tid, cpu, ustack, (uf == "" ? "-" : uf), (kf == "" ? "-" : kf), ip, (raw ? "unresolved" : "-"), (how == "" ? "-" : how), comm
	on = 0; uf = ""; kf = ""; sect = ""; raw = 0; how = ""
}
/ sample: / {
	flush(); on = 1; sect = "s"
	for (i = 1; i <= NF; i++) {
		if ($i ~ /^\[[0-9]+\]$/) { cpu = $i; gsub(/[][]/, "", cpu); t = $(i - 1); comm = t; sub(/^.*-/, "", t); tid = t; sub(/-[0-9]+$/, "", comm) }
		if ($i ~ /^user_stack=/) ustack = substr($i, 12)
		if ($i ~ /^ip=/) { ip = substr($i, 4); sub(/\+0x[0-9a-f]+$/, "", ip) }
	}
	mode = $(NF - 1)
	next
}
/ kernel_stack: / { if (on) sect = "k"; next }
/ user_unwind_cookie: / {
	if (on) {
		sect = "u"; raw = index($0, "some frames unresolved") > 0
		how = index($0, "kernel's unwinder") ? "kernel" : index($0, "; complete") ? "complete" : ""
	}
	next
}
/^=> / {
	f = $2; sub(/\+0x[0-9a-f]+$/, "", f)
	if (sect == "k") kf = kf (kf == "" ? "" : ";") f
	else if (sect == "u") uf = uf (uf == "" ? "" : ";") f
	next
}
/^\[ustitch: / { if (on && sect == "u") uf = "LOST"; next }
/: [a-z_]+: / { flush() }
END { flush() }
