# appkeeper: build, generate, test and run the operator on a local Kubernetes.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

KUBE_VERSION          ?= v1.36.3
KWOK_VERSION          ?= v0.8.0
CONTAINERD_VERSION    ?= v2.4.2
COREDNS_VERSION       ?= v1.14.7
CONTROLLER_GEN_VERSION ?= v0.21.0
GOLANGCI_LINT_VERSION ?= v2.15.0
HELM_VERSION          ?= v4.3.1
# Must match the path test/framework/testservers.VersityGW names.
VERSITYGW_VERSION     ?= v1.8.0
# Must match the version hack/tools/prometheus/go.mod requires.
PROMETHEUS_VERSION    ?= v0.316.0
# The operator's image: written into dist/install.yaml and built by docker-build.
IMG                   ?= ghcr.io/appkeeper/appkeeper:latest

BIN            := $(CURDIR)/bin
CONTROLPLANE   := $(BIN)/controlplane-$(KUBE_VERSION)
CONTROLLER_GEN := $(BIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
GOLANGCI_LINT  := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
HELM           := $(BIN)/helm-$(HELM_VERSION)
KUBECTL        := $(BIN)/kubectl
PROMETHEUS     := $(BIN)/prometheus-$(PROMETHEUS_VERSION)
VERSITYGW      := $(BIN)/versitygw-$(VERSITYGW_VERSION)/versitygw

export KUBEBUILDER_ASSETS := $(CONTROLPLANE)
# envtest gives an API server 20 s to start by default; on two cores shared with the real node's
# suite, the image builds and lint, one can take longer without anything being wrong.
export KUBEBUILDER_CONTROLPLANE_START_TIMEOUT := 2m
# The binaries are static (the real node packs bin/appkeeper into the backup Jobs' image); vet,
# the tests, lint and the generators are built the same way, so that they compile the project's
# dependencies once and share it, instead of once with cgo and once without.
export CGO_ENABLED := 0

# What the real node's suite does not wait for (the other suites, lint, the tools only they use)
# yields the cores to it when both want them: its faults and failovers run on time.
BACKGROUND := nice -n 5

.PHONY: all
all: build

##@ Development

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs and RBAC from the markers.
	$(CONTROLLER_GEN) rbac:roleName=appkeeper-manager crd paths="./api/...;./internal/..." output:crd:artifacts:config=config/crd/bases

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate DeepCopy methods.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: sync-manifests
sync-manifests: manifests ## Copy the generated CRDs and RBAC into config/crd/kustomization.yaml and the Helm chart.
	go run ./hack/syncmanifests

.PHONY: api-docs
api-docs: manifests ## Write the book's API reference, docs/reference/api.md, from the CRDs; fails on a field without a description.
	go run ./hack/apidocs

.PHONY: check-generate
check-generate: manifests api-docs generate sync-manifests ## Fail when generated files or go.mod are not committed.
	go mod tidy
	git diff --exit-code -- . || { echo 'generated files are stale: run "make sync-manifests generate api-docs" and "go mod tidy", then commit'; exit 1; }

.PHONY: fmt
fmt: ## gofmt the tree.
	gofmt -l -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## go vet every package, e2e, real-node and fault scenarios and benchmarks included.
	go vet -tags e2e,real,faults ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) $(SOURCES) ## golangci-lint, e2e, real-node and fault scenarios and benchmarks included.
	$(BACKGROUND) $(GOLANGCI_LINT) run --build-tags e2e,real,faults ./...

.PHONY: test
test: host-deps ## Everything CI runs but lint and check-generate: unit, envtest, end-to-end, fault and real-node tests, with what they need built first.
	$(MAKE) --no-print-directory -j4 --output-sync=target SOURCES=sources TOOLS_AFTER=real-parts test-real-suite test-unit-suite test-cluster-suites

.PHONY: ci
ci: host-deps ## What CI runs: the generated files checked, lint, the book and every test, side by side.
	$(MAKE) --no-print-directory -j4 --output-sync=target SOURCES=checked-sources TOOLS_AFTER=real-parts test-real-suite test-unit-suite test-cluster-suites lint docs

