package mysql

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apply"
	"github.com/appkeeper/appkeeper/internal/event"
	"github.com/appkeeper/appkeeper/internal/pass"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
)

// reconcileStatefulSet applies the StatefulSet built from target, the MySQL as the pass builds it;
// seen.sts receives it as the API server has it, and seen.applied target. A StatefulSet to make
// waits until the pods a deleted one of the same name left are gone (apply.ClearLeftBehind): it
// returns how long, and the pass ends.
func (r *Reconciler) reconcileStatefulSet(ctx context.Context, m, target *appsv1alpha1.MySQL, seen *observed, restore *resources.Restore,
	rollingBack bool, created *pass.Creations) (wait time.Duration, err error) {
	if seen.sts == nil {
		if wait, err := apply.ClearLeftBehind(ctx, r.Client, m.Namespace, m.ChildName(), seen.pods); wait > 0 || err != nil {
			return wait, err
		}
	}
	sts := &appsv1.StatefulSet{}
	// Members a smaller spec leaves out stay until removeMembers judges their removal safe.
	target.Spec.Members = memberSlots(target, seen.sts)
	result, before, err := apply.Child(ctx, r.Client, m, m.ChildName(),
		sts, resources.StatefulSet(target, restore, r.BackupImage), appsv1ac.ExtractStatefulSet)
	if err != nil {
		return 0, fmt.Errorf("statefulset of MySQL %s/%s: %w", m.Namespace, m.Name, err)
	}
	seen.sts, seen.applied = sts, target
	switch {
	case result == apply.Created:
		created.Add(sts, "StatefulSet %s running %s", m.ChildName(), target.Spec.Image)
	case result == apply.Updated && resources.Image(before) != target.Spec.Image && !rollingBack:
		// A rollback has its own Event.
		event.Upgrading.Emit(r.Recorder, m, nil,
			"rolling out %s, replacing %s", target.Spec.Image, resources.Image(before))
	}
	return 0, nil
}
