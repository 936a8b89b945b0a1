//go:build tools

// Package tools pins Kueue (sigs.k8s.io/kueue) for scripts/k8s.sh kueue,
// which builds its controller manager, cmd/kueue, from this module into
// the cache and copies its CRDs beside it. Kueue v0.14 is built against
// the Kubernetes v0.34 libraries, the control plane's minor version.
package tools

import _ "sigs.k8s.io/kueue/cmd/kueue"
