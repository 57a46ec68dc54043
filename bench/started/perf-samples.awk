# `perf script -F comm,tid,time,ip,sym --no-inline` -> one line per sample,
# as ust-samples.awk prints ustitch's:
#   TIME TID COMM 0 0 0 user;frames;innermost;first
# (perf finishes every stack after recording, with no table to wait for,
# and says nothing of where a walk ended).  A sample's first line is "COMM TID TIME:", each frame
# "ADDR SYM[+OFF] [(DSO)]" after a tab; kernel frames (ffffffff...) are
# left out.
function flush() {
	if (on)
		print t, tid, comm, 0, 0, 0, (uf == "" ? "-" : uf)
	on = 0; uf = ""
}
/^[^\t]/ && NF >= 3 {
	flush(); on = 1
	t = $NF; sub(/:$/, "", t); tid = $(NF - 1)
	comm = $1
	for (i = 2; i <= NF - 2; i++) comm = comm "_" $i
	next
}
/^\t/ && NF >= 2 {
	if ($1 ~ /^ffffffff/) next
	s = $2; sub(/@.*/, "", s); sub(/\+0x[0-9a-f]+$/, "", s)
	uf = uf (uf == "" ? "" : ";") s
	next
}
END { flush() }
