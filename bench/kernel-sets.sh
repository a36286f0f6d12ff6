#!/bin/sh
# Prints one line "SET GODEBUG" per assembly kernel set of the Go backend
# that this CPU runs, fastest first: GODEBUG turns the faster sets off, and
# the set each setting leaves is the fast-path default TestKernelSets names.
# Used by `make bench-kernel-sets` and bench/llamacpp/compare.sh.
set -eu
cd "$(dirname "$0")/.."
seen=
for dbg in "" cpu.avx512vnni=off cpu.avx512f=off cpu.avx512f=off,cpu.avxvnni=off; do
	# (Go's runtime warns that it does not know avx512vnni; x/sys/cpu does.)
	set=$(GODEBUG=$dbg go test -count=1 -v -run '^TestKernelSets$' ./engine/gocpu 2>&1 |
		sed -n 's/.*fast path default: \([a-z0-9]*\).*/\1/p' | head -1)
	case " $seen " in *" $set "*) continue ;; esac
	seen="$seen $set"
	echo "$set $dbg"
done
