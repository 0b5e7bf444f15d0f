# tlsbench — see README.md.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
BIN      := bin/tlsbench
# Peers and real TLS terminators the tests use (Debian packages).
TEST_PACKAGES := haproxy nginx apache2-utils chromium

.PHONY: all build run test deps-test fmt-check vet peers clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/tlsbench

# The main job on the built-in reference target: CPS (SR=0) for the three
# seed profiles of the reference study, one table.
run: build
	$(BIN) cps --profile ecdhe-ecdsa-aes128-sha256-p384 \
	           --profile ecdhe-ecdsa-aes128-sha256-p256 \
	           --profile rsa2048-aes128-gcm-sha256 -d 5s --warmup 1s

# Installs what the tests need when it is missing, then: gofmt check, go vet,
# go test -race (HAProxy and nginx integration tests included).
test: deps-test fmt-check vet
	$(GO) test -race -count=1 ./...

deps-test:
	@missing=""; \
	for p in $(TEST_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# Client CPU per transaction (tlsbench cps vs ab) and per GB of 1 MiB bodies
# (tlsbench throughput vs wrk), against nginx and the reference target on
# loopback (DUT on CPU 0, generator on CPU 1), with the Go crypto floor; about
# 6 min. Installs wrk (Debian package) when it is missing.
peers: build deps-test
	@dpkg -s wrk >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		echo "installing: wrk"; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq wrk >/dev/null; }
	$(GO) run ./cmd/peerbench --reps 3 --duration 5s --dut both --engine both --out bin/peerbench.json

clean:
	rm -rf bin
