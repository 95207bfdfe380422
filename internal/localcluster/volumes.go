package localcluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// makeVolumeDirs makes the folder of each volume kwok provisions for the real node, as soon as the
// volume appears, and removes it when the volume goes. The folders are open to every user, since
// the kubelet does not apply a pod's fsGroup to host paths and the operands run as users of
// their own.
func (c *Cluster) makeVolumeDirs(ctx context.Context) {
	dir := c.real.paths.volumes()
	for ctx.Err() == nil {
		if err := c.watchVolumes(ctx, dir); err != nil && ctx.Err() == nil {
			c.log.Info("watching volumes for the real node failed; retrying", "error", err.Error())
			_ = sleepCtx(ctx, time.Second)
		}
	}
}

func (c *Cluster) watchVolumes(ctx context.Context, dir string) error {
	cfg := *c.Config
	cl, err := client.NewWithWatch(&cfg, client.Options{})
	if err != nil {
		return err
	}
	var list corev1.PersistentVolumeList
	if err := cl.List(ctx, &list); err != nil {
		return err
	}
	for i := range list.Items {
		makeVolumeDir(&list.Items[i], dir)
	}
	w, err := cl.Watch(ctx, &corev1.PersistentVolumeList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		return err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		pv, ok := ev.Object.(*corev1.PersistentVolume)
		if !ok {
			continue
		}
		switch ev.Type {
		case watch.Added, watch.Modified:
			makeVolumeDir(pv, dir)
		case watch.Deleted:
			if path, ok := volumePath(pv, dir); ok {
				_ = os.RemoveAll(path)
			}
		}
	}
	return nil
}

func makeVolumeDir(pv *corev1.PersistentVolume, dir string) {
	path, ok := volumePath(pv, dir)
	if !ok || pv.DeletionTimestamp != nil {
		return
	}
	if err := os.Mkdir(path, 0o777); err == nil {
		// The umask took bits away from Mkdir's mode.
		_ = os.Chmod(path, 0o777)
	}
}

// volumePath is the folder of a host-path volume in dir.
func volumePath(pv *corev1.PersistentVolume, dir string) (string, bool) {
	if pv.Spec.HostPath == nil {
		return "", false
	}
	path := filepath.Clean(pv.Spec.HostPath.Path)
	if filepath.Dir(path) != dir || !strings.HasPrefix(filepath.Base(path), "pvc-") {
		return "", false
	}
	return path, true
}
