#!/usr/bin/env bash
# gate-harness.sh measures the README's CI gate on this machine: its false alarms (the same
# configuration on both sides) and its power against known slowdowns, and writes a Markdown
# summary (exit 0/1/3/4 counts per scenario, rounds, processes, wall time) with the commit.
# See docs/gate.md.
#
# Every trial measures a fresh baseline and then the current side, exactly as the README's
# recipe does (MODE=auto), or alternates RUNS single-round runs of base and current and
# compares them (MODE=fixed). Everything is set by environment variables:
#   SAME=40 POWER=10         trials: same-configuration, and per power scenario
#   DURATION=250ms WARMUP=100ms  per point (the recipe: --duration 250ms --warmup 100ms)
#   BASE_ROUNDS=20 BUDGET=20 MODE=auto: the baseline's rounds, the current side's auto budget
#   RPP=1                    rounds per process, both sides (--rounds-per-process; 0: one process)
#   RUNS=10                  MODE=fixed: runs per side, base and current alternated
#   SCENARIOS="same slow20 credits1 windows onecpu"; also: stale (one baseline, the first
#                            trial's, judged by every trial), pair (one process a side,
#                            BASE_ROUNDS rounds each, judged by compare: never a confident change),
#                            slow12 (a calibrated +12% against the default 10% p50 tolerance:
#                            never ok), neighbour (the same configuration while one CPU-bound
#                            process, pinned to CPU 1, runs through both sides) and neighbourul
#                            (neighbour, the current side judged with --under-load)
#   N_<scenario>=K           that scenario's trials (default SAME for same, stale and the
#                            neighbours, else POWER)
#   INTERLEAVE=1             trial 1 of every scenario, then trial 2 of every scenario, ...: a
#                            stale baseline is then judged over the whole campaign
#   UNDERLOAD=1 or 0         the current side judges with --under-load or --under-load=false
#                            (unset: the tool's default, --under-load from 54b895a on)
#   GAP=S                    sleep S seconds after every trial (to spread a stale baseline's
#                            trials over a longer span)
#   OUT=docs/gate-results.md WORK=$(mktemp -d) BIN=(built from this tree)
# A smoke run: SAME=2 POWER=2 DURATION=150ms WARMUP=50ms BASE_ROUNDS=8 BUDGET=8 scripts/gate-harness.sh
set -euo pipefail

cd "$(dirname "$0")/.."
SAME=${SAME:-40}
POWER=${POWER:-10}
DURATION=${DURATION:-250ms}
WARMUP=${WARMUP:-100ms}
BASE_ROUNDS=${BASE_ROUNDS:-20}
BUDGET=${BUDGET:-20}
MODE=${MODE:-auto}
RUNS=${RUNS:-10}
RPP=${RPP:-1}
SCENARIOS=${SCENARIOS:-same slow20 credits1 windows onecpu}
INTERLEAVE=${INTERLEAVE:-0}
UNDERLOAD=${UNDERLOAD:-}
GAP=${GAP:-0}
OUT=${OUT:-docs/gate-results.md}
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if ! git diff --quiet HEAD 2>/dev/null; then commit="$commit (modified)"; fi
if [[ -z ${BIN:-} ]]; then
	BIN=$WORK/rpcrdma-bench
	CGO_ENABLED=0 go build -o "$BIN" ./cmd/rpcrdma-bench
fi

# The README's recipe, on the soft provider.
recipe=(sweep --thresholds 4k --sizes 64,4k,64k --duration "$DURATION" --warmup "$WARMUP" --shuffle -q)

# p50at64 prints the median over rounds of the 64 B point's p50 (ns) of a results file.
p50at64() {
	jq '[.points[] | select(.params.call_bytes == 64 and .rtt.p50_ns != null) | .rtt.p50_ns] | sort | .[length/2|floor]' "$1"
}

