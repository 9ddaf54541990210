#!/bin/bash
# A search over a source tree for `scripts/capture-app`: `grep -r` for a string that
# does not occur, PASSES times (default 2) over DIR (default /usr/include): sequential
# buffered reads of many small files; the second pass finds what the first left cached.
DIR=${1:-/usr/include}; PASSES=${2:-2}
for _ in $(seq "$PASSES"); do
  grep -r -c -e 'mmsim-no-such-string' "$DIR" > /dev/null || true
done
echo "grep -r $DIR x$PASSES"
