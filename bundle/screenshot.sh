#!/bin/sh
# make screenshot: starts the real Perch under Xvfb with a tiny fixture model, attaches
# an image through the same path a drop takes, asks about it, waits for the answer, and
# writes PNGs of the main window, the quick-ask popup, the models and settings pages, then
# of a chat that outgrew a small context (its marker), a download with no network (its
# error; the window must keep its width) and the popup opened by `perch quick-ask` with
# no tray host; then gives feedback on a few answers, trains a DPO adapter from it on the
# Teach page (shot right after Start, mid-run and done) and chats with the adapter switched on
# (teach-*.png); then types on the real keyboard (xdotool) right after an answer's pencil
# (correction-typed.png), reopens the long chat from the sidebar (chat-reopened.png) and shows
# the chat and Teach at 600x500 (small-main.png, small-teach.png: one width); last, sets up two
# MCP servers on Settings → Tools, one served from inside the app and one that fails at start
# (tools-settings.png), and has the model call a tool: its card waiting (tools-approve.png), then
# allowed, the result folded and the answer after it (tools-result.png).
# Fails (exit 1) if the window never appears or the answer never arrives.
#   bundle/screenshot.sh BIN MODEL_DIR OUT_DIR
set -u
bin=$1 model=$2 out=$3
# SCREENSHOT_TIMEOUT: seconds for the whole story (a busy machine trains slowly).
limit=${SCREENSHOT_TIMEOUT:-600}
[ -x "$bin" ] || { echo "screenshot: $bin is not built" >&2; exit 1; }
[ -f "$model/config.json" ] || { echo "screenshot: no model at $model" >&2; exit 1; }
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
rm -rf "$out" && mkdir -p "$out" "$home/.config" "$home/.cache"
# HF_ENDPOINT: a port nothing listens on, so a download fails as it does offline.
HOME="$home" XDG_CONFIG_HOME="$home/.config" XDG_CACHE_HOME="$home/.cache" XDG_DATA_HOME="$home/.local" FYNE_THEME=light \
  HF_ENDPOINT=http://127.0.0.1:9 \
  timeout $((limit + 60)) sh bundle/xvfb-run.sh "$bin" gui -data-dir "$home/data" -model "$PWD/$model" -screenshots "$out" -timeout ${limit}s \
  -attach assets/icon-256.png -ask "What bird is this?" -seed "${SCREENSHOT_SEED:-1}" -context 1024 -teach-demo \
  > "$home/app.log"
rc=$?
grep -v -e '^$' "$home/app.log"
if [ $rc -ne 0 ] || ! grep -q "perch: screenshots in" "$home/app.log"; then
  echo "screenshot: FAILED (exit $rc): the window did not appear or the answer did not arrive" >&2
  exit 1
fi
for f in main.png quickask.png models.png settings.png context-marker.png download-offline.png quickask-command.png \
  teach-feedback.png teach-started.png teach-running.png teach-done.png teach-adapter-menu.png teach-adapter-chat.png \
  correction-typed.png chat-reopened.png small-main.png small-teach.png \
  tools-settings.png tools-approve.png tools-result.png; do
  [ -s "$out/$f" ] || { echo "screenshot: $out/$f was not written" >&2; exit 1; }
done
ls -l "$out"
