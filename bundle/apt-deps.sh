#!/bin/sh
# Installs the named Debian packages that are missing, or says exactly which
# are missing when it cannot (not root, or not Debian).
missing=""
for p in "$@"; do
  # npm may come with a Node.js that is not Debian's; its command is enough.
  [ "$p" = npm ] && command -v npm >/dev/null 2>&1 && continue
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "perch: not a Debian system; install the equivalents of:$missing" >&2
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "perch: missing Debian packages:$missing" >&2
  echo "perch: run: sudo apt-get install -y --no-install-recommends$missing" >&2
  exit 1
fi
echo "perch: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends $missing >/dev/null || {
  echo "perch: apt-get install failed for:$missing" >&2; exit 1; }
