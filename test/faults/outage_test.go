//go:build faults

package faults

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// apiServerRestarts is how many times kube-apiserver is killed and started again in a row.
const apiServerRestarts = 3

// etcdPause is how long etcd stays stopped.
const etcdPause = 15 * time.Second

// kube-apiserver is killed and started again three times; every watch the operator holds breaks.
// A spec change made once it is back must be carried out as quickly as any other.
func TestAPIServerRestarted(t *testing.T) {
	s := begin(t, "apiserver-restarted", 1)
	s.createSet()
	var downs []time.Duration
	for range apiServerRestarts {
		down, err := cluster.RestartAPIServer(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		downs = append(downs, down)
	}
	ready := time.Now()
	s.scaleUp()
	waitConverged(t, s.ns)
	s.finish(summary{
		converged: []time.Duration{time.Since(ready)},
		notes: fmt.Sprintf("kube-apiserver killed and back %d times (down %s s); every WebServer and PodSet scaled up once it was ready",
			apiServerRestarts, seconds(downs)),
	}, nil)
}

// etcd stops for 15 s just after every WebServer and PodSet is scaled up: the API server can
// neither write nor read through to it. Once it runs again, the change is carried out and nothing
// stored is lost.
func TestEtcdPaused(t *testing.T) {
	s := begin(t, "etcd-paused", 1)
	s.createSet()
	s.scaleUp()
	if err := cluster.PauseEtcd(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(etcdPause)
	if err := cluster.ResumeEtcd(); err != nil {
		t.Fatal(err)
	}
	converged := waitConverged(t, s.ns)
	s.finish(summary{
		converged: []time.Duration{converged},
		notes:     fmt.Sprintf("etcd paused %.0f s just after every WebServer and PodSet was scaled up", etcdPause.Seconds()),
	}, nil)
}
