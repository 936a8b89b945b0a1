// Command etcd is etcd's own main (go.etcd.io/etcd/server/v3/etcdmain),
// built from the Go module proxy by scripts/k8s.sh for the local control
// plane of cluster/kube; it is not part of inlay's module.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