# calibrate T prints a post cost (--soft-post-cost: the soft provider spins every poster
# that long per send queue work request) that raises the recipe's 64 B point's median RTT by
# T percent (within T/5 points) and the rise it measured. A post cost adds to each side's
# work per RPC, so its effect grows smoothly with it; a completion delay's (--soft-delay)
# jumped at depth 16 (+9% at 355 ns, +22% at 363 ns on this machine), which no search can
# calibrate. It searches from a two-hundredth of the median RTT, times 4 until the effect
# exceeds T, then halving the bracket geometrically; 5 rounds per try, at most 8 tries.
calibrate() {
	local t=$1 base lo=0 hi=0 d e i cost effect
	# A calibration run that fails (a point that measured nothing) still files its other points.
	"$BIN" "${recipe[@]}" --repeat 5 --out "$WORK/cal-base.json" >/dev/null 2>&1 || true
	base=$(p50at64 "$WORK/cal-base.json")
	d=$((base / 200))
	for i in $(seq 8); do
		"$BIN" "${recipe[@]}" --repeat 5 --soft-post-cost "${d}ns" --out "$WORK/cal-$t-$i.json" >/dev/null 2>&1 || true
		e=$(awk -v b="$base" -v r="$(p50at64 "$WORK/cal-$t-$i.json")" 'BEGIN{printf "%.3f", r/b-1}')
		echo "calibration +$t%: 64 B p50 ${base} ns; --soft-post-cost ${d}ns: $e" >&2
		cost="${d}ns" effect=$(awk -v e="$e" 'BEGIN{printf "%+.0f%%", e*100}')
		if awk -v e="$e" -v t="$t" 'BEGIN{exit !(e >= t*0.008 && e <= t*0.012)}'; then
			break
		elif awk -v e="$e" -v t="$t" 'BEGIN{exit !(e < t/100)}'; then
			lo=$d
		else
			hi=$d
		fi
		if ((hi == 0)); then
			d=$((d * 4))
		else
			d=$(awk -v l="$lo" -v h="$hi" 'BEGIN{printf "%d", (l > 0 ? sqrt(l*h) : h/2)}')
		fi
	done
	echo "$cost $effect"
}

# change prints the current side's command prefix and extra flags for a scenario.
change() {
	case $1 in
	same | stale | pair | neighbour) ;;
	neighbourul) echo "--under-load" ;;
	slow20) echo "--soft-post-cost $COST20" ;;
	slow12) echo "--soft-post-cost $COST12" ;;
	credits1) echo "--credits 1" ;;
	windows) echo "--memory windows" ;;
	onecpu) echo "--cpus 0" ;; # and taskset -c 0: the responder's poller shares CPU 0
	*) echo "unknown scenario $1" >&2; exit 2 ;;
	esac
}

# desc describes a scenario's change for the table.
desc() {
	case $1 in
	same) echo "none (same configuration)" ;;
	stale) echo "none (same configuration; one baseline for every trial)" ;;
	pair) echo "none (same configuration; one process a side, \`compare\`)" ;;
	neighbour) echo "none (same configuration; a CPU-bound process on CPU 1 through both sides)" ;;
	neighbourul) echo "none (as neighbour; the current side \`--under-load\`)" ;;
	slow20) echo "\`--soft-post-cost $COST20\` (calibrated: $EFFECT20 on the 64 B p50)" ;;
	slow12) echo "\`--soft-post-cost $COST12\` (calibrated: $EFFECT12 on the 64 B p50; tolerance 10%)" ;;
	onecpu) echo "\`taskset -c 0\` and \`--cpus 0\`: both pollers on CPU 0" ;;
	*) echo "\`$(change "$1")\`" ;;
	esac
}

