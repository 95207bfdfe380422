package metricsauth

import (
	"fmt"
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// cfg is an admin's config of a real API server with RBAC, started by TestMain.
var cfg *rest.Config

func TestMain(m *testing.M) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Println("KUBEBUILDER_ASSETS is not set: run the tests with `make test`")
		os.Exit(1)
	}
	env := &envtest.Environment{}
	var err error
	if cfg, err = env.Start(); err != nil {
		_ = env.Stop()
		fmt.Println("start envtest:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}