# In a parallel run, what writes into the tree (the generated files, dist/install.yaml) runs one
# step after another, and before anything of the project is compiled or read: a build beside it
# could read a file while it is rewritten. The tools and the real node, which read nothing of the
# tree, build meanwhile. SOURCES names it for build, lint and docs.
.PHONY: sources checked-sources
sources:
	env -u MAKEFLAGS $(MAKE) --no-print-directory build-installer
checked-sources:
	env -u MAKEFLAGS $(MAKE) --no-print-directory check-generate build-installer

# Make does not start the jobs of a parallel run in the order they are listed: TOOLS_AFTER keeps
# the tools only the other suites use (helm, Prometheus, golangci-lint) from taking a slot or a
# core before the real node's parts are built.
.PHONY: test-unit-suite test-cluster-suites test-real-suite real-parts
real-parts: images build controlplane node test-deps

test-real-suite: real-parts
	go test -count=1 -p 1 -tags real -timeout 40m ./test/real/...

test-unit-suite: build controlplane test-deps $(PROMETHEUS)/prometheus
	$(BACKGROUND) go vet -tags e2e,real,faults ./...
	APPKEEPER_REQUIRE_MARIADB=1 $(BACKGROUND) go test -count=1 ./...

test-cluster-suites: build controlplane $(HELM) $(PROMETHEUS)/prometheus
	go test -count=1 -p 1 -tags e2e -timeout 30m ./test/e2e/...
	go test -count=1 -p 1 -tags faults -timeout 20m ./test/faults/...

# Every Debian package the tests, the real node and the book need, in one apt run before anything
# runs side by side: two apt runs at once would refuse each other's lock.
.PHONY: host-deps
host-deps:
	bash hack/apt-deps.sh $(NODE_PACKAGES) $(DOCS_PACKAGES) $(TEST_PACKAGES)

.PHONY: test-parts
test-parts: host-deps ## Every tool and part the checks and tests build, side by side so that downloads overlap compiles: the images, mostly downloads, start first.
	$(MAKE) --no-print-directory -j3 images controlplane node test-deps helm prometheus $(GOLANGCI_LINT) $(CONTROLLER_GEN)

.PHONY: test-real
test-real: build controlplane node-deps node images ## End-to-end scenarios on a real node (root): real containers for every kind.
	go test -count=1 -p 1 -tags real -timeout 40m -v ./test/real/...

.PHONY: test-unit
test-unit: controlplane test-deps $(PROMETHEUS)/prometheus ## Unit and envtest tests only.
	APPKEEPER_REQUIRE_MARIADB=1 go test -count=1 ./...

.PHONY: test-deps
TEST_PACKAGES := mariadb-server mariadb-backup
test-deps: $(VERSITYGW) ## Install MariaDB and mariadb-backup from Debian's packages and build versitygw, an S3 gateway over a folder, into bin/: the MySQL probes and the backup data path are tested against them.
	bash hack/apt-deps.sh $(TEST_PACKAGES)

# go install writes the binary only once it has linked: a stopped build leaves nothing that make
# would take for a finished one.
$(VERSITYGW):
	GOBIN=$(dir $@) go install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION)

.PHONY: test-e2e
test-e2e: build build-installer controlplane $(HELM) $(PROMETHEUS)/prometheus ## End-to-end scenarios on the local cluster.
	go test -count=1 -p 1 -tags e2e -timeout 30m -v ./test/e2e/...

.PHONY: test-faults
test-faults: build controlplane ## Faults on the local cluster: the operator, kube-apiserver and the leader killed, etcd paused, a second writer, deletions.
	go test -count=1 -p 1 -tags faults -timeout 20m -v ./test/faults/...

.PHONY: bench
bench: build controlplane test-deps ## Benchmarks on the local cluster, of the backup data path and of the binary log archive; BENCH_ARGS=-large adds 3000 instances per kind, BENCH_ARGS="-only backup", "-only rollback" or "-only pitr" runs that section alone.
	go run ./test/bench $(BENCH_ARGS)

