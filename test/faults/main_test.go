//go:build faults

// Package faults breaks the local cluster while the operator works and checks what a user relies
// on afterwards: every instance converges with exactly its children, no PodSet runs more pods than
// it asks for, no Secret or volume is lost or rewritten, nothing is orphaned and the operator does
// not panic. The operator runs out of process, as bin/appkeeper with only the shipped RBAC, under a
// supervisor that restarts it when it exits, as a Deployment's kubelet would. Each scenario logs a
// summary line; the run ends with a table of them.
package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/appkeeper/appkeeper/internal/localcluster"
	"github.com/appkeeper/appkeeper/internal/operator"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

// perKind is how many instances of each kind every scenario runs: it sizes the whole suite.
const perKind = 8

// convergeTimeout bounds every wait for the instances to converge; on the local cluster it takes
// seconds, or the lease duration and seconds after a leader is killed.
const convergeTimeout = 90 * time.Second

var (
	cluster *localcluster.Cluster
	// k8s is the cluster's admin, as the person who creates, changes and deletes the instances.
	k8s client.Client
	// operatorBinary is the appkeeper binary under test; operatorKubeconfig acts as its
	// ServiceAccount, with the RBAC config/rbac ships.
	operatorBinary, operatorKubeconfig string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	began := time.Now()
	// The suite's own watches log nothing a reader of its output needs.
	ctrl.SetLogger(logr.Discard())
	var err error
	if operatorBinary, err = binary(); err != nil {
		fmt.Println(err)
		return 1
	}
	cluster, err = testcluster.StartLocalCluster(ctx, "appkeeper-faults-")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	code := 1
	defer func() { testcluster.Stop(cluster, code) }()
	if k8s, err = client.New(cluster.Config, client.Options{Scheme: operator.Scheme()}); err != nil {
		fmt.Println(err)
		return 1
	}
	if operatorKubeconfig, err = shippedRBACKubeconfig(ctx); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("cluster state and logs:", cluster.Dir)
	code = m.Run()
	fmt.Print(table(time.Since(began)))
	return code
}

// binary is $APPKEEPER_BINARY, else bin/appkeeper as "make build" writes it.
func binary() (string, error) {
	path := os.Getenv("APPKEEPER_BINARY")
	if path == "" {
		path = filepath.Join("..", "..", "bin", "appkeeper")
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%w: run make build", err)
	}
	return path, nil
}

// shippedRBACKubeconfig installs config/rbac and writes a kubeconfig whose user acts as the
// operator's ServiceAccount, so that the API server authorizes the operator by that RBAC alone.
func shippedRBACKubeconfig(ctx context.Context) (string, error) {
	sa, err := testenv.AsShippedServiceAccount(ctx, cluster.Config)
	if err != nil {
		return "", err
	}
	config, err := clientcmd.LoadFromFile(cluster.KubeconfigPath)
	if err != nil {
		return "", err
	}
	for _, auth := range config.AuthInfos {
		auth.Impersonate, auth.ImpersonateGroups = sa.Impersonate.UserName, sa.Impersonate.Groups
	}
	path := filepath.Join(cluster.Dir, "kubeconfig-operator")
	return path, clientcmd.WriteToFile(*config, path)
}
