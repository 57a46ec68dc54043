# Sourced by the bench scripts (bash).
# best CMD [ARG...]: run CMD three times and print the line that sorts
# least as a number (its first field): a 2-core VM is noisy, and the least
# disturbed run is the one to compare.
best() {
	printf '%s\n%s\n%s\n' "$("$@")" "$("$@")" "$("$@")" | sort -g | head -1
}