# Each fault of a 3-member MySQL on the real node, CLUSTER_TRIALS times, with the distribution of
# the pause in acknowledged writes; a lost write fails it.
CLUSTER_TRIALS ?= 20
.PHONY: bench-clusters
bench-clusters: build controlplane node-deps node images ## MySQL cluster faults on the real node (root), CLUSTER_TRIALS (20) of each, into test/bench/results/clusters-latest.md; sysbench's TPS of 1 and 3 members into clusters-sysbench-latest.md; the operator's cost for 1 and 10 idle clusters into clusters-cost-latest.md.
	bash hack/apt-deps.sh sysbench
	APPKEEPER_CLUSTER_TRIALS=$(CLUSTER_TRIALS) APPKEEPER_CLUSTER_REPORT=$(CURDIR)/test/bench/results/clusters-latest.md \
		APPKEEPER_SYSBENCH_REPORT=$(CURDIR)/test/bench/results/clusters-sysbench-latest.md \
		APPKEEPER_CLUSTER_COST_REPORT=$(CURDIR)/test/bench/results/clusters-cost-latest.md \
		go test -count=1 -p 1 -tags real -timeout 90m -v -run 'TestMySQLCluster' ./test/real/...

##@ Build

.PHONY: build
build: $(SOURCES) ## Build bin/appkeeper, statically linked: the real node packs it into the backup Jobs' image; and the kubectl plugin bin/kubectl-appkeeper.
	CGO_ENABLED=0 go build -o $(BIN)/appkeeper ./cmd/appkeeper
	CGO_ENABLED=0 go build -o $(BIN)/kubectl-appkeeper ./cmd/kubectl-appkeeper

.PHONY: build-installer
build-installer: sync-manifests ## Write dist/install.yaml, everything a cluster needs to run appkeeper with image IMG.
	go run ./hack/installer -config config/default -image $(IMG) -o dist/install.yaml

.PHONY: docker-build
docker-build: ## Build the operator's image IMG (needs a Docker engine).
	docker build -t $(IMG) .

.PHONY: controlplane
controlplane: ## Build etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kwok into bin/.
	bash hack/controlplane/build.sh $(CONTROLPLANE) $(KUBE_VERSION) $(KWOK_VERSION)
	ln -sf controlplane-$(KUBE_VERSION)/kubectl $(KUBECTL)

.PHONY: helm
helm: $(HELM) ## Build helm into bin/: the end-to-end test of the Helm chart drives it.

.PHONY: prometheus
prometheus: $(PROMETHEUS)/prometheus ## Build prometheus and promtool into bin/: the alert rules' tests run them.

.PHONY: node node-kubernetes node-runtime
node: node-kubernetes node-runtime ## Build kubelet, kube-proxy, containerd and CoreDNS for the real node into bin/.

# kubelet and kube-proxy share most of their packages with the control plane: built after it, they
# compile on its build cache instead of compiling the same packages beside it.
node-kubernetes: controlplane
	bash hack/node/build.sh $(BIN) $(KUBE_VERSION) $(CONTAINERD_VERSION) $(COREDNS_VERSION) kubernetes

node-runtime:
	bash hack/node/build.sh $(BIN) $(KUBE_VERSION) $(CONTAINERD_VERSION) $(COREDNS_VERSION) runtime

