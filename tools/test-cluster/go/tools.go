//go:build tools

// Package tools pins the Kubernetes control-plane commands that the test cluster runs.
// Build them with tools/test-cluster/build.sh; nothing here is shipped.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
