#!/usr/bin/env bash
# compare.sh: Kairos against PicoClaw (issue 36), side by side, through the
# same fake Telegram and fake model (bench/load), alternating runs in one
# sitting: kairos, picoclaw, kairos, picoclaw, … for each load.
#
#   bench/peer/compare.sh                 # from the module root
#
# Environment (all optional):
#   ROUNDS=2            runs of each agent per load
#   LOADS="limits flood" which loads: limits = 100 chats × 10, Telegram's limits
#                       on (stock PicoClaw, 20 messages/s); flood = 1000 × 5,
#                       limits off (KAIROS_SEND_LIMITS=off, KAIROS_WORKERS=16;
#                       PicoClaw "unlimited", max_parallel_turns 16)
#   PUSHES="closed flood" how the messages are pushed: closed = each chat sends
#                       its next message when it sees the reply to the last
#                       (bench/load -closed); flood = everything at once (the
#                       bench/load default). PicoClaw folds messages that arrive
#                       during a turn into it ("steering") and, in a flood, leaves
#                       most of them without a reply; the closed loop makes both
#                       agents do one turn per message.
#   THINK=0s            with the closed push: the pause between a reply and the
#                       chat's next message (bench/load -think)
#   WORK=/tmp/peer-compare  where binaries and run logs go
#   KAIROS_BIN=PATH     a kairos binary (default: built from this checkout)
#   PICOCLAW_SRC=DIR    a PicoClaw source tree (default: PICOCLAW_GIT, else a
#                       clone of https://github.com/sipeed/picoclaw at PICOCLAW_REF)
#   PICOCLAW_GIT=DIR    a bare git directory of PicoClaw (its HEAD is used)
#   PICOCLAW_REF=main   the ref cloned when neither is given
#   PICOCLAW_BIN=PATH PICOCLAW_UNLIMITED_BIN=PATH  prebuilt PicoClaw binaries
#                       (stock and unlimited): no PicoClaw build then
#   LIMITS_LOAD="-chats 100 -messages 10"  FLOOD_LOAD="-chats 1000 -messages 5"
#                       the sizes of the two loads
#   compare.sh table    reprints the table of the runs in $WORK/runs
#
# "Unlimited" PicoClaw is the same tree with its Telegram rate
# (channelRateConfig "telegram": 20 in pkg/channels/manager.go) raised to
# 1e9 messages/s; the patch is applied to a copy, never to PicoClaw's tree.
set -euo pipefail

ROUNDS=${ROUNDS:-2}
LOADS=${LOADS:-limits flood}
PUSHES=${PUSHES:-closed flood}
WORK=${WORK:-/tmp/peer-compare}
PICOCLAW_REF=${PICOCLAW_REF:-main}
ROOT=$(git rev-parse --show-toplevel)
mkdir -p "$WORK/runs"

log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }

build_kairos() {
	if [[ -n ${KAIROS_BIN:-} ]]; then return; fi
	KAIROS_BIN=$WORK/kairos
	log "building kairos from $ROOT ($(git -C "$ROOT" rev-parse --short HEAD))"
	(cd "$ROOT" && go build -tags sqlite_fts5 -o "$KAIROS_BIN" ./cmd/kairos)
}

# picoclaw_source prints a directory holding PicoClaw's source.
picoclaw_source() {
	if [[ -n ${PICOCLAW_SRC:-} ]]; then echo "$PICOCLAW_SRC"; return; fi
	local src=$WORK/picoclaw-src
	rm -rf "$src" && mkdir -p "$src"
	if [[ -n ${PICOCLAW_GIT:-} ]]; then
		# Only the top-level entries the build needs (a snapshot may lack
		# large binary assets).
		local entries
		entries=$(git --git-dir="$PICOCLAW_GIT" ls-tree --name-only HEAD | grep -vx 'assets')
		# shellcheck disable=SC2086
		# (git archive names the absent blobs on stderr; the tree is checked below)
		git --git-dir="$PICOCLAW_GIT" archive HEAD -- $entries 2>/dev/null | tar -x -C "$src"
		[[ -f $src/go.mod && -f $src/pkg/channels/manager.go ]] || { echo "compare.sh: $PICOCLAW_GIT gave no usable tree" >&2; exit 1; }
		git --git-dir="$PICOCLAW_GIT" rev-parse HEAD >"$src/.commit"
	else
		git clone -q --depth 1 --branch "$PICOCLAW_REF" https://github.com/sipeed/picoclaw "$src"
		git -C "$src" rev-parse HEAD >"$src/.commit"
	fi
	echo "$src"
}

build_picoclaw() {
	if [[ -n ${PICOCLAW_BIN:-} && -n ${PICOCLAW_UNLIMITED_BIN:-} ]]; then return; fi
	PICOCLAW_BIN=$WORK/picoclaw PICOCLAW_UNLIMITED_BIN=$WORK/picoclaw-unlimited
	local src unl
	src=$(picoclaw_source)
	log "building PicoClaw from $src ($(cat "$src/.commit" 2>/dev/null || echo '?'))"
	(cd "$src" && CGO_ENABLED=0 go build -tags goolm,stdjson -o "$WORK/picoclaw" ./cmd/picoclaw)
	unl=$WORK/picoclaw-unlimited-src
	rm -rf "$unl" && cp -r "$src" "$unl"
	sed -i -E 's/^([[:space:]]*"telegram":[[:space:]]*)20,/\11e9,/' "$unl/pkg/channels/manager.go"
	if ! grep -qE '"telegram":[[:space:]]*1e9,' "$unl/pkg/channels/manager.go"; then
		echo "compare.sh: the Telegram rate in pkg/channels/manager.go was not found; PicoClaw changed, update the patch" >&2
		exit 1
	fi
	log "building PicoClaw unlimited (Telegram rate 1e9/s)"
	(cd "$unl" && CGO_ENABLED=0 go build -tags goolm,stdjson -o "$WORK/picoclaw-unlimited" ./cmd/picoclaw)
}