# Every recipe of hack/images/recipes, named on the command line: build.sh's own default list is part
# of each image's stamp, so growing it would rebuild every image.
LOCAL_IMAGES := $(sort $(basename $(notdir $(wildcard hack/images/recipes/*.sh))))

.PHONY: images
# The node's packages are installed by the recipe, not as a prerequisite: in a parallel make the
# images, mostly downloads, then start first instead of waiting for a slot that compiles took.
images: ## Build the local container images from Debian's packages into bin/images.
	bash hack/apt-deps.sh $(NODE_PACKAGES)
	bash hack/images/build.sh $(BIN)/images $(LOCAL_IMAGES)

.PHONY: verify-images
verify-images: images ## Run each local image's entrypoint chrooted as its user and check its contract.
	bash hack/images/verify.sh $(BIN)/images

.PHONY: node-deps
NODE_PACKAGES := runc containernetworking-plugins iptables nftables conntrack debootstrap
node-deps: ## Install the real node's host packages: runc, CNI plugins, iptables, nftables, conntrack, debootstrap.
	bash hack/apt-deps.sh $(NODE_PACKAGES)

##@ Documentation

.PHONY: docs
docs: docs-deps $(SOURCES) ## Build the book under docs/ into bin/docs-site; fails on a broken link or anchor.
	mkdocs build --quiet --strict --site-dir $(BIN)/docs-site
	go run ./hack/docscheck -site $(BIN)/docs-site -repo .

.PHONY: docs-serve
docs-serve: docs-deps ## Serve the book on http://127.0.0.1:8000, rebuilt on every change.
	mkdocs serve --strict --dev-addr 127.0.0.1:8000

.PHONY: docs-deps
DOCS_PACKAGES := mkdocs mkdocs-material
docs-deps: ## Install mkdocs and its material theme from Debian's packages.
	bash hack/apt-deps.sh $(DOCS_PACKAGES)

##@ Run

.PHONY: demo
demo: build controlplane ## Start the local cluster with the operator and the samples; Ctrl-C stops it.
	$(BIN)/appkeeper local up --samples --show-samples

.PHONY: demo-real
demo-real: build controlplane node-deps node images ## Like demo, with a real node (root): the samples run real containers.
	$(BIN)/appkeeper local up --real-node --samples --show-samples

.PHONY: run
run: build ## Run the operator against the current kubeconfig.
	$(BIN)/appkeeper

##@ Tools

$(CONTROLLER_GEN):
	GOBIN=$(BIN)/tmp-controller-gen go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(BIN)/tmp-controller-gen/controller-gen $@ && rmdir $(BIN)/tmp-controller-gen

$(GOLANGCI_LINT): | $(TOOLS_AFTER)
	GOBIN=$(BIN)/tmp-golangci-lint $(BACKGROUND) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(BIN)/tmp-golangci-lint/golangci-lint $@ && rmdir $(BIN)/tmp-golangci-lint

# The end-to-end test test/e2e/helm drives this helm through install, upgrade, rollback and uninstall.
$(HELM): | $(TOOLS_AFTER)
	GOBIN=$(BIN)/tmp-helm $(BACKGROUND) go install helm.sh/helm/v4/cmd/helm@$(HELM_VERSION)
	mv $(BIN)/tmp-helm/helm $@ && rmdir $(BIN)/tmp-helm

# promtool unit-tests the alert rules; the end-to-end test test/e2e/monitoring runs the server.
# Both are built at once from hack/tools/prometheus, a module of its own so that Prometheus's
# dependencies stay out of the operator's go.mod; without the service discoveries (remove_all_sd),
# whose cloud SDKs the tests' static targets never call.
$(PROMETHEUS)/prometheus: | $(TOOLS_AFTER)
	grep -q 'github.com/prometheus/prometheus $(PROMETHEUS_VERSION)$$' hack/tools/prometheus/go.mod || \
		{ echo 'hack/tools/prometheus/go.mod does not require Prometheus $(PROMETHEUS_VERSION)'; exit 1; }
	cd hack/tools/prometheus && CGO_ENABLED=0 GOBIN=$(BIN)/tmp-prometheus $(BACKGROUND) go install -trimpath -tags remove_all_sd \
		github.com/prometheus/prometheus/cmd/prometheus github.com/prometheus/prometheus/cmd/promtool
	mkdir -p $(PROMETHEUS)
	mv $(BIN)/tmp-prometheus/promtool $(PROMETHEUS)/promtool
	mv $(BIN)/tmp-prometheus/prometheus $@ && rmdir $(BIN)/tmp-prometheus

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*##/ { printf "  %-16s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)
