//go:build faults

package faults

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// Half of every kind's instances are deleted. Everything they own goes with them, through the
// garbage collector, but for what the default deletionPolicy, Retain, keeps for a successor of the
// same name: each MySQL's data volume and credentials Secret (a WordPress's own MySQL's too) and
// each WordPress's content volume. Those stay exactly as they were; the other half is untouched.
func TestHalfDeleted(t *testing.T) {
	s := begin(t, "half-deleted", 1)
	s.createSet()
	ctx := context.Background()
	insts, err := listInstances(ctx, s.ns)
	if err != nil {
		t.Fatal(err)
	}
	doomed, going := halfOf(insts)
	kept := map[string]client.Object{}
	mayGo := map[string]bool{}
	for _, inst := range going {
		for _, r := range retainedOf(inst) {
			obj := newObject(r.kind)
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: r.name}, obj); err != nil {
				t.Fatal(err)
			}
			kept[r.kind+"/"+r.name] = obj
		}
		for _, name := range ownedSecrets(inst.obj) {
			mayGo[secretKind+"/"+name] = true
		}
	}
	for _, inst := range doomed {
		if err := k8s.Delete(ctx, inst.obj); err != nil {
			t.Fatal(err)
		}
	}
	deleted := time.Now()
	waitFor(t, "the deleted instances' children to go", func(ctx context.Context) error {
		return onlyKeptLeft(ctx, s.ns, going, kept)
	})
	took := time.Since(deleted)
	for key, before := range kept {
		if err := unchanged(ctx, before); err != nil {
			t.Errorf("%s: %v", key, err)
		}
	}
	s.finish(summary{
		converged: []time.Duration{took},
		notes: fmt.Sprintf("%d instances deleted, and with them the MySQLs of %d WordPresses; %d Secrets and PVCs kept",
			len(doomed), len(going)-len(doomed), len(kept)),
	}, func(kind, name string) bool { return mayGo[kind+"/"+name] })
}

// halfOf picks the instances to delete, the first half of each kind, and those that go with them:
// the same, with the MySQLs of the WordPresses among them.
func halfOf(insts []instance) (doomed, going []instance) {
	names := map[string]bool{}
	for _, k := range kinds {
		for i := range perKind / 2 {
			names[fmt.Sprintf("%s-%d", k.prefix, i)] = true
		}
	}
	for _, inst := range insts {
		owner := metav1.GetControllerOf(inst.obj)
		switch {
		case names[inst.obj.GetName()]:
			doomed = append(doomed, inst)
			going = append(going, inst)
		case owner != nil && names[owner.Name]:
			going = append(going, inst)
		}
	}
	return doomed, going
}

func retainedOf(inst instance) []retainedObject {
	if inst.kind.retained == nil {
		return nil
	}
	return inst.kind.retained(inst.obj)
}

// ownedSecrets are the Secrets an instance owns, which go with it.
func ownedSecrets(obj client.Object) []string {
	switch o := obj.(type) {
	case *appsv1alpha1.MySQL:
		return []string{o.BackupAccountSecretName()}
	case *appsv1alpha1.WordPress:
		return []string{o.SaltsSecretName()}
	}
	return nil
}

func newObject(kind string) client.Object {
	if kind == claimKind {
		return &corev1.PersistentVolumeClaim{}
	}
	return &corev1.Secret{}
}

// onlyKeptLeft returns nil once nothing labelled as a going instance's is left but what it keeps,
// and the other instances are converged, nothing in the namespace without its controller.
func onlyKeptLeft(ctx context.Context, ns string, going []instance, kept map[string]client.Object) error {
	names := map[string]bool{}
	for _, inst := range going {
		names[inst.obj.GetName()] = true
	}
	insts, err := listInstances(ctx, ns)
	if err != nil {
		return err
	}
	objs, err := listObjects(ctx, ns, insts)
	if err != nil {
		return err
	}
	for key, obj := range objs.named {
		if names[obj.GetLabels()[appsv1alpha1.LabelInstance]] && kept[key] == nil {
			return fmt.Errorf("%s of a deleted instance is still there", key)
		}
	}
	return converged(ctx, ns)
}

// unchanged returns nil when the live object is the one before, with the same data.
func unchanged(ctx context.Context, before client.Object) error {
	now := before.DeepCopyObject().(client.Object)
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(before), now); err != nil {
		return err
	}
	if now.GetUID() != before.GetUID() {
		return fmt.Errorf("replaced: UID %s, was %s", now.GetUID(), before.GetUID())
	}
	if secret, ok := now.(*corev1.Secret); ok && !maps.EqualFunc(secret.Data, before.(*corev1.Secret).Data, bytes.Equal) {
		return fmt.Errorf("its data changed")
	}
	return nil
}
