package controlplane

import (
	_ "embed"
	"os"
)

// kwokConfig is KWOK's configuration: its options and the Stage documents
// that drive fake nodes and pods (see the file's comments).
//
//go:embed kwok.yaml
var kwokConfig []byte

// FinishAnnotation on a pod names the time (RFC 3339) at which KWOK
// completes it.
const FinishAnnotation = "inlay.dev/finish-at"

func writeStages(path string) error { return os.WriteFile(path, kwokConfig, 0o600) }
