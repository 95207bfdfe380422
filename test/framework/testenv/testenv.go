// Package testenv starts a real API server with the operator running in this process, for the
// controllers' integration tests, and reads what that operator did: its passes, rollbacks and requests.
package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/appkeeper/appkeeper/internal/kube"
	"github.com/appkeeper/appkeeper/internal/operator"
)

// BackupImage is the image the operator under test names in its backup Jobs.
const BackupImage = "localhost/appkeeper/appkeeper:test"

// operatorConfig is the manager's connection: the shipped ServiceAccount, impersonated.
var operatorConfig *rest.Config

// manager is the operator under test, once RunWithOperator has started it.
var manager ctrl.Manager

// OperatorClient is the client of the operator's controller named controller, its cache included,
// for a test that runs a pass of that controller itself, as the operator would.
func OperatorClient(controller string) kube.Client {
	return kube.NewClient(manager, controller, nil)
}

// RunWithOperator is the whole of a controller package's TestMain: it runs the package's tests
// against a real kube-apiserver with appkeeper's CRDs installed and its manager running, with k8s
// set to an admin client of that API server, and returns the exit code. There is no
// kube-controller-manager, so tests play its part where they need one (status of Deployments,
// StatefulSets and PVCs).
//
// The manager holds only the RBAC the project ships: config/rbac is installed on the API server
// (which authorizes with RBAC) and the manager impersonates its ServiceAccount. Any request the
// API server refuses it is printed as it happens and fails the run, naming the verb and resource
// that a +kubebuilder:rbac marker lacks. extraCRDs, such as another project's kinds the operator
// uses when they exist, are installed before the manager starts.
func RunWithOperator(m *testing.M, k8s *client.Client, extraCRDs ...*apiextensionsv1.CustomResourceDefinition) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Println("KUBEBUILDER_ASSETS is not set: run the tests with `make test`")
		return 1
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(operatorLog)))
	root := repoRoot()
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		CRDs:                  extraCRDs,
	}
	cfg, err := env.Start()
	if err != nil {
		// A start that fails after the API server came up (a CRD refused, say) leaves it running.
		_ = env.Stop()
		fmt.Println("start envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if kubeconfig, err = writeKubeconfig(env.KubeConfig); err != nil {
		fmt.Println(err)
		return 1
	}
	defer func() { _ = os.RemoveAll(filepath.Dir(kubeconfig)) }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if *k8s, err = client.New(cfg, client.Options{Scheme: operator.Scheme()}); err != nil {
		fmt.Println(err)
		return 1
	}
	sa, err := installRBAC(ctx, *k8s, root)
	if err != nil {
		fmt.Println("install config/rbac:", err)
		return 1
	}
	operatorConfig = sa.impersonating(cfg)
	managerConfig := rest.CopyConfig(operatorConfig)
	forbidden := &forbiddenLog{}
	forbidden.watch(managerConfig)
	countRequests(managerConfig)
	options := operator.DefaultOptions()
	options.BackupImage = BackupImage
	stopStartupLog := startupLog.listen()
	mgr, err := operator.NewManager(managerConfig, options)
	stopStartupLog()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	manager = mgr
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Println("manager:", err)
			os.Exit(1)
		}
	}()
	code := m.Run()
	if err := forbidden.report(); err != nil {
		fmt.Println(err)
		return 1
	}
	return code
}

// kubeconfig is the admin kubeconfig of the API server RunWithOperator started.
var kubeconfig string

func writeKubeconfig(content []byte) (string, error) {
	dir, err := os.MkdirTemp("", "appkeeper-envtest-")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "kubeconfig")
	return path, os.WriteFile(path, content, 0o600)
}

// Kubectl is the command kubectl with args, run as the API server's admin, with the kubectl
// binary of the control plane envtest runs (KUBEBUILDER_ASSETS): what a person would type.
func Kubectl(args ...string) *exec.Cmd {
	return exec.Command(filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
}
