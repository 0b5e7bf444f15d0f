# tlsbench — see README.md.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
BIN      := bin/tlsbench
# Peers and real TLS terminators the tests use, and HdrHistogram's Java
# implementation the percentiles are checked against, the PDF's checkers, the
# shells the completions are tried in, the man page's renderers and R, which
# the rank test and Welch's interval are checked against (Debian packages).
TEST_PACKAGES := haproxy nginx nghttp2-client caddy apache2 apache2-utils chromium poppler-utils iproute2 libhdrhistogram-java default-jre-headless tcpdump nftables zsh fish groff-base man-db prometheus r-base-core

.PHONY: all build agent completions run test deps-test fmt-check vet staticcheck lint fuzz-short bench peers perf-ab scale soak clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/tlsbench

# The agent's binary, as the Dockerfile builds it: static, stripped, without
# the chart renderer (-tags nocharts: gonum/plot and its fonts left out;
# report --format html|md then writes the tables only). Sizes in
# docs/KUBERNETES.md.
agent:
	CGO_ENABLED=0 $(GO) build -tags nocharts -trimpath -ldflags "-s -w $(LDFLAGS)" -o bin/tlsbench-agent ./cmd/tlsbench

# Shell completions and the man page, generated from the commands' flags.
completions: build
	@mkdir -p bin/completions bin/man/man1
	$(BIN) completion bash > bin/completions/tlsbench.bash
	$(BIN) completion zsh > bin/completions/_tlsbench
	$(BIN) completion fish > bin/completions/tlsbench.fish
	$(BIN) man > bin/man/man1/tlsbench.1

# The main job on the built-in reference target: the qualification method
# (preliminary, exploratory, final, acceptance, best-of-three) for the three
# seed profiles, CPS and throughput, with short durations (about a minute on
# 2 cores); prints the published table. The campaign goes to bin/.
run: build
	$(BIN) qualify --quick -q --out bin/campaign-$$(date +%Y%m%d-%H%M%S)

# Installs what the tests need when it is missing, then: gofmt check, go vet,
# staticcheck, the line and function bounds (lint), go test -race (HAProxy and nginx integration tests included).
# Packages run one at a time (-p 1): several tests measure timing (impact
# studies, fault deadlines) and must not share the two cores with others.
# The limit per package is 30 minutes, not go test's default of 10: the CLI's
# end-to-end tests (cmd/tlsbench: campaigns against nginx and HAProxy) take
# 9-10 minutes under the race detector on a 2-core machine.
# TestScale runs again without the race detector: its memory budgets per
# connection (the published figures) are asserted only then.
test: deps-test fmt-check vet staticcheck lint
	$(GO) test -race -count=1 -p 1 -timeout 30m ./...
	$(GO) test -count=1 -run '^TestScale$$' ./cmd/scale
	$(MAKE) --no-print-directory fuzz-short

# A short run of every fuzz target (their seed corpora live in testdata/fuzz).
FUZZTIME ?= 3s
fuzz-short:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./profiles
	$(GO) test -run '^$$' -fuzz '^FuzzParsePlan$$' -fuzztime $(FUZZTIME) ./bench/method/plan
	$(GO) test -run '^$$' -fuzz '^FuzzLedger$$' -fuzztime $(FUZZTIME) ./bench/method
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeRun$$' -fuzztime $(FUZZTIME) ./bench/metrics
	$(GO) test -run '^$$' -fuzz '^FuzzCollector$$' -fuzztime $(FUZZTIME) ./bench/agent
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./bench/devcount
	$(GO) test -run '^$$' -fuzz '^FuzzParseExposition$$' -fuzztime $(FUZZTIME) ./bench/devcount
	$(GO) test -run '^$$' -fuzz '^FuzzTemplate$$' -fuzztime $(FUZZTIME) ./bench/engine/httpreq
	$(GO) test -run '^$$' -fuzz '^FuzzParseObjects$$' -fuzztime $(FUZZTIME) ./bench/engine/httpreq
	$(GO) test -run '^$$' -fuzz '^FuzzParseTarget$$' -fuzztime $(FUZZTIME) ./cmd/tlsbench
	$(GO) test -run '^$$' -fuzz '^FuzzParseResolve$$' -fuzztime $(FUZZTIME) ./cmd/tlsbench

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

