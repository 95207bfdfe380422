package mysql

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/event"
	"github.com/appkeeper/appkeeper/internal/failure"
	"github.com/appkeeper/appkeeper/internal/kube"
	"github.com/appkeeper/appkeeper/internal/pass"
	"github.com/appkeeper/appkeeper/internal/replication"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
	"github.com/appkeeper/appkeeper/internal/rollout"
	"github.com/appkeeper/appkeeper/internal/tuning"
)

// downgradeRefusal explains why moving from the running image to the wanted one is refused, or is
// empty: mysqld cannot start on data files that a newer major or minor version has written. Tags
// that name no version cannot be compared and are let through.
func downgradeRefusal(running, wanted string) string {
	if running == "" || running == wanted {
		return ""
	}
	runMajor, runMinor, ok1 := appsv1alpha1.ImageVersion(running)
	wantMajor, wantMinor, ok2 := appsv1alpha1.ImageVersion(wanted)
	if !ok1 || !ok2 {
		return ""
	}
	if wantMajor < runMajor || wantMajor == runMajor && wantMinor < runMinor {
		return fmt.Sprintf("spec.image %s would downgrade the server from %d.%d (%s) to %d.%d: MySQL cannot read data "+
			"files written by a newer version, so the server keeps running %s; set spec.image to %d.%d or later",
			wanted, runMajor, runMinor, running, wantMajor, wantMinor, running, runMajor, runMinor)
	}
	return ""
}

// newestImage is whichever of two images names the newer version. An image whose tag names no
// version (latest, 8, a digest) never wins over one that does: the record of a version the data
// volume has seen must outlive a move to a tag nothing can be compared with. Of two such images,
// a.
func newestImage(a, b string) string {
	if a == "" || a == b {
		return b
	}
	aMajor, aMinor, okA := appsv1alpha1.ImageVersion(a)
	bMajor, bMinor, okB := appsv1alpha1.ImageVersion(b)
	switch {
	case okA && okB && (bMajor > aMajor || bMajor == aMajor && bMinor > aMinor):
		return b
	case !okA && okB:
		return b
	}
	return a
}

// unverifiedImage explains that the downgrade guard let wanted through without knowing its
// version, while the data volume records one it was written by, or is empty.
func unverifiedImage(recorded, wanted string) string {
	if recorded == "" || recorded == wanted {
		return ""
	}
	_, _, recordedOK := appsv1alpha1.ImageVersion(recorded)
	_, _, wantedOK := appsv1alpha1.ImageVersion(wanted)
	if !recordedOK || wantedOK {
		return ""
	}
	return fmt.Sprintf("spec.image %s names no version, so the downgrade guard cannot tell whether it is older than "+
		"%s, which the data volume records; a tag with a version, such as mysql:8.4.6, lets it check", wanted, recorded)
}

// computeStatus derives the status of m, whose spec is the one the pass built the server from (the
// last good revision's pod fields while the spec's revision is rolled back), from the pass's
// rollout decision, from what it observed and from its error, if any.
func computeStatus(m *appsv1alpha1.MySQL, d rollout.Decision, seen observed, reconcileErr error) appsv1alpha1.MySQLStatus {
	status := *m.Status.DeepCopy()
	status.Rollout = d.Status
	status.ObservedGeneration = m.Generation
	status.Endpoint = m.Endpoint()
	status.SecretName = m.SecretName()
	status.DesiredReplicas = m.MemberCount()
	status.Tuning = resources.Tuning(m)
	status.ReadyReplicas = 0
	if seen.sts != nil {
		status.ReadyReplicas = seen.sts.Status.ReadyReplicas
	}
	if m.Clustered() {
		status.Members = memberStatuses(m, seen.cluster, seen.pods)
	}
	if !m.Spec.Backup.PointInTimeRecoveryEnabled() {
		status.PointInTimeRecovery = nil
	} else if seen.archiveRead {
		status.PointInTimeRecovery = seen.archive
	}
	complete := rolloutComplete(seen.sts)
	if complete {
		status.Image = resources.Image(seen.sts)
	}
	conditions.SetHealthConditions(&status.Conditions, m.Generation,
		available(m, seen),
		d.Progressing(progressing(m, seen, complete)),
		d.Degraded(degraded(m, seen, reconcileErr), reconcileErr))
	return status
}