# run_one AGENT LOAD PUSH N: one run, its output in
# $WORK/runs/LOAD-PUSH-AGENT-N.txt.
run_one() {
	local agent=$1 load=$2 push=$3 n=$4 args
	case $load in
	limits) read -ra args <<<"${LIMITS_LOAD:--chats 100 -messages 10}" ;;
	flood)
		read -ra args <<<"${FLOOD_LOAD:--chats 1000 -messages 5}"
		args+=(-limits=false -workers 16)
		;;
	*) echo "unknown load $load" >&2; exit 2 ;;
	esac
	case $push in
	closed) args+=(-closed -think "${THINK:-0s}") ;;
	flood) ;;
	*) echo "unknown push $push" >&2; exit 2 ;;
	esac
	args+=(-stall 15s) # PicoClaw leaves replies out: do not wait a minute for them
	case $agent in
	kairos) args+=(-bin "$KAIROS_BIN") ;;
	picoclaw)
		local bin=$PICOCLAW_BIN
		[[ $load == flood ]] && bin=$PICOCLAW_UNLIMITED_BIN
		args+=(-peer picoclaw -peer-bin "$bin")
		;;
	esac
	local out=$WORK/runs/$load-$push-$agent-$n.txt
	log "run $load $push $agent #$n (load average $(cut -d' ' -f1-3 /proc/loadavg))"
	if ! "$WORK/load" "${args[@]}" >"$out" 2>&1; then
		echo "compare.sh: $load $push $agent #$n failed:" >&2
		tail -30 "$out" >&2
		exit 1
	fi
}

# figures FILE prints one line of the run's figures: throughput sustained
# p50_ms p99_ms cpu_s idle_mb peak_mb model_kb answered lost doubled stale
# model_saw model_requests
figures() {
	awk '
	BEGIN { thr = sus = p50 = p99 = cpu = idle = peak = mkb = ans = lost = dbl = stale = saw = req = 0 }
	/^answered / { split($2, a, "/"); ans = a[1]; thr = $(NF-1) }
	/^sustained/ { sus = $(NF-1) }
	/^end-to-end latency/ { p50 = $8; p99 = $14 }
	/^lost / { lost = $2 + 0; dbl = $4 + 0; stale = $7 + 0 }
	/^model request bodies/ { mkb = $5 }
	/^RSS:/ { idle = $3; peak = $9; cpu = $13 }
	/^messages the model saw/ { saw = $5; req = $9 }
	END { printf "%s %s %s %s %s %s %s %s %s %s %s %s %s %s\n", thr, sus, p50, p99, cpu, idle, peak, mkb, ans, lost, dbl, stale, saw, req }
	' "$1"
}

# table prints the medians (and ranges) per load and agent, and the
# ratio kairos / PicoClaw of the medians.
table() {
	local load push agent f
	for load in $LOADS; do
		for push in $PUSHES; do
			for agent in kairos picoclaw; do
				for f in "$WORK"/runs/"$load-$push-$agent"-*.txt; do
					if [[ -e $f ]]; then echo "$load/$push $agent $(figures "$f")"; fi
				done
			done
		done
	done | awk '
	function med(list, n,   a, i, j, t) {
		n = split(list, a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
		lo = a[1]; hi = a[n]
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	BEGIN {
		nm = split("throughput_/s sustained_/s p50_ms p99_ms CPU_s idle_RSS_MB peak_RSS_MB model_request_KB replies lost doubled stale_placeholders model_saw model_requests CPU_per_reply_ms", names, " ")
	}
	{
		if (!($1 in loads)) order[++nl] = $1
		key = $1 SUBSEP $2; loads[$1] = 1
		for (i = 1; i <= 14; i++) v[key, i] = v[key, i] " " $(i + 2)
		v[key, 15] = v[key, 15] " " ($11 > 0 ? $7 * 1000 / $11 : 0)
		runs[key]++
	}
	END {
		for (o = 1; o <= nl; o++) {
			l = order[o]
			printf "\n%s (kairos runs %d, picoclaw runs %d)\n", l, runs[l, "kairos"], runs[l, "picoclaw"]
			printf "%-18s %-26s %-26s %s\n", "measure", "kairos median [range]", "picoclaw median [range]", "kairos/picoclaw"
			for (i = 1; i <= nm; i++) {
				mk = med(v[l, "kairos", i]); kr = "[" lo "-" hi "]"
				mp = med(v[l, "picoclaw", i]); pr = "[" lo "-" hi "]"
				ratio = (mp + 0 != 0) ? sprintf("%.2f", mk / mp) : "-"
				printf "%-18s %-26s %-26s %s\n", names[i], sprintf("%.2f %s", mk, kr), sprintf("%.2f %s", mp, pr), ratio
			}
		}
	}'
}

main() {
	if [[ ${1:-} == table ]]; then table; exit 0; fi
	log "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
	build_kairos
	build_picoclaw
	(cd "$ROOT" && go build -o "$WORK/load" ./bench/load)
	rm -f "$WORK"/runs/*.txt
	local load push n
	for load in $LOADS; do
		for push in $PUSHES; do
			for n in $(seq 1 "$ROUNDS"); do
				run_one kairos "$load" "$push" "$n"
				run_one picoclaw "$load" "$push" "$n"
			done
		done
	done
	log "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
	table
	echo
	echo "runs: $WORK/runs (one file per run, the whole bench/load report)"
}

main "$@"
