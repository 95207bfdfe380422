package apiserverwait_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/operator"
	"github.com/appkeeper/appkeeper/test/framework/await"
	"github.com/appkeeper/appkeeper/test/framework/testcluster"
	"github.com/appkeeper/appkeeper/test/framework/testenv"
)

const (
	outages = 3
	// actTimeout bounds the wait for the operator to act on a change: generous, since a loaded
	// machine is slow, and far below what a Reflector backing off through the outages takes.
	actTimeout = 60 * time.Second
)

// operatorLog receives the log of every manager the package's tests start. It is set in TestMain:
// controller-runtime keeps the first logger it is given, and gives none once 30 s have passed
// since the binary started, which a test started late on a busy machine would miss.
var operatorLog = &outageLog{}

func TestMain(m *testing.M) {
	ctrl.SetLogger(funcr.New(operatorLog.record, funcr.Options{}))
	os.Exit(m.Run())
}

// outageLog holds the operator's log lines about the API server's outages.
type outageLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *outageLog) record(_, args string) {
	if !strings.Contains(args, `"msg"="lost the API server`) && !strings.Contains(args, `"msg"="API server is back"`) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, args)
}

// pairs checks that the log tells of each outage once: a loss, then a return, n times.
func (l *outageLog) pairs(n int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) != 2*n {
		return fmt.Errorf("%d lines about outages, want %d:\n%s", len(l.lines), 2*n, strings.Join(l.lines, "\n"))
	}
	for i, line := range l.lines {
		want := map[bool]string{true: "lost the API server", false: "API server is back"}[i%2 == 0]
		if !strings.Contains(line, want) {
			return fmt.Errorf("line %d is %s, want %q:\n%s", i+1, line, want, strings.Join(l.lines, "\n"))
		}
	}
	return nil
}

// The operator acts on a change soon after the API server comes back from each of several outages,
// and says once per outage that it lost the API server and once that it is back.
func TestOperatorActsOnceTheAPIServerIsBack(t *testing.T) {
	cp := startControlPlane(t, filepath.Join("..", "..", "config", "crd", "bases"))
	log := operatorLog
	k8s, err := client.New(cp.admin, client.Options{Scheme: operator.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	startOperator(t, cp)

	ns := testcluster.NewNamespace(t, k8s, "outage")
	ws := &appsv1alpha1.WebServer{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       appsv1alpha1.WebServerSpec{Replicas: ptr.To[int32](1)},
	}
	if err := k8s.Create(t.Context(), ws); err != nil {
		t.Fatal(err)
	}
	deploymentFollows(t, k8s, ns, 1)
	for i := 1; i <= outages; i++ {
		ready := cp.restartAPIServer(t, 2*time.Second)
		replicas := int32(i + 1)
		scale(t, k8s, ns, replicas)
		deploymentFollows(t, k8s, ns, replicas)
		t.Logf("outage %d: the operator acted on a change %.2f s after the API server was ready",
			i, time.Since(ready).Seconds())
	}
	await.Eventually(t, 5*time.Second, func(context.Context) error { return log.pairs(outages) })
}

// startOperator runs the manager against cp's API server, with the RBAC the project ships.
func startOperator(t *testing.T, cp *controlPlane) {
	t.Helper()
	cfg, err := testenv.AsShippedServiceAccount(t.Context(), cp.admin)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := operator.NewManager(cfg, operator.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// scale sets the WebServer's replicas as soon as the API server takes the write.
func scale(t *testing.T, k8s client.Client, ns string, replicas int32) {
	t.Helper()
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas))
	ws := &appsv1alpha1.WebServer{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}}
	await.Eventually(t, actTimeout, func(ctx context.Context) error { return k8s.Patch(ctx, ws, patch) })
}

func deploymentFollows(t *testing.T, k8s client.Client, ns string, replicas int32) {
	t.Helper()
	await.Eventually(t, actTimeout, func(ctx context.Context) error {
		dep := &appsv1.Deployment{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, dep); err != nil {
			return err
		}
		if got := ptr.Deref(dep.Spec.Replicas, 1); got != replicas {
			return fmt.Errorf("the Deployment has %d replicas, want %d", got, replicas)
		}
		return nil
	})
}
