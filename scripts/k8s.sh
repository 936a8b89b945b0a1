#!/usr/bin/env bash
# Builds the local Kubernetes control plane that cluster/kube's tests and
# `inlay cluster up` start, from the Go module proxy, into the cache outside
# the repository ($INLAY_CACHE/k8s, default ~/.cache/inlay/k8s):
#   kube-apiserver, kube-controller-manager, kube-scheduler  (k8s.io/kubernetes)
#   etcd                                                      (go.etcd.io/etcd/server/v3)
#   kwok                                                      (sigs.k8s.io/kwok)
# k8s.io/kubernetes on the proxy has no staging/ folder, so the wrapper module
# cluster/kube/tools/kubernetes replaces every staging module with its
# release; cluster/kube/tools/etcd wraps etcdmain the same way. A binary
# already present is not built again (delete the folder to rebuild).
set -euo pipefail

K8S_VERSION=v1.34.4
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0
GO="${GO:-go}"

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${INLAY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/inlay}"
BIN="$CACHE/k8s/bin"
mkdir -p "$BIN"

major="${K8S_VERSION#v}"; major="${major%%.*}"
minor="${K8S_VERSION#v*.}"; minor="${minor%%.*}"
LDFLAGS="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"

build() { # name, module dir, package
  local name="$1" dir="$2" pkg="$3"
  if [ -x "$BIN/$name" ] && [ "$(cat "$BIN/$name.version" 2>/dev/null)" = "$4" ]; then return; fi
  echo "k8s: building $name $4 (minutes on a cold cache)" >&2
  (cd "$dir" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "$LDFLAGS" -o "$BIN/$name.tmp" "$pkg")
  mv "$BIN/$name.tmp" "$BIN/$name"
  echo "$4" > "$BIN/$name.version"
}

build kube-apiserver "$ROOT/cluster/kube/tools/kubernetes" k8s.io/kubernetes/cmd/kube-apiserver "$K8S_VERSION"
build kube-controller-manager "$ROOT/cluster/kube/tools/kubernetes" k8s.io/kubernetes/cmd/kube-controller-manager "$K8S_VERSION"
build kube-scheduler "$ROOT/cluster/kube/tools/kubernetes" k8s.io/kubernetes/cmd/kube-scheduler "$K8S_VERSION"
build etcd "$ROOT/cluster/kube/tools/etcd" . "$ETCD_VERSION"

if ! [ -x "$BIN/kwok" ] || [ "$(cat "$BIN/kwok.version" 2>/dev/null)" != "$KWOK_VERSION" ]; then
  echo "k8s: building kwok $KWOK_VERSION" >&2
  GOBIN="$BIN" CGO_ENABLED=0 "$GO" install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  echo "$KWOK_VERSION" > "$BIN/kwok.version"
fi
# scripts/k8s.sh kueue (make fetch-kueue, for make e2e-kube) also builds
# Kueue's controller manager from the wrapper module cluster/kube/tools/kueue
# and copies its CRDs (config/components/crd/bases of the module) beside it.
if [ "${1:-}" = kueue ]; then
  KUEUE_DIR="$ROOT/cluster/kube/tools/kueue"
  KUEUE_VERSION=$(cd "$KUEUE_DIR" && "$GO" list -m -f '{{.Version}}' sigs.k8s.io/kueue)
  if ! [ -x "$BIN/kueue" ] || [ "$(cat "$BIN/kueue.version" 2>/dev/null)" != "$KUEUE_VERSION" ]; then
    echo "k8s: building kueue $KUEUE_VERSION (minutes on a cold cache)" >&2
    (cd "$KUEUE_DIR" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "-s -w" -o "$BIN/kueue.tmp" sigs.k8s.io/kueue/cmd/kueue)
    src=$(cd "$KUEUE_DIR" && "$GO" list -m -f '{{.Dir}}' sigs.k8s.io/kueue)
    rm -rf "$BIN/kueue-crds" && mkdir -p "$BIN/kueue-crds"
    cp "$src"/config/components/crd/bases/*.yaml "$BIN/kueue-crds/"
    chmod u+w "$BIN"/kueue-crds/*.yaml
    mv "$BIN/kueue.tmp" "$BIN/kueue"
    echo "$KUEUE_VERSION" > "$BIN/kueue.version"
  fi
fi
echo "k8s: control plane binaries ready in $BIN" >&2
