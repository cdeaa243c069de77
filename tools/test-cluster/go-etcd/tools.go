//go:build tools

// Package tools pins etcd for the test cluster (its server module carries replace directives, so it
// cannot be `go install`ed by version). Build it with tools/test-cluster/build.sh; nothing here is shipped.
package tools

import _ "go.etcd.io/etcd/server/v3"