// rolloutComplete is true when every member of the StatefulSet runs its current template and is ready.
func rolloutComplete(sts *appsv1.StatefulSet) bool {
	if sts == nil || sts.Status.ObservedGeneration < sts.Generation {
		return false
	}
	s, members := sts.Status, int32(1)
	if sts.Spec.Replicas != nil {
		members = *sts.Spec.Replicas
	}
	// The StatefulSet controller moves the current revision only for its own rolling updates: a
	// cluster's members, which the operator replaces itself, count as updated instead.
	return s.UpdatedReplicas == members && s.ReadyReplicas == members && s.Replicas == members &&
		(s.CurrentRevision == s.UpdateRevision || s.CurrentRevision == "" || sts.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType)
}

func available(m *appsv1alpha1.MySQL, seen observed) conditions.Condition {
	c := conditions.Condition{Type: appsv1alpha1.ConditionAvailable}
	switch {
	case seen.sts == nil:
		c.Reason, c.Message = appsv1alpha1.ReasonCreating, "the StatefulSet is being created"
	case seen.claimErr != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, appsv1alpha1.ReasonReadFailed, seen.claimErr.Error()
	case seen.claim == nil || seen.claim.Status.Phase != corev1.ClaimBound:
		phase := "missing"
		if seen.claim != nil {
			phase = string(seen.claim.Status.Phase)
		}
		c.Reason = appsv1alpha1.ReasonClaimNotBound
		c.Message = fmt.Sprintf("the data volume claim %s is %s", m.DataClaimName(), phase)
	case m.Clustered() && seen.cluster.problemReason == appsv1alpha1.ReasonNoPrimary || m.Clustered() && m.Status.Primary == "":
		c.Reason, c.Message = appsv1alpha1.ReasonNoPrimary, "no member takes writes yet"
		if seen.cluster.problemReason == appsv1alpha1.ReasonNoPrimary {
			c.Message = seen.cluster.problem
		}
	case m.Clustered() && !primaryOpen(m, seen.cluster.views):
		c.Reason, c.Message = appsv1alpha1.ReasonNoPrimary, fmt.Sprintf("the primary %s does not take writes", m.Status.Primary)
		if seen.cluster.problem != "" {
			c.Message += ": " + seen.cluster.problem
		}
	case seen.sts.Status.ReadyReplicas < 1:
		c.Reason, c.Message = appsv1alpha1.ReasonReplicasNotReady, "mysqld is not ready to serve queries"
	default:
		c.Status, c.Reason = metav1.ConditionTrue, appsv1alpha1.ReasonAsExpected
		c.Message = fmt.Sprintf("mysqld serves at %s", m.Endpoint())
	}
	return c
}

func progressing(m *appsv1alpha1.MySQL, seen observed, complete bool) conditions.Condition {
	c := conditions.Condition{Type: appsv1alpha1.ConditionProgressing}
	switch {
	case seen.refusal != "":
		c.Reason, c.Message = appsv1alpha1.ReasonDowngradeRefused, "the rollout of spec.image is refused; see Degraded"
	case seen.rollbackRefusal != "":
		c.Reason, c.Message = appsv1alpha1.ReasonRollbackRefused, "the rollout failed and cannot be rolled back; see Degraded"
	case seen.restoreWait != "":
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, appsv1alpha1.ReasonRestoreSourceNotReady, seen.restoreWait
	case seen.gate.hold && !seen.gate.failed:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, appsv1alpha1.ReasonWaitingForBackup, seen.gate.message
	case seen.gate.failed:
		c.Reason, c.Message = appsv1alpha1.ReasonPreUpgradeBackupFailed, "the rollout of spec.image waits for a backup; see Degraded"
	case seen.sts == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, appsv1alpha1.ReasonCreating, "the StatefulSet is being created"
	case complete && resources.Image(seen.sts) == m.Spec.Image:
		c.Reason, c.Message = appsv1alpha1.ReasonRolloutComplete, "the server runs "+m.Spec.Image
	default:
		c.Status, c.Reason = metav1.ConditionTrue, appsv1alpha1.ReasonRollingOut
		c.Message = "starting the server with " + m.Spec.Image
	}
	if seen.unverified != "" {
		c.Message += "; " + seen.unverified
	}
	return c
}

