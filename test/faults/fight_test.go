//go:build faults

package faults

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// foughtWebServers are the WebServers whose Deployment and Service a second writer edits.
	foughtWebServers = 4
	// fightRate and fightLength: the second writer's edits per second, and for how long.
	fightRate   = 10
	fightLength = 20 * time.Second
	// settleWindow follows the fight: the operator puts its fields back and its instances' status
	// follows their pods; quietWindow follows that, and the operator must write nothing in it.
	settleWindow = 10 * time.Second
	quietWindow  = 5 * time.Second
	// maxSettleWritesPerChild bounds the operator's writes in settleWindow for each fought child:
	// the child put back, and the status and Events of its WebServer as its pods follow.
	maxSettleWritesPerChild = 4
	// editor is the second writer's field manager, the one kubectl edit uses.
	editor = "kubectl-edit"
	// foughtReplicas and foughtPort are what the second writer sets.
	foughtReplicas = 5
	foughtPort     = 8080
)

// fought is a child the second writer edits: how to read it and what the edit changes.
type fought struct {
	obj  client.Object
	edit func(client.Object)
}

func foughtChildren(ns string) []fought {
	var out []fought
	for i := range foughtWebServers {
		key := metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("ws-%d", i)}
		out = append(out,
			fought{&appsv1.Deployment{ObjectMeta: key}, func(obj client.Object) {
				obj.(*appsv1.Deployment).Spec.Replicas = ptr.To[int32](foughtReplicas)
			}},
			fought{&corev1.Service{ObjectMeta: key}, func(obj client.Object) {
				obj.(*corev1.Service).Spec.Ports[0].Port = foughtPort
			}})
	}
	return out
}

// A person edits fields the operator owns on some WebServers' Deployments and Services, ten times
// a second for 20 s, as kubectl edit does: read, change, update. Each edit is undone. Once the
// person stops, the children are as the operator wants them and the operator goes quiet.
func TestSecondWriterFights(t *testing.T) {
	s := begin(t, "fight", 1)
	s.createSet()
	children := foughtChildren(s.ns)
	before := counts(s.ops)
	edits, refused := fight(t, children)
	ended := time.Now()
	atEnd := counts(s.ops)

	waitFor(t, "the fought children to be put back", func(ctx context.Context) error { return putBack(ctx, children) })
	restored := time.Since(ended)
	time.Sleep(time.Until(ended.Add(settleWindow)))
	settled := counts(s.ops)
	time.Sleep(quietWindow)
	quiet := counts(s.ops)
	during, after := atEnd.since(before), quiet.since(atEnd)
	if w := settled.since(atEnd).writes; w > float64(maxSettleWritesPerChild*len(children)) {
		t.Errorf("the operator wrote %.0f times in the %s after the fight, more than %d for each of the %d fought children",
			w, settleWindow, maxSettleWritesPerChild, len(children))
	}
	if w := quiet.since(settled).writes; w != 0 {
		t.Errorf("the operator wrote %.0f times in the %s after that, want none", w, quietWindow)
	}
	if after.conflicts != 0 {
		t.Errorf("the operator met %.0f conflicts (409) after the fight, want none", after.conflicts)
	}
	waitConverged(t, s.ns)
	s.finish(summary{
		converged: []time.Duration{restored},
		notes: fmt.Sprintf("%d edits (%d refused with 409) of %d children over %.0f s; the operator: %.0f writes and %.0f 409s during the fight, %.0f writes and %.0f 409s in the %.0f s after",
			edits, refused, len(children), fightLength.Seconds(), during.writes, during.conflicts,
			after.writes, after.conflicts, (settleWindow + quietWindow).Seconds()),
	}, nil)
}

// fight edits the children in turn at fightRate for fightLength and returns how many edits it
// sent and how many the API server refused for a conflict.
func fight(t *testing.T, children []fought) (edits, refused int) {
	t.Helper()
	ctx := context.Background()
	tick := time.NewTicker(time.Second / fightRate)
	defer tick.Stop()
	for end := time.Now().Add(fightLength); time.Now().Before(end); <-tick.C {
		c := children[edits%len(children)]
		obj := c.obj.DeepCopyObject().(client.Object)
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
		c.edit(obj)
		edits++
		err := k8s.Update(ctx, obj, client.FieldOwner(editor))
		switch {
		case apierrors.IsConflict(err):
			refused++
		case err != nil:
			t.Fatal(err)
		}
	}
	return edits, refused
}

// putBack returns nil once no fought child holds the second writer's value.
func putBack(ctx context.Context, children []fought) error {
	for _, c := range children {
		obj := c.obj.DeepCopyObject().(client.Object)
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		switch o := obj.(type) {
		case *appsv1.Deployment:
			if ptr.Deref(o.Spec.Replicas, 1) == foughtReplicas {
				return fmt.Errorf("Deployment %s still has %d replicas", o.Name, foughtReplicas)
			}
		case *corev1.Service:
			for _, p := range o.Spec.Ports {
				if p.Port == foughtPort {
					return fmt.Errorf("Service %s still listens on %d", o.Name, foughtPort)
				}
			}
		}
	}
	return nil
}
