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
# at the same depth (-d 64). Prefill: 64 and 256 prompt tokens.
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

echo "== $(uptime)"
perch quiet
llamacpp quiet 1
llamacpp quiet 2
sh -c 'while :; do :; done' &
busy=$!
trap 'kill $busy 2>/dev/null || :' EXIT
echo "== one busy process: $(uptime)"
perch busy
llamacpp busy 2
kill $busy
echo "== $(uptime)"