// primaryWaiting says, of the open primary of a cluster, that it commits without waiting for a
// replica (durability Preferred past ackTimeout: Unprotected), or that every commit waits since
// no replica can acknowledge (durability Required: WritesWaiting); or returns an empty reason.
func primaryWaiting(m *appsv1alpha1.MySQL, views []replication.View) (reason, message string) {
	v, ok := viewOf(views, m.Status.Primary)
	if !m.Clustered() || !ok || v.Err != nil || v.Observation.ReadOnly || !v.Observation.SemiSyncSource {
		return "", ""
	}
	switch {
	case !v.Observation.SemiSyncActive:
		return appsv1alpha1.ReasonUnprotected, fmt.Sprintf("the primary %s commits without waiting for a replica, as none acknowledged within ackTimeout %s (durability Preferred): "+
			"a failover now can lose the writes acknowledged since; it waits again once a replica catches up", m.Status.Primary, m.AckTimeout())
	case m.AckTimeout() == 0 && acknowledgingReplicas(v.Observation, views) == 0:
		return appsv1alpha1.ReasonWritesWaiting, fmt.Sprintf("no replica acknowledges the commits of the primary %s, and with durability Required each commit waits until one does: "+
			"bring a replica back (status.members says why each does not replicate)", m.Status.Primary)
	}
	return "", ""
}

// degraded is True when the pass failed, a downgrade or a rollback was refused or the server's pod
// cannot run or is on a lost node (PodsDegraded), and Unknown when the pod could not be read.
func degraded(m *appsv1alpha1.MySQL, seen observed, reconcileErr error) conditions.Condition {
	c := conditions.Condition{Type: appsv1alpha1.ConditionDegraded, Reason: appsv1alpha1.ReasonAsExpected}
	waitingReason, waiting := primaryWaiting(m, seen.cluster.views)
	switch {
	case reconcileErr != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, failure.Reason(reconcileErr), reconcileErr.Error()
	case seen.refusal != "":
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, appsv1alpha1.ReasonDowngradeRefused, seen.refusal
	case seen.rollbackRefusal != "":
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, appsv1alpha1.ReasonRollbackRefused, seen.rollbackRefusal
	case seen.gate.failed:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, appsv1alpha1.ReasonPreUpgradeBackupFailed, seen.gate.message
	case seen.restoreWait != "" && !strings.HasPrefix(seen.restoreWait, restoreWaitingPrefix):
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, appsv1alpha1.ReasonRestoreSourceNotReady, seen.restoreWait
	case seen.cluster.problemReason == appsv1alpha1.ReasonFailoverBlocked || seen.cluster.problemReason == appsv1alpha1.ReasonErrantMember:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, seen.cluster.problemReason, seen.cluster.problem
	case waitingReason != "":
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, waitingReason, waiting
	default:
		return conditions.PodsDegraded(seen.pods, seen.lost, seen.podsErr)
	}
	return c
}

// observeStatus computes the status from what the pass saw and decided and from passErr, its
// error, and records the Events it calls for; it returns the error of the reads it relied on.
func (r *Reconciler) observeStatus(ctx context.Context, p *pass.Pass[*appsv1alpha1.MySQL], seen *observed, passErr error) error {
	m := p.Instance
	if seen.claim == nil {
		seen.claim, seen.claimErr = r.claim(ctx, m)
	}
	if !seen.podsRead {
		seen.pods, seen.podsErr = kube.ListPods(ctx, r.Client, m.Namespace, m.SelectorLabels())
	}
	// The status speaks of the server the pass built: the spec, or the last good revision's.
	m.Status = computeStatus(built(m, seen.target), p.Decision, *seen, passErr)
	r.recordTransitions(p.Original, m)
	// A failed read leaves its conditions Unknown and is retried like any other error.
	return errors.Join(seen.claimErr, seen.podsErr)
}

// built is m as the pass builds its server: with spec, the spec as written or the last good
// revision's pod fields.
func built(m *appsv1alpha1.MySQL, spec appsv1alpha1.MySQLSpec) *appsv1alpha1.MySQL {
	b := m.DeepCopy()
	b.Spec = spec
	return b
}

// recordTransitions emits Upgraded when a rollout has just completed; WarnWhenDegraded tells of a
// refused downgrade or rollback.
func (r *Reconciler) recordTransitions(original, m *appsv1alpha1.MySQL) {
	if original.Status.Image != "" && m.Status.Image != original.Status.Image {
		event.Upgraded.Emit(r.Recorder, m, nil, "the server runs %s", m.Status.Image)
	}
	if change := tuning.Change(original.Status.Tuning, m.Status.Tuning, "the server restarts with them"); change != "" {
		event.Tuned.Emit(r.Recorder, m, nil, "%s", change)
	}
}
