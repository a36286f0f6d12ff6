#!/bin/sh
# Perch's Go backend and llama.cpp side by side on the shapes of
# BenchmarkEngine/e2b-shaped-4bit, in one run: 1 and 2 threads, then 2
# threads with one other busy process; Perch once per kernel set this CPU
# runs (bench/kernel-sets.sh). This script builds nothing: pass a
# llama-bench built elsewhere and GGUF files of random weights with the
# E2B-shaped text model's shapes (Q4_0, and optionally Q4_K): README.md
# beside this script says how to write one (randgguf) and gives a measured table.
#
#   bench/llamacpp/compare.sh LLAMA_BENCH MODEL_Q4_0.gguf [MODEL_Q4_K.gguf]
#
# Perch decodes 16 tokens after a 64-token prompt; llama.cpp's decode runs
# at the same depth (-d 64). Prefill: 64 and 256 prompt tokens. Then decode
# in pairs taken in turn (llama.cpp, then Perch's default set), PAIRS rounds
# (default 8) per thread count: on a shared machine the bandwidth drifts
# within seconds, so each pair's ratio is the figure and their median the
# summary.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 LLAMA_BENCH MODEL_Q4_0.gguf [MODEL_Q4_K.gguf]" >&2; exit 2; }
llama=$1; shift
models=$(echo "$@" | tr ' ' ',')
cd "$(dirname "$0")/../.."

perch() { # $1: label; every kernel set, as users run it and /exact (not /schema);
	# each case opens its engine once, warms it up with one request (as llama-bench
	# does) and reports the median of 3 (llama-bench -r 3 reports their mean)
	bench/kernel-sets.sh | while read -r set dbg; do
		GODEBUG=$dbg go test -run '^$' -bench 'BenchmarkEngine/e2b-shaped-4bit/go' \
			-skip 'BenchmarkEngine/e2b-shaped-4bit/go/schema' -benchtime 3x ./engine 2>&1 |
			awk -v label="$1" -v set="$set" '/^BenchmarkEngine/ {
				name = $1; sub(/-[0-9]+$/, "", name); out = ""
				for (i = 3; i < NF; i++) if ($(i+1) ~ /tok\/s|MB\/token|GB\/s|share/) out = out sprintf(" %s=%s", $(i+1), $i)
				printf "perch %-9s %-10s %s%s\n", label, set, name, out }'
	done
}

llamacpp() { # $1: label, $2: threads
	# -o jsonl: one JSON object per test; fields are read by name, so a
	# llama-bench that adds or moves columns reads the same.
	{ "$llama" -m "$models" -t "$2" -p 64,256 -n 0 -r 3 -o jsonl
	  "$llama" -m "$models" -t "$2" -p 0 -n 16 -d 64 -r 3 -o jsonl; } 2>/dev/null |
		awk -v label="$1" '
		function field(k,   v) { # the value of "k": number or "string"
			if (!match($0, "\"" k "\": *(\"[^\"]*\"|[-0-9.eE+]+)")) return ""
			v = substr($0, RSTART, RLENGTH); sub(/^"[^"]*": */, "", v); gsub(/"/, "", v); return v }
		/^\{/ {
			if (field("n_prompt") > 0) what = "prefill_" field("n_prompt") "_tok/s="; else what = "decode_" field("n_gen") "_tok/s="
			printf "llama.cpp %-9s %s threads=%s %s%.2f\n", label, field("model_type"), field("n_threads"), what, field("avg_ts") }'
}

pairs() { # $1: model, $2: threads; decode only, in turn, $PAIRS rounds, then the median ratio
	for i in $(seq "${PAIRS:-8}"); do
		l=$("$llama" -m "$1" -t "$2" -p 0 -n 16 -d 64 -r 3 -o jsonl 2>/dev/null |
			sed -n 's/.*"avg_ts": *\([0-9.eE+-]*\).*/\1/p' | head -1)
		p=$(cd engine && "$tmp/engine.test" -test.run '^$' -test.bench 'BenchmarkEngine/e2b-shaped-4bit/go$' \
			-test.skip 'BenchmarkEngine/e2b-shaped-4bit/go/.' -test.benchtime 3x -test.cpu "$2" 2>&1 |
			awk '/^BenchmarkEngine/ { for (i = 3; i < NF; i++) if ($(i+1) == "decode_tok/s") print $i }')
		echo "$l $p"
	done | awk -v t="$2" '{ r[NR] = $2 / $1; printf "pair threads=%s %d llama.cpp=%.2f perch=%.2f ratio=%.3f\n", t, NR, $1, $2, r[NR] }
		END { for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) if (r[j] < r[i]) { x = r[i]; r[i] = r[j]; r[j] = x }
			printf "pairs threads=%s: %d, ratio min %.3f median %.3f max %.3f\n", t, NR, r[1], (r[int((NR+1)/2)] + r[int(NR/2)+1]) / 2, r[NR] }'
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/engine.test" ./engine
echo "== $(uptime)"
perch quiet
llamacpp quiet 1
llamacpp quiet 2
sh -c 'while :; do :; done' &
busy=$!
trap 'kill $busy 2>/dev/null || :; rm -rf "$tmp"' EXIT
echo "== one busy process: $(uptime)"
perch busy
llamacpp busy 2
kill $busy
echo "== decode in pairs: $(uptime)"
first=${models%%,*}
pairs "$first" 2
pairs "$first" 1
echo "== $(uptime)"
