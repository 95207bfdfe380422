package mysql

import (
	"context"
	"errors"
	"fmt"
	"slices"

	mysqldriver "github.com/go-sql-driver/mysql"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/replication"
)

// maxReadLagSeconds is how far a replica may apply behind its primary and still serve the read
// Service's clients: the lag past which the AppkeeperMySQLReplicaLagging alert fires.
const maxReadLagSeconds = 30

// readable tells whether a replica serves reads through the read Service: it applies without
// error, and no more than maxReadLagSeconds behind, as far as it knows its lag.
func readable(r *replication.ReplicaStatus) bool {
	return r != nil && r.SQLErrno == 0 && r.SecondsBehind <= maxReadLagSeconds
}

// labelRoles labels the primary's pod, once it takes writes, for the client Service, and the
// replicas' pods for the read Service; a member that cannot be read loses its label.
func (r *Reconciler) labelRoles(ctx context.Context, m *appsv1alpha1.MySQL, pods []corev1.Pod, views []replication.View) error {
	var errs []error
	for i := range pods {
		pod := &pods[i]
		want := ""
		if v, ok := viewOf(views, pod.Name); ok && v.Err == nil {
			switch {
			case pod.Name == m.Status.Primary && !v.Observation.ReadOnly:
				want = appsv1alpha1.RoleLabelPrimary
			case pod.Name != m.Status.Primary && readable(v.Observation.Replica):
				want = appsv1alpha1.RoleLabelReplica
			}
		}
		if pod.Labels[appsv1alpha1.LabelRole] == want {
			continue
		}
		patch := client.MergeFrom(pod.DeepCopy())
		if want == "" {
			delete(pod.Labels, appsv1alpha1.LabelRole)
		} else {
			pod.Labels[appsv1alpha1.LabelRole] = want
		}
		if err := r.Client.Patch(ctx, pod, patch, client.FieldOwner(r.Client.FieldOwner)); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("label the role of pod %s/%s: %w", pod.Namespace, pod.Name, err))
		}
	}
	return errors.Join(errs...)
}

// describeMemberError says why a member could not be read, in the words a person acts on.
func describeMemberError(err error) string {
	var server *mysqldriver.MySQLError
	switch {
	case errors.Is(err, replication.ErrNoAddress):
		return "its pod has not started"
	case errors.As(err, &server) && server.Number == unknownSystemVariable:
		return "the server is not MariaDB: a MySQL of more than one member needs MariaDB 10.11 or later (" + err.Error() + ")"
	}
	return err.Error()
}

// unknownSystemVariable is the server error for a variable it lacks, as MySQL lacks MariaDB's
// GTID variables.
const unknownSystemVariable = 1193

// primaryOpen tells whether the recorded primary answered, open to writes.
func primaryOpen(m *appsv1alpha1.MySQL, views []replication.View) bool {
	v, ok := viewOf(views, m.Status.Primary)
	return ok && v.Err == nil && !v.Observation.ReadOnly
}

// memberStatuses is each member as the pass last read it.
func memberStatuses(m *appsv1alpha1.MySQL, state clusterState, pods []corev1.Pod) []appsv1alpha1.MySQLMemberStatus {
	views := state.views
	statuses := make([]appsv1alpha1.MySQLMemberStatus, 0, len(views))
	for _, v := range views {
		s := appsv1alpha1.MySQLMemberStatus{Name: v.Name, Role: appsv1alpha1.RoleUnknown}
		if i := slices.IndexFunc(pods, func(p corev1.Pod) bool { return p.Name == v.Name }); i >= 0 {
			s.Ready = conditions.PodReady(&pods[i])
		}
		s.Errant = slices.ContainsFunc(state.errant, func(e errantMember) bool { return e.name == v.Name })
		if v.Err != nil {
			s.Message = describeMemberError(v.Err)
			statuses = append(statuses, s)
			continue
		}
		o := v.Observation
		s.Position = o.Held().String()
		switch {
		case v.Name == m.Status.Primary && !o.ReadOnly:
			s.Role = appsv1alpha1.RolePrimary
			acknowledging := acknowledgingReplicas(o, views)
			s.AcknowledgingReplicas = &acknowledging
			s.CommitsAlone = !o.SemiSyncActive
		case o.Replica != nil:
			s.Role = appsv1alpha1.RoleReplica
			if o.Replica.SecondsBehind >= 0 {
				lag := o.Replica.SecondsBehind
				s.LagSeconds = &lag
			}
			s.Message = replicationError(o.Replica)
		}
		statuses = append(statuses, s)
	}
	return statuses
}

// acknowledgingReplicas is how many replicas can acknowledge the commits of the primary o: those
// connected to it, as it counts them, but no more than the replicas that answer and receive, as
// a replica that hangs still counts as connected.
func acknowledgingReplicas(primary replication.Observation, views []replication.View) int32 {
	receiving := 0
	for _, v := range views {
		if v.Err == nil && v.Observation.Replica != nil && v.Observation.Replica.Receiving == "Yes" {
			receiving++
		}
	}
	return int32(min(primary.SemiSyncReplicas, receiving))
}

// replicationError is a replica's last receiving or applying error, or empty.
func replicationError(r *replication.ReplicaStatus) string {
	switch {
	case r.SQLErrno != 0:
		return fmt.Sprintf("applying stopped with error %d: %s", r.SQLErrno, r.SQLError)
	case r.IOErrno != 0 && r.Receiving != "Yes":
		return fmt.Sprintf("receiving fails with error %d: %s", r.IOErrno, r.IOError)
	}
	return ""
}
