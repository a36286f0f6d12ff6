#!/bin/sh
# Perch's Go backend and llama.cpp side by side on the shapes of
# BenchmarkEngine/e2b-shaped-4bit, in one run: 1 and 2 threads, then 2
# threads with one other busy process. This script builds nothing: pass a
# llama-bench built elsewhere and GGUF files of random weights with the
# E2B-shaped text model's shapes (Q4_0, and optionally Q4_K).
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

perch() { # $1: label
	go test -run '^$' -bench 'BenchmarkEngine/e2b-shaped-4bit/go' -benchtime 1x ./engine 2>&1 |
		awk -v label="$1" '/^BenchmarkEngine/ {
			name = $1; sub(/-[0-9]+$/, "", name); out = ""
			for (i = 3; i < NF; i++) if ($(i+1) ~ /tok\/s|MB\/token|GB\/s|share/) out = out sprintf(" %s=%s", $(i+1), $i)
			printf "perch %-9s %s%s\n", label, name, out }'
}

llamacpp() { # $1: label, $2: threads
	{ "$llama" -m "$models" -t "$2" -p 64,256 -n 0 -r 3 -o csv
	  "$llama" -m "$models" -t "$2" -p 0 -n 16 -d 64 -r 3 -o csv; } 2>/dev/null |
		awk -F'","' -v label="$1" 'NR > 1 && $1 !~ /^build_commit/ {
			for (i = 1; i <= NF; i++) gsub(/"/, "", $i)
			if ($34 > 0) what = "prefill_" $34 "_tok/s="; else what = "decode_tok/s="
			printf "llama.cpp %-9s %s threads=%s %s%.2f\n", label, $7, $12, what, $40 }'
}

echo "== $(uptime)"
perch quiet
llamacpp quiet 1
llamacpp quiet 2
sh -c 'while :; do :; done' &
busy=$!
trap 'kill $busy 2>/dev/null' EXIT
echo "== one busy process: $(uptime)"
perch busy
llamacpp busy 2
kill $busy
echo "== $(uptime)"
