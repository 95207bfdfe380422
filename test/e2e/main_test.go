//go:build e2e

// Package e2e runs the scenarios a user runs, on the local cluster: kube-controller-manager,
// kube-scheduler and kwok make Deployments, rollouts and garbage collection really happen.
package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/internal/operator"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
)

var (
	cluster *localcluster.Cluster
	k8s     client.Client
	// operatorLog is the file the operator's log goes to.
	operatorLog string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	cluster, err = testcluster.StartLocalCluster(ctx, "appkeeper-e2e-")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	code := 1
	defer func() { testcluster.Stop(cluster, code) }()
	operatorLog = filepath.Join(cluster.Dir, "logs", "appkeeper.log")
	logFile, err := os.Create(operatorLog)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer logFile.Close()
	ctrl.SetLogger(zap.New(zap.WriteTo(io.MultiWriter(logFile))))
	mgr, err := operator.NewManager(cluster.Config, operator.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return 1
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Println("operator:", err)
		}
	}()
	k8s, err = client.New(cluster.Config, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("cluster state and logs:", cluster.Dir)
	code = m.Run()
	return code
}

// timeout bounds every wait; on the local cluster each step takes well under a second.
const timeout = 60 * time.Second

func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), ns) })
	return ns.Name
}

// kubectl runs the cluster's kubectl, as a user would, and returns its output.
func kubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(localcluster.DefaultBinDir(), "kubectl"), append([]string{"--kubeconfig", cluster.KubeconfigPath}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// kubectlFails runs kubectl expecting an error and returns its output.
func kubectlFails(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(localcluster.DefaultBinDir(), "kubectl"), append([]string{"--kubeconfig", cluster.KubeconfigPath}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("kubectl %s succeeded, want an error:\n%s", strings.Join(args, " "), out)
	}
	return string(out)
}
