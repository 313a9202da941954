// Command coredns is the cluster DNS of the test node: the pinned CoreDNS release with only
// the plugins a cluster's DNS needs (the Service and Pod records of the `kubernetes` plugin,
// a cache, health and readiness endpoints, error and query logs). CoreDNS's own main links
// every plugin it ships (cloud DNS providers, etcd, tracing...); this one compiles in a
// fraction of the time. Names outside the cluster's zones get no answer: nothing on the node
// is routed beyond it, so there is nothing to forward them to.
package main

import (
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"

	"github.com/coredns/coredns/coremain"
)

func main() {
	coremain.Run()
}
