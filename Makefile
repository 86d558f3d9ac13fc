# devicectl: what people type. Longer jobs live in scripts/; CI (.ci/run) runs test, chaos, fuzz,
# test-arm, cross and deb-test, and holds the armv6 binary to its 9 MiB budget.
#
#   make build   stamped binary in bin/ with every command, not stripped (74.3 MB on amd64);
#                TAGS=openapi adds OpenAPI tool sets
#   make test    gofmt, go vet, go mod tidy check, board-deps, go test -race, and tests again with
#                -tags openapi (command, daemon) and with BOARD_TAGS (command, daemon, config)
#   make cross   stripped static linux binaries in dist/, with SHA256SUMS: the boards' (armv6,
#                armv7, arm64, riscv64) without BOARD_TAGS's features (armv6: 9,429,154 bytes, of
#                9 MiB), amd64 with everything
#   make feature-sizes  what each feature of BOARD_TAGS costs the armv6 binary, in bytes
#   make bench   the benchmarks, with allocations, against the targets in docs/design.md
#   make fuzz    every fuzz target for FUZZTIME each
#   make chaos   the chaos suite: an agent against a hostile server for CHAOS_TIME (30s) on each kind of tool, under -race
#   make netfault  the device across a veth pair into a network namespace, the link cut (root)
#   make lint    go vet, gofmt and the board build's dependencies (no agent package)
#   make test-arm  the tests under qemu as an ARMv6 (Pi Zero) and an ARM64 board run them
#                (test-armv6, test-arm64 one at a time)
#   make deb     .deb packages (armhf, arm64, amd64, riscv64) in dist/ from make cross's binaries
#   make deb-test  builds, installs, removes and purges the package here (root, Debian)
#   make print-board-tags  BOARD_TAGS, for scripts;  make clean  removes bin/ and dist/

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT   ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
LDFLAGS  := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
FUZZTIME ?= 10s
# Build tags: openapi links OpenAPI tool sets (kin-openapi, +1.8 MB: past the armv6 budget).
TAGS     ?=
# What the board binaries leave out, one tag per feature: serve, sim and swarm, which are for
# laptops and servers, net/http's HTTP/2 (the device speaks HTTP/1.1), HTTPS for the OpenTool
# server (Go's TLS server; opentool.cert_file is then refused), MCP tool sets (the MCP Go SDK's
# client, +1.4 MB; toolsets.mcp is then refused), speech to text on the device (the board sends
# audio to the server) and the wake word. internal/buildfeatures/doc.go lists them; make
# feature-sizes measures what each costs. Left out, they keep the stripped armv6 binary under its
# 9 MiB budget. A command left out says so and exits 2.
BOARD_TAGS ?= devicectl_omit_serve,devicectl_omit_sim,devicectl_omit_swarm,nethttpomithttp2,devicectl_omit_opentooltls,devicectl_omit_mcpsets,devicectl_omit_stt,devicectl_omit_wake
# Go files that gofmt checks: all but .git and testdata (which may hold Go that is broken on purpose).
GOFILES   = $(shell find . -name '*.go' -not -path './.git/*' -not -path '*/testdata/*')

export GO VERSION COMMIT FUZZTIME TAGS BOARD_TAGS

.PHONY: build test lint fmt-check vet tidy-check board-deps print-board-tags cross feature-sizes bench fuzz chaos netfault test-arm test-armv6 test-arm64 clean

build:
	$(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o bin/devicectl ./cmd/devicectl

test: lint tidy-check
	$(GO) test -race ./...
	$(GO) test -race -tags openapi ./cmd/devicectl ./internal/daemon
	$(GO) test -tags '$(BOARD_TAGS)' ./cmd/devicectl ./internal/daemon ./internal/config

lint: fmt-check vet board-deps

fmt-check:
	@out=$$(gofmt -l $(GOFILES)); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	$(GO) vet -tags openapi ./cmd/devicectl ./internal/daemon
	$(GO) vet -tags '$(BOARD_TAGS)' ./...

tidy-check:
	$(GO) mod tidy -diff

# The board binaries link no agent package: serve and sim, which run the agent server, are left
# out of them, and the agent's modules (a2a-go, openai-go, sqlite) would break the 9 MiB budget.
board-deps:
	@out=$$($(GO) list -deps -tags '$(BOARD_TAGS)' ./cmd/devicectl | grep -E '/devicectl/agent(/|$$)' || true); \
	if [ -n "$$out" ]; then echo "the board build links agent packages:"; echo "$$out"; exit 1; fi

print-board-tags:
	@echo '$(BOARD_TAGS)'

cross:
	bash scripts/cross.sh

feature-sizes:
	bash scripts/feature-sizes.sh

bench:
	bash scripts/bench.sh

fuzz:
	bash scripts/fuzz.sh

chaos:
	bash scripts/chaos.sh

netfault:
	bash scripts/netfault.sh

# The tests as ARM boards run them, under qemu-user-static (apt-get install qemu-user-static):
# a Pi Zero's ARMv6 (arm1176) and a 64-bit board's ARMv8. No -race: it needs amd64 or arm64 hosts.
test-arm: test-armv6 test-arm64

# A package that fails under qemu runs once more (see scripts/test-arm.sh: qemu-user can hang a
# guest that forks).
test-armv6:
	bash scripts/test-arm.sh arm

test-arm64:
	bash scripts/test-arm.sh arm64

clean:
	rm -rf bin dist

# Debian packages, with nfpm run as a Go tool (go.mod's tool directive): run `make cross deb`.
.PHONY: deb deb-test
deb:
	bash scripts/deb.sh

# Installs the package on this machine and purges it again: root on a Debian machine, as CI.
deb-test:
	bash scripts/deb-test.sh
