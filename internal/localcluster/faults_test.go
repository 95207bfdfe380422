package localcluster

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestAPIServerRestartedAndEtcdPausedKeepWhatIsStored(t *testing.T) {
	binDir := DefaultBinDir()
	if _, err := os.Stat(filepath.Join(binDir, "kwok")); err != nil {
		t.Skipf("no control-plane binaries in %s: run \"make controlplane\"", binDir)
	}
	ctx := t.Context()
	c, err := Start(ctx, Options{Dir: t.TempDir(), BinDir: binDir, Nodes: 1, Log: testr.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	cl, err := client.New(c.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	restartAPIServer(ctx, t, c, cl)
	pauseEtcd(ctx, t, c, cl)

	pids := clusterProcesses(c.Dir)
	if err := c.PauseEtcd(); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatalf("Stop with etcd paused: %v", err)
	}
	for _, pid := range append(pids, c.etcdProcesses()...) {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
			t.Errorf("process %d still exists after Stop", pid)
		}
	}
}

// restartAPIServer restarts kube-apiserver twice and checks that a new one serves what was stored.
func restartAPIServer(ctx context.Context, t *testing.T, c *Cluster, cl client.Client) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kept"}, Data: map[string]string{"k": "v"}}
	if err := cl.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	first := c.apiServerProcesses()
	for range 2 {
		down, err := c.RestartAPIServer(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("kube-apiserver down for %s", down.Round(time.Millisecond))
	}
	if now := c.apiServerProcesses(); len(now) != 1 || now[0] == first[0] {
		t.Errorf("kube-apiserver processes %v before, %v after the restarts", first, now)
	}
	kept := &corev1.ConfigMap{}
	if err := cl.Get(ctx, client.ObjectKeyFromObject(cm), kept); err != nil || kept.UID != cm.UID {
		t.Errorf("the ConfigMap after the restarts: %v, UID %s, want %s", err, kept.UID, cm.UID)
	}
}

// pauseEtcd checks that writes wait while etcd is paused and go through once it runs again.
func pauseEtcd(ctx context.Context, t *testing.T, c *Cluster, cl client.Client) {
	t.Helper()
	if err := c.PauseEtcd(); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, time.Second)
	err := cl.Create(short, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "paused"}})
	cancel()
	if err == nil {
		t.Error("a write succeeded while etcd was paused")
	}
	if err := c.ResumeEtcd(); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "a write once etcd runs again", func() bool {
		err := cl.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "resumed"}})
		return err == nil
	})
}
