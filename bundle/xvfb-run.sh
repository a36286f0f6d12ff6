#!/bin/sh
# Runs a command on a private Xvfb display inside its own DBus session, the way
# the GUI runs in CI: bundle/xvfb-run.sh CMD [ARGS...]. Fails if Xvfb does not start.
set -u
for t in Xvfb dbus-run-session xwininfo; do
  command -v "$t" >/dev/null 2>&1 || { echo "xvfb-run: $t is missing (make deps installs it)" >&2; exit 1; }
done
d=90
while [ -e "/tmp/.X11-unix/X$d" ] || [ -e "/tmp/.X$d-lock" ]; do d=$((d + 1)); done
log=$(mktemp)
Xvfb ":$d" -screen 0 1280x900x24 -nolisten tcp >"$log" 2>&1 &
xpid=$!
trap 'kill $xpid 2>/dev/null; wait $xpid 2>/dev/null; rm -f "$log"' EXIT
trap 'exit 1' INT TERM
i=0
until DISPLAY=":$d" xwininfo -root >/dev/null 2>&1; do
  i=$((i + 1))
  if [ $i -gt 100 ] || ! kill -0 $xpid 2>/dev/null; then
    echo "xvfb-run: Xvfb :$d did not start:" >&2; cat "$log" >&2; exit 1
  fi
  sleep 0.1
done
out=$(mktemp)
# The command's output is shown on exit, also when a timeout ends the run (a run
# that hangs then says how far it got).
trap 'kill $xpid 2>/dev/null; wait $xpid 2>/dev/null; grep -v -e "dbus-daemon\[" -e XDG_RUNTIME_DIR "$out"; rm -f "$log" "$out"' EXIT
DISPLAY=":$d" dbus-run-session -- "$@" >"$out" 2>&1
rc=$?
exit $rc
