#!/bin/sh
# Runs the sandbox benchmark scripts as subprocesses of node and Bun (seed
# 003's design: `echo code | bun run -`) for comparison with
# `go test -tags sqlite_fts5 -bench . ./sandbox`. Prints the median wall
# time over N runs and the peak RSS of one run.
# Usage: bench/cells/run.sh [N]
N=${1:-20}
prelude='const output = (v) => console.log(JSON.stringify(v));'
trivial='output(1)'
fib='function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) } output(fib(25))'
json='const rows = []; for (let i = 0; i < 2000; i++) rows.push({id: i, name: "item " + i, tags: ["a", "b", "c"], price: i * 1.5, ok: i % 3 === 0});
const text = JSON.stringify(rows); const back = JSON.parse(text);
const total = back.filter(r => r.ok).reduce((s, r) => s + r.price, 0); output({bytes: text.length, total})'

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

bench() { # runtime name code
	rt=$1; name=$2; code="$prelude
$3"
	for i in $(seq "$N"); do
		s=$(date +%s%N)
		case $rt in
		node) printf '%s' "$code" | node - >/dev/null ;;
		bun) printf '%s' "$code" | bun run - >/dev/null ;;
		esac
		e=$(date +%s%N)
		echo $(( (e - s) / 1000 ))
	done | median | awk -v rt="$rt" -v n="$name" '{printf "%-5s %-8s median %.2f ms", rt, n, $1/1000}'
	case $rt in
	node) rss=$(printf '%s' "$code" | /usr/bin/time -f %M node - 2>&1 >/dev/null | tail -1) ;;
	bun) rss=$(printf '%s' "$code" | /usr/bin/time -f %M bun run - 2>&1 >/dev/null | tail -1) ;;
	esac
	echo "  peak RSS $((rss / 1024)) MiB"
}

for rt in node bun; do
	command -v $rt >/dev/null || { echo "$rt: not installed"; continue; }
	bench $rt trivial "$trivial"
	bench $rt fib25 "$fib"
	bench $rt json "$json"
done