# trial runs one comparison of scenario $1 number $2 in $3 and prints its exit status and
# the current side's rounds. The stale scenario's first trial measures the baseline every
# trial of it judges against, again while its check says unfit (at most 3 times).
trial() {
	local s=$1 n=$2 d=$3 extra pre=() code spin=""
	extra=$(change "$s")
	case $UNDERLOAD in 1) extra="$extra --under-load" ;; 0) extra="$extra --under-load=false" ;; esac
	[[ $s == onecpu ]] && pre=(taskset -c 0)
	mkdir -p "$d/base" "$d/cur"
	if [[ $s == neighbour* ]]; then
		taskset -c 1 sh -c 'while :; do :; done' &
		spin=$!
	fi
	set +e
	if [[ $s == pair ]]; then
		"$BIN" "${recipe[@]}" --seed "$n" --repeat "$BASE_ROUNDS" --rounds-per-process 0 --out "$d/base/base.json" >/dev/null 2>&1
		"$BIN" "${recipe[@]}" --seed "$n" --repeat "$BASE_ROUNDS" --rounds-per-process 0 --out "$d/cur/cur.json" >/dev/null 2>&1
		"$BIN" compare "$d/base" -- "$d/cur" >"$d/verdict.txt" 2>&1
		code=$?
	elif [[ $MODE == fixed ]]; then
		for i in $(seq "$RUNS"); do
			"$BIN" "${recipe[@]}" --seed "$n$i" --out "$d/base/run-$i.json" >/dev/null 2>&1
			# shellcheck disable=SC2086
			"${pre[@]}" "$BIN" "${recipe[@]}" $extra --seed "$n$i" --out "$d/cur/run-$i.json" >/dev/null 2>&1
		done
		"$BIN" compare "$d/base" -- "$d/cur" >"$d/verdict.txt" 2>&1
		code=$?
	else
		local base=$d/base
		if [[ $s == stale && $n -gt 1 ]]; then
			base=$WORK/stale-1/base
		elif [[ $s == stale ]]; then
			# The baseline every trial judges against is kept only when its check says fit,
			# as the README's recipe says; measured again up to twice.
			for a in 1 2 3; do
				"$BIN" "${recipe[@]}" --seed "$a" --repeat "$BASE_ROUNDS" --rounds-per-process "$RPP" --out "$d/base/base.json" >"$d/baseline.txt" 2>&1
				tail -1 "$d/baseline.txt" | grep -q "^fit for a baseline" && break
			done
			echo "stale baseline: attempt $a: $(tail -1 "$d/baseline.txt")" >&2
		else
			"$BIN" "${recipe[@]}" --seed "$n" --repeat "$BASE_ROUNDS" --rounds-per-process "$RPP" --out "$d/base/base.json" >"$d/baseline.txt" 2>&1
		fi
		# shellcheck disable=SC2086
		"${pre[@]}" "$BIN" "${recipe[@]}" $extra --seed "$n" --repeat "auto:$BUDGET" --rounds-per-process "$RPP" --baseline "$base" \
			--report "$d/verdict.json" --out "$d/cur/cur.json" >"$d/verdict.txt" 2>&1
		code=$?
	fi
	set -e
	if [[ -n $spin ]]; then
		kill "$spin"
		wait "$spin" 2>/dev/null || true
	fi
	# A confident improvement of the same configuration is a false alarm too.
	[[ $s == pair && $code == 0 ]] && grep -q "(improved)" "$d/verdict.txt" && code=improved
	local rounds
	rounds=$(jq -s '[.[].points[] | (.round // 1)] | max' "$d"/cur/*.json 2>/dev/null || echo "?")
	[[ $MODE == fixed ]] && rounds=$RUNS
	echo "$code $rounds"
}

COST20="" EFFECT20="" COST12="" EFFECT12=""
case " $SCENARIOS " in *" slow20 "*) read -r COST20 EFFECT20 < <(calibrate 20) ;; esac
case " $SCENARIOS " in *" slow12 "*) read -r COST12 EFFECT12 < <(calibrate 12) ;; esac
mkdir -p "$(dirname "$OUT")"

# trials prints scenario $1's number of trials.
trials() {
	local v="N_$1"
	if [[ -n ${!v:-} ]]; then
		echo "${!v}"
	elif [[ $1 == same || $1 == stale || $1 == neighbour* ]]; then
		echo "$SAME"
	else
		echo "$POWER"
	fi
}

declare -A e0 e1 e3 e4 other rsum wall
for s in $SCENARIOS; do e0[$s]=0 e1[$s]=0 e3[$s]=0 e4[$s]=0 other[$s]=0 rsum[$s]=0 wall[$s]=0; done
# run1 runs trial $2 of scenario $1 and counts it.
run1() {
	local s=$1 n=$2 code rounds start
	start=$(date +%s)
	read -r code rounds < <(trial "$s" "$n" "$WORK/$s-$n")
	case $code in 0) e0[$s]=$((e0[$s] + 1)) ;; 1) e1[$s]=$((e1[$s] + 1)) ;; 3) e3[$s]=$((e3[$s] + 1)) ;; 4) e4[$s]=$((e4[$s] + 1)) ;; *) other[$s]=$((other[$s] + 1)) ;; esac
	[[ $rounds =~ ^[0-9]+$ ]] && rsum[$s]=$((rsum[$s] + rounds))
	wall[$s]=$((wall[$s] + $(date +%s) - start))
	echo "$(date -u +%H:%M:%S) $s trial $n: exit $code, $rounds round(s) ($WORK/$s-$n)" >&2
	if ((GAP > 0)); then sleep "$GAP"; fi
}
total_start=$(date +%s)
if ((INTERLEAVE)); then
	most=0
	for s in $SCENARIOS; do (($(trials "$s") > most)) && most=$(trials "$s"); done
	for n in $(seq "$most"); do
		for s in $SCENARIOS; do ((n <= $(trials "$s"))) && run1 "$s" "$n"; done
	done
else
	for s in $SCENARIOS; do
		for n in $(seq "$(trials "$s")"); do run1 "$s" "$n"; done
	done
fi
rows=()
for s in $SCENARIOS; do
	t=$(trials "$s")
	# The share of the scenario's points that other processes disturbed (host_other_cpu > 10).
	dist=$(jq -s '[.[].points[] | select(.host_other_cpu != null) | (.host_other_cpu > 10)] | if length == 0 then "-" else ((map(select(.)) | length) * 100 / length | floor | tostring) + "%" end' -r "$WORK/$s"-*/base/*.json "$WORK/$s"-*/cur/*.json 2>/dev/null || echo "?")
	rows+=("| $s | $(desc "$s") | $t | ${e0[$s]} | ${e1[$s]} | ${e3[$s]} | ${e4[$s]} | ${other[$s]} | $(awk -v s="${rsum[$s]}" -v n="$t" 'BEGIN{printf "%.1f", s/n}') | $dist | ${wall[$s]}s |")
done
{
	echo "# CI gate: false alarms and power"
	echo
	echo "Commit $commit, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $(uname -r); MODE=$MODE,"
	if [[ $MODE == fixed ]]; then
		echo "$RUNS runs per side alternated, then \`compare\`;"
	else
		echo "baseline \`--repeat $BASE_ROUNDS --rounds-per-process $RPP\`, current \`--repeat auto:$BUDGET --rounds-per-process $RPP --baseline\`;"
	fi
	echo "recipe \`${recipe[*]}\`$([[ $UNDERLOAD == 1 ]] && echo "; current side \`--under-load\`")$([[ $UNDERLOAD == 0 ]] && echo "; current side \`--under-load=false\`")$( ((INTERLEAVE)) && echo "; scenarios interleaved")"
	echo "(stale: the first trial's baseline judged by every trial); total $(($(date +%s) - total_start))s."
	echo
	echo "| scenario | current side's change | trials | exit 0 ok | exit 1 regressed | exit 3 inconclusive | exit 4 failed | other | mean rounds (current) | points disturbed by other processes | wall time |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "Targets: same and stale, at most 5% exit 1 and at most 15% exit 3; neighbour, at most 5% exit 1"
	echo "and at most 40% exit 3; pair, never exit 1 (nor a confident improvement); slow12, none exit 0;"
	echo "every other scenario at least 90% exit 1 and none exit 0."
} | tee "$OUT"
