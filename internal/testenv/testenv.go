// Package testenv starts a real API server with the operator running, for the controllers' integration tests.
package testenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/appkeeper/appkeeper/internal/operator"
)

// RunWithOperator is the whole of a controller package's TestMain: it runs the package's tests
// against a real kube-apiserver with appkeeper's CRDs installed and its manager running, with k8s
// set to a client of that API server, and returns the exit code. There is no
// kube-controller-manager, so tests play its part where they need one (status of Deployments,
// StatefulSets and PVCs).
func RunWithOperator(m *testing.M, k8s *client.Client) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Println("KUBEBUILDER_ASSETS is not set: run the tests with `make test`")
		return 1
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	_, self, _, _ := runtime.Caller(0)
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(filepath.Dir(self), "..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		// A start that fails after the API server came up (a CRD refused, say) leaves it running.
		_ = env.Stop()
		fmt.Println("start envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mgr, err := operator.NewManager(cfg, operator.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return 1
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Println("manager:", err)
			os.Exit(1)
		}
	}()
	if *k8s, err = client.New(cfg, client.Options{Scheme: operator.Scheme()}); err != nil {
		fmt.Println(err)
		return 1
	}
	return m.Run()
}
