package localcluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestStartRunsWorkloadsAndStopLeavesNothing(t *testing.T) {
	binDir := DefaultBinDir()
	if _, err := os.Stat(filepath.Join(binDir, "kwok")); err != nil {
		t.Skipf("no control-plane binaries in %s: run \"make controlplane\"", binDir)
	}
	ctx := t.Context()
	began := time.Now()
	c, err := Start(ctx, Options{Dir: t.TempDir(), BinDir: binDir, Nodes: 2, CRDs: []*apiextensionsv1.CustomResourceDefinition{widgetCRD()}, Log: testr.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	t.Logf("cluster ready in %s", time.Since(began).Round(time.Millisecond))

	pids := clusterProcesses(c.Dir)
	if len(pids) != 5 {
		t.Errorf("want 5 processes (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok), found %v", pids)
	}
	// Through the kubeconfig file, as a person or another program would connect.
	cfg, err := clientcmd.BuildConfigFromFlags("", c.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	createWidget(ctx, t, cl)
	runDeployment(ctx, t, cl)
	crashLoopBrokenImages(ctx, t, c.Config)
	bindClaim(ctx, t, cl)

	if err := c.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	for _, pid := range pids {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
			t.Errorf("process %d still exists after Stop", pid)
		}
	}
	if err := c.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	for _, keep := range []string{"kubeconfig", "logs/kube-apiserver.log", "logs/kwok.log"} {
		if _, err := os.Stat(filepath.Join(c.Dir, keep)); err != nil {
			t.Errorf("%s should remain after Stop: %v", keep, err)
		}
	}
	for _, gone := range []string{"etcd", "certs"} {
		if _, err := os.Stat(filepath.Join(c.Dir, gone)); err == nil {
			t.Errorf("%s should be removed by Stop", gone)
		}
	}
}

// createWidget checks that a custom resource is created at once when Start returns.
func createWidget(ctx context.Context, t *testing.T, cl client.Client) {
	t.Helper()
	w := &unstructured.Unstructured{}
	w.SetAPIVersion("test.appkeeper.dev/v1")
	w.SetKind("Widget")
	w.SetNamespace("default")
	w.SetName("w")
	began := time.Now()
	if err := cl.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > time.Second {
		t.Errorf("creating a custom resource took %s", took)
	}
}

func runDeployment(ctx context.Context, t *testing.T, cl client.Client) {
	t.Helper()
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
	began := time.Now()
	if err := cl.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "Deployment Available", func() bool {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
			return false
		}
		for _, cond := range d.Status.Conditions {
			if cond.Type == appsv1.DeploymentAvailable && cond.Status == corev1.ConditionTrue {
				return d.Status.AvailableReplicas == 2
			}
		}
		return false
	})
	t.Logf("Deployment Available in %s", time.Since(began).Round(time.Millisecond))
}

func bindClaim(ctx context.Context, t *testing.T, cl client.Client) {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			},
		},
	}
	began := time.Now()
	if err := cl.Create(ctx, pvc); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "PVC Bound", func() bool {
		err := cl.Get(ctx, client.ObjectKeyFromObject(pvc), pvc)
		return err == nil && pvc.Status.Phase == corev1.ClaimBound
	})
	t.Logf("PVC Bound in %s", time.Since(began).Round(time.Millisecond))
}

func eventually(ctx context.Context, t *testing.T, what string, ok func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return ok(), nil
	})
	switch {
	case ctx.Err() != nil:
		t.Fatal(ctx.Err())
	case err != nil:
		t.Fatalf("no %s after 30s", what)
	}
}

func widgetCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.test.appkeeper.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "test.appkeeper.dev",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
}

func TestStartNamesWhatIsMissing(t *testing.T) {
	empty := t.TempDir()
	_, err := Start(t.Context(), Options{Dir: t.TempDir(), BinDir: empty})
	want := filepath.Join(empty, "etcd") + ` not found: run "make controlplane"`
	if err == nil || err.Error() != want {
		t.Errorf("missing binaries: got %v, want %q", err, want)
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	bins := fakeBinDir(t)
	dir := filepath.Join(file, "state")
	_, err = Start(t.Context(), Options{Dir: dir, BinDir: bins})
	if err == nil || !strings.Contains(err.Error(), dir+" is not writable") {
		t.Errorf("unwritable dir: got %v, want it named", err)
	}
}

func TestStartRefusesABusyDir(t *testing.T) {
	c := &Cluster{Dir: t.TempDir()}
	if err := c.lockDir(); err != nil {
		t.Fatal(err)
	}
	defer c.unlock()
	_, err := Start(t.Context(), Options{Dir: c.Dir, BinDir: fakeBinDir(t)})
	if err == nil || !strings.Contains(err.Error(), "another local cluster is running in "+c.Dir) {
		t.Errorf("busy dir: got %v", err)
	}
}

func TestStartReportsAComponentThatExits(t *testing.T) {
	realBins := DefaultBinDir()
	if _, err := os.Stat(filepath.Join(realBins, "kwok")); err != nil {
		t.Skipf("no control-plane binaries in %s: run \"make controlplane\"", realBins)
	}
	bins := t.TempDir()
	for _, name := range append(binaries, "kubectl", "kwok-stages") {
		if name != "kwok" {
			if err := os.Symlink(filepath.Join(realBins, name), filepath.Join(bins, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(bins, "kwok"), []byte("#!/bin/sh\necho broken >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_, err := Start(t.Context(), Options{Dir: dir, BinDir: bins, Nodes: 1})
	want := "kwok exited (exit status 3): see " + filepath.Join(dir, "logs", "kwok.log")
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	if pids := clusterProcesses(dir); len(pids) > 0 {
		t.Errorf("processes %v left after a failed Start", pids)
	}
}

func TestStartKillsWhatAKilledParentLeftBehind(t *testing.T) {
	dir := t.TempDir()
	// Stands in for a kube-apiserver whose parent was killed: the loop keeps the shell, and
	// so its command line, alive.
	orphan := exec.Command("sh", "-c", "while :; do sleep 0.1; done", "sh", "--cert-dir="+filepath.Join(dir, "certs"))
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = orphan.Wait(); close(exited) }()
	t.Cleanup(func() { _ = orphan.Process.Kill() })

	_, err := Start(t.Context(), Options{Dir: dir, BinDir: fakeBinDir(t)})
	if err == nil || !strings.Contains(err.Error(), "kwok-stages") {
		t.Errorf("got %v, want the missing kwok stages named", err)
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Error("the leftover process is still running")
	}
}

// clusterProcesses lists this process's children that belong to the cluster in dir.
func clusterProcesses(dir string) []int {
	me := os.Getpid()
	return processes(func(ppid int, args []string) bool {
		return ppid == me && strings.Contains(strings.Join(args, " "), dir+string(filepath.Separator))
	})
}

// fakeBinDir has every binary Start looks for, as empty files.
func fakeBinDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range binaries {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
