# SPDX-License-Identifier: LGPL-2.1
#
# Exact frames without exact offsets (gcc and clang lay code out
# differently): in the stacks printed by sink.ustitch.text, every frame
# of object OBJ must be a return address right after a call instruction,
# and, below the first frame, a call of the function of the frame above.
#
# awk -v obj=NAME -f check-callsites.awk NM_OUTPUT OBJDUMP_OUTPUT BT2_OUTPUT
# (POSIX awk: Debian's default is mawk)
# nm: "addr T name"; objdump -d: "  addr:<tab>insn"; prints the checked
# frame count, exits 1 at the first frame that breaks the rule.
function hex(s,    i, v) {
	v = 0
	s = tolower(s)
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}
FILENAME == ARGV[1] {
	if (NF >= 3)
		sym[$3] = hex($1)
	next
}
FILENAME == ARGV[2] {
	if ($0 ~ /^ *[0-9a-f]+:\t/) {
		c = index($0, ":")
		a = substr($0, 1, c - 1)
		gsub(/ /, "", a)
		a = hex(a)
		if (have_prev)
			before[a] = prev
		prev = substr($0, c + 2)
		have_prev = 1
	}
	next
}
/^=> / {
	p = index($2, "+0x")
	if (!p || $3 != "(" obj ")") {
		above = ""
		next
	}
	fn = substr($2, 1, p - 1)
	off = hex(substr($2, p + 3))
	if (!(fn in sym)) {
		printf "no symbol %s\n", fn
		failed = 1
		exit 1
	}
	ret = sym[fn] + off
	insn = before[ret]
	if (insn !~ /^call/) {
		printf "%s+0x%x: not after a call (%s)\n", fn, off, insn
		failed = 1
		exit 1
	}
	if (above != "" && index(insn, "<" above ">") == 0) {
		printf "%s+0x%x: after \"%s\", not a call of %s\n", fn, off, insn, above
		failed = 1
		exit 1
	}
	above = fn
	checked++
	next
}
{ above = "" }
END {
	if (failed)
		exit 1
	if (!checked) {
		print "no frame checked"
		exit 1
	}
	print checked
}
