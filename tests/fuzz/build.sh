#!/bin/bash
# build.sh [BUILDDIR]: configure (once) a clang build with the libFuzzer
# targets, -fsanitize=fuzzer-no-link,address,undefined on the whole library,
# build it, and generate the seed corpora into BUILDDIR/fuzz-corpus.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$src/build-fuzz}
if [ ! -f "$dir/build.ninja" ]; then
	CC=clang meson setup "$dir" "$src" -Dfuzz=true -Dtests=false \
		-Db_sanitize=address,undefined -Db_lundef=false \
		-Dc_args=-fsanitize=fuzzer-no-link
fi
ninja -C "$dir"
bash "$src/tests/fuzz/seeds.sh" "$dir" "$dir/fuzz-corpus"
