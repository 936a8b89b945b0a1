# make test: installs the Debian packages the tests drive (CBC, Chromium) when
# absent, fetches the real models and the ONNX Runtime library into the
# cache (skipped when present with the right checksums), then runs every test,
# with the race detector on the packages that run goroutines, and a short
# fuzzing pass over the parsers.
GO ?= go
export INLAY_REQUIRE_ASSETS := 1
FUZZTIME ?= 6s

.PHONY: test test-kube fetch build image vet fuzz fuzz-long bench cross e2e e2e-zoo e2e-kube fetch-k8s fetch-kueue docs doc-commands

build:
	$(GO) build -o inlay ./cmd/inlay
	$(GO) build -o inlay-scheduler ./cmd/inlay-scheduler

# image: the scheduler's container image (cmd/inlay-scheduler/Dockerfile:
# a static binary and CBC), built only where a container builder runs.
IMAGE ?= inlay-scheduler:latest
image:
	@if docker info >/dev/null 2>&1; then docker build -f cmd/inlay-scheduler/Dockerfile -t $(IMAGE) .; \
	else echo "image: no container builder here (docker info fails); build it in CI: docker build -f cmd/inlay-scheduler/Dockerfile ."; fi

fetch:
	bash scripts/debs.sh
	bash scripts/fetch.sh

vet:
	$(GO) vet ./...

# The race detector runs again over the packages that start goroutines.
RACE_PKGS = ./dispatch ./runtime ./agent ./profile ./search/driver ./ort

test: fetch vet
	$(GO) test -count=1 -timeout 15m ./...
	$(MAKE) test-kube
	$(GO) test -race -count=1 -timeout 10m $(RACE_PKGS)
	$(MAKE) cross
	$(MAKE) fuzz

fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

# e2e (not part of test) runs three heavy suites: e2e-zoo, the ONNX Runtime
# checks over every zoo network and over the quantized variants (package
# quant) of every zoo network and real model at its typical input size
# (make test runs them on zoo.TestNetworks and a quantized sample),
# e2e-kube, the Kubernetes control-plane tests, and doc-commands.
e2e: e2e-zoo e2e-kube doc-commands

# docs: rewrites the generated pages of docs/reference (the CLI pages from
# the cobra commands, the planners and the cluster policies from their
# registries). make test fails while one is stale (TestGeneratedDocs).
docs:
	INLAY_UPDATE_DOCS=1 $(GO) test -count=1 -run '^TestGeneratedDocs$$' ./cmd/inlay

# doc-commands (part of e2e): runs the inlay commands of README.md and
# docs/ that need nothing heavy, as written, in a scratch folder. make test
# only checks that each one parses (TestDocCommands).
doc-commands: fetch
	GO=$(GO) bash scripts/doc-commands.sh

e2e-zoo: fetch
	INLAY_E2E=1 $(GO) test -count=1 -timeout 90m -v -run 'Zoo|RunOnONNXRuntime|Quantized' ./verify ./zoo

# fuzz-long (not part of test): every parser until it has seen FUZZ_EXECS
# coverage-guided inputs (default 1,000,000), one fuzz worker at a time,
# stalled runs restarted, counts kept across runs; prints the executions
# per parser.
fuzz-long:
	GO=$(GO) bash scripts/fuzz-long.sh

bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x ./...

# cross: cross builds of inlay (build only, nothing runs), and of
# inlay-scheduler for linux/arm64 nodes (static, no cgo). Without cgo the
# binary cannot load ONNX Runtime (inlay agent, profile and run say so; the
# rest works); with cgo it can, given a C cross compiler: CC_LINUX_ARM64
# (default aarch64-linux-gnu-gcc, Debian gcc-aarch64-linux-gnu) and
# CC_ANDROID_ARM64 (an NDK clang, e.g.
# $$NDK/toolchains/llvm/prebuilt/linux-x86_64/bin/aarch64-linux-android24-clang),
# each built only when present.
CC_LINUX_ARM64 ?= aarch64-linux-gnu-gcc
CC_ANDROID_ARM64 ?=
cross:
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/inlay
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/inlay-scheduler
	GOOS=android GOARCH=arm64 CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/inlay
	@if command -v $(CC_LINUX_ARM64) >/dev/null 2>&1; then \
		echo "CC=$(CC_LINUX_ARM64) GOOS=linux GOARCH=arm64 CGO_ENABLED=1 $(GO) build ./cmd/inlay"; \
		CC=$(CC_LINUX_ARM64) GOOS=linux GOARCH=arm64 CGO_ENABLED=1 $(GO) build -o /dev/null ./cmd/inlay || exit 1; \
	else echo "cross: no $(CC_LINUX_ARM64): skipping linux/arm64 with cgo"; fi
	@if [ -n "$(CC_ANDROID_ARM64)" ]; then \
		echo "CC=$(CC_ANDROID_ARM64) GOOS=android GOARCH=arm64 CGO_ENABLED=1 $(GO) build ./cmd/inlay"; \
		CC=$(CC_ANDROID_ARM64) GOOS=android GOARCH=arm64 CGO_ENABLED=1 $(GO) build -o /dev/null ./cmd/inlay || exit 1; \
	else echo "cross: CC_ANDROID_ARM64 not set: skipping android/arm64 with cgo"; fi

# e2e-kube: the Kubernetes control-plane tests (cluster/kube/...: a real
# kube-apiserver, controller manager, etcd and KWOK from make fetch) at a
# slower time compression than make test's, and the 1,000-node benchmark
# (BenchmarkScale; see docs/results/cluster-kubernetes.md), and the
# scheduler_perf-style benchmark at 1,000 nodes with the node-churn check
# (cluster/kube/perf; docs/results/kube-scale.md).
# fetch-k8s: builds the control plane into the cache (scripts/k8s.sh; a cold
# build takes minutes and about 2 GB of memory, so make test does not).
fetch-k8s:
	bash scripts/k8s.sh

# fetch-kueue: fetch-k8s and Kueue's controller manager and CRDs (for the
# Kueue replay of make e2e-kube; another few minutes cold).
fetch-kueue:
	bash scripts/k8s.sh kueue

# test-kube (part of test): the control-plane tests that fit (one control
# plane, 50 KWOK nodes, a 200-job replay at a time compression of 1500 with
# every job accounted for, a malformed Job, forbidden requests, leader
# election, the faults); e2e-kube runs them all at 1000 on the lockstep
# clock (the fidelity check: the control plane's latency costs no trace
# time), the default kube-scheduler's replay beside inlay's.
test-kube: fetch-k8s
	INLAY_KUBE_TESTS=1 $(GO) test -count=1 -timeout 20m -run 'TestControlPlane|TestReplay$$|TestLeaderElection|TestMalformedAndForbidden|TestFaults|TestDeployedScheduler|TestBenchSmall' ./cluster/kube/...

e2e-kube: fetch fetch-kueue
	INLAY_KUBE_TESTS=1 INLAY_E2E_SPEEDUP=1000 INLAY_E2E_LATENCY=lockstep INLAY_E2E_DEFAULT_SCHEDULER=1 INLAY_E2E_KUEUE=1 $(GO) test -count=1 -timeout 60m -v ./cluster/kube/...
	INLAY_KUBE_TESTS=1 INLAY_SCALE_LEASE_S=240 $(GO) test -count=1 -timeout 30m -run '^$$' -bench Scale -benchtime 1x ./cluster/kube/e2e
	INLAY_KUBE_TESTS=1 INLAY_E2E_CHURN=1 $(GO) test -count=1 -timeout 30m -run TestBenchChurn -bench Scheduler1000 -benchtime 1x ./cluster/kube/perf
