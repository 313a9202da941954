// Command etcd is the etcd server of the pinned go.etcd.io/etcd/server/v3 release,
// built here so that the test control plane needs no prebuilt binary.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