# staticcheck at a pinned version. The module cache is the first proxy, so it
# runs offline once fetched (go run pkg@version otherwise asks the proxy).
staticcheck:
	GOPROXY=file://$$($(GO) env GOMODCACHE)/cache/download,$$($(GO) env GOPROXY) \
		$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

# No line over 120 columns, no library function over 80 lines (generated
# code and tests aside): the figures and any offender, failing on one.
lint:
	$(GO) run ./cmd/codestats --check

# Go benchmarks of the hot paths (one CPS transaction against the reference
# target in another process, with allocations; the recorder; the Go crypto
# floor), then the comparison with the peers. `make scale` (not part of it) checks 20,000
# connections.
bench: build
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./bench/engine/cps ./bench/protocol/http2 ./bench/protocol/http3 ./bench/metrics ./bench/engine/tlsconn ./bench/promexp ./cmd/peerbench
	$(MAKE) --no-print-directory peers

# Client CPU per transaction (tlsbench cps vs ab) and per GB of 1 MiB bodies
# (tlsbench throughput vs wrk), against nginx and the reference target on
# loopback (DUT on CPU 0, generator on CPU 1), with the Go crypto floor; the
# same over HTTP/2 against nginx's http2 servers, vs h2load (nghttp2-client);
# about 10 min. Installs wrk (Debian package) when it is missing.
peers: build deps-test
	@dpkg -s wrk >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		echo "installing: wrk"; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq wrk >/dev/null; }
	$(GO) run ./cmd/peerbench --reps 3 --duration 5s --dut both --engine both --http both --out bin/peerbench.json

# The performance guard: the working tree against BASE (a revision), the
# reference target on CPU 0 and the two builds alternating on CPU 1, ABBA:
# CPU per CPS transaction (each seed profile) and per GB (keep-alive /1m),
# with the verdict of tlsbench's impact statistics. PERFAB_FLAGS adds
# options (--rounds N, --duration D, --out FILE). About 1 min per round.
perf-ab:
	@test -n "$(BASE)" || { echo "perf-ab: no base revision: make perf-ab BASE=REV (e.g. BASE=HEAD~1)" >&2; exit 2; }
	$(GO) run ./cmd/perfab --base "$(BASE)" $(PERFAB_FLAGS)

# 20,000 concurrent TLS connections on loopback, each engine in turn
# (throughput: opened before the load, held idle, small requests spread over
# them; cps: 20,000 in flight) against nginx (reuseport workers; tlsbench
# serve without nginx), sources spread over 127.1.0.0/16; connections held,
# the generators' RSS and KB per connection (budget 40), errors; JSON in
# bin/scale.json. Then 10,000 QUIC connections (HTTP/3, throughput: opened
# before the load and held) against tlsbench serve's HTTP/3 listeners, a UDP
# socket each, one generator process (20,000 take two, whose windows do not
# overlap enough to merge: docs/PERFORMANCE.md); JSON in bin/scale-h3.json
# (budget 150 KB per connection).
# About 3 + N minutes; exits 1 when a check fails.
scale:
	@mkdir -p bin
	$(GO) run ./cmd/scale -c 20000 --out bin/scale.json
	$(GO) run ./cmd/scale --http 3 --engine throughput -c 10000 --out bin/scale-h3.json

# Not in CI: cps against the reference target for 5 minutes; goroutines, open
# file descriptors and RSS must stay flat (a test that runs only when asked).
soak:
	$(GO) test -count=1 -timeout 10m -run '^TestSoak$$' -v ./bench/internal/soak -soak 5m -soak-every 30s

clean:
	rm -rf bin
