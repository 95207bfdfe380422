package mysql

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apply"
	"github.com/appkeeper/appkeeper/internal/event"
	"github.com/appkeeper/appkeeper/internal/replication"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
	"github.com/appkeeper/appkeeper/internal/seed"
)

// rebuildAgain is how long a member asked to rebuild may go on answering with its errant data
// before its pod is deleted once more: a pod that started before the plan reached its node.
const rebuildAgain = time.Minute

// errantMember is a member that holds writes the primary's history lacks.
type errantMember struct {
	name string
	// held is the member's GTID position.
	held replication.Position
}

// reconcileSeedPlan keeps the plan the members' seed containers read at their start: the primary,
// the member to copy from, and the rebuild requests. A member found errant while the primary takes
// writes is asked to rebuild, and its pod deleted so that it starts over on a copy: its own binary
// logs stay on its volume for a person to read.
func (r *Reconciler) reconcileSeedPlan(ctx context.Context, m *appsv1alpha1.MySQL, pods []corev1.Pod, views []replication.View, errant []errantMember) error {
	current := &corev1.ConfigMap{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.SeedPlanName()}, current); apierrors.IsNotFound(err) {
		current = nil
	} else if err != nil {
		return fmt.Errorf("seed plan of MySQL %s/%s: %w", m.Namespace, m.Name, err)
	}
	rebuilds := resources.Rebuilds(current)
	request := strconv.FormatInt(m.Status.Epoch, 10)
	var rebuild []errantMember
	if primaryOpen(m, views) {
		for _, e := range errant {
			if rebuilds[e.name] != request || startedBefore(pods, e.name, time.Now().Add(-rebuildAgain)) {
				rebuilds[e.name] = request
				rebuild = append(rebuild, e)
			}
		}
	}
	donor := donorOf(m, views)
	if err := apply.Ensure(ctx, r.Client, m, m.SeedPlanName(), &corev1.ConfigMap{},
		resources.SeedPlan(m, m.Status.Primary, donor, rebuilds), corev1ac.ExtractConfigMap); err != nil {
		return fmt.Errorf("seed plan of MySQL %s/%s: %w", m.Namespace, m.Name, err)
	}
	for _, e := range rebuild {
		if err := r.deleteMemberPod(ctx, pods, e.name); err != nil {
			return err
		}
		event.MemberRebuilt.Emit(r.Recorder, m, nil, "%s holds %s, beyond the fork %s that the primary %s began at: its data is replaced by a copy of %s, "+
			"and its binary logs are kept on its volume as %s%s-*", e.name, e.held, m.Status.Fork, m.Status.Primary, donor, seed.ErrantPrefix, request)
		log.FromContext(ctx).Info("rebuilding an errant member", "member", e.name, "held", e.held.String(), "fork", m.Status.Fork, "donor", donor)
	}
	return nil
}

// donorOf is the member the others copy from: a replica that replicates from the primary without
// error, which spares the primary the copy's reads, or else the primary.
func donorOf(m *appsv1alpha1.MySQL, views []replication.View) string {
	for _, v := range views {
		o := v.Observation
		if v.Name != m.Status.Primary && v.Err == nil && o.Replica != nil && o.Replica.SQLErrno == 0 && o.Replica.Receiving == "Yes" {
			return v.Name
		}
	}
	return m.Status.Primary
}

// startedBefore tells whether the pod of member was created before t.
func startedBefore(pods []corev1.Pod, member string, t time.Time) bool {
	for i := range pods {
		if pods[i].Name == member {
			return pods[i].CreationTimestamp.Time.Before(t)
		}
	}
	return false
}

// deleteMemberPod deletes the pod of member, the one this pass read, so that its StatefulSet makes
// it again.
func (r *Reconciler) deleteMemberPod(ctx context.Context, pods []corev1.Pod, member string) error {
	for i := range pods {
		pod := &pods[i]
		if pod.Name != member {
			continue
		}
		if _, err := apply.DeleteExactly(ctx, r.Client, pod); err != nil {
			return fmt.Errorf("delete pod %s/%s to rebuild it: %w", pod.Namespace, pod.Name, err)
		}
	}
	return nil
}
