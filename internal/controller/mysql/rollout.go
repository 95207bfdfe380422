package mysql

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/pass"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysql"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

// revision is the revision of the server m asks for: its pod template, which carries the hash of
// my.cnf, so that a change of spec.config alone is a revision too. The restore init container,
// there only until the server first serves, is no part of it, nor the operator's own image that
// a cluster's members copy data with.
func revision(m *appsv1alpha1.MySQL) rollout.Revision {
	return rollout.Revision{
		Name:       rollout.Hash(resources.StatefulSet(m, nil, "").Spec.Template),
		Image:      m.Spec.Image,
		ConfigHash: resources.ConfigHash(resources.MyCnf(m)),
		Spec:       rollout.Snapshot(m.Spec),
	}
}

// podFields copies into spec what makes a MySQL's pod and my.cnf (its tuning included) from the spec of a good
// revision. Storage, backups, restore, the deletion policy and the fields fixed at first start
// stay as the spec says.
func podFields(spec, good *appsv1alpha1.MySQLSpec) {
	spec.Image, spec.Resources, spec.Config, spec.Tuning = good.Image, good.Resources, good.Config, good.Tuning
	spec.NodeSelector, spec.Tolerations, spec.Affinity = good.NodeSelector, good.Tolerations, good.Affinity
	spec.Monitoring = good.Monitoring
}

// decide chooses the revision the pass applies: p's decision and desired revision, and the spec
// seen.target the server is built from. The backup before an image change
// comes first: while it runs, the image waits and the spec's revision has not begun to roll out,
// so the revision judged is the one that keeps the running image, and the progress deadline of
// the spec's starts only when the backup lets the image through. A rollback goes to an image
// older than the data volume records only if MySQL can read that data (rollbackRefusal).
func (r *Reconciler) decide(ctx context.Context, p *pass.Pass[*appsv1alpha1.MySQL], seen *observed, now time.Time) (nextBackup time.Duration, err error) {
	m := p.Instance
	desired := revision(m)
	st := m.Status.Rollout
	// A rolled back revision waits for a spec change; it needs no backup before it.
	rolledBack := st.Failed != nil && st.LastGood != nil && st.Failed.Name == desired.Name
	nextBackup, backups, err := r.reconcileBackups(ctx, m, seen, now, !rolledBack)
	seen.backups = backups
	if err != nil {
		return 0, err
	}
	spec := m.Spec
	if seen.gate.hold {
		spec.Image = resources.Image(seen.sts)
		held := m.DeepCopy()
		held.Spec = spec
		desired = revision(held)
	}
	in := rollout.Input{Policy: m.Spec.Upgrade, Status: st, Desired: desired, Pods: seen.pods, Now: now}
	d := rollout.Decide(in)
	if d.RolledBack != nil {
		nameBackup(&d, preUpgradeBackup(backups, d.Status.LastGood.Image, d.RolledBack.Image))
	}
	target, err := rollout.Target(d, spec, podFields)
	if err != nil {
		return 0, err
	}
	if d.RolledBack != nil {
		if why := rollbackRefusal(d.RolledBack, d.Status.LastGood, dataImage(seen.claim), target.Image); why != "" {
			// The failed revision stays, as if the policy did not roll back.
			seen.rollbackRefusal = why
			in.Policy.AutoRollback = ptr.To(false)
			d, target = rollout.Decide(in), spec
		}
	}
	p.Decision, p.Desired, seen.target = d, desired, target
	return nextBackup, nil
}

// nameBackup records in the failure d rolls back the backup taken before its image change.
func nameBackup(d *rollout.Decision, backup string) {
	d.RolledBack.Backup = backup
	if d.Status.Failed != nil {
		d.Status.Failed.Backup = backup
	}
}

// preUpgradeBackup is the newest successful backup taken before the image change from from to to,
// or empty.
func preUpgradeBackup(backups []appsv1alpha1.MySQLBackup, from, to string) string {
	var newest *appsv1alpha1.MySQLBackup
	for i := range backups {
		b := &backups[i]
		if b.Annotations[AnnotationUpgradeFrom] == from && b.Annotations[AnnotationUpgradeTo] == to && b.Status.Phase == appsv1alpha1.BackupSucceeded &&
			(newest == nil || b.CreationTimestamp.After(newest.CreationTimestamp.Time)) {
			newest = b
		}
	}
	if newest == nil || from == to {
		return ""
	}
	return newest.Name
}

// rollbackRefusal explains why the failed revision cannot be rolled back to good, whose image is
// restoring, or is empty: the data volume records a server newer than restoring's major or minor
// version, whose data files it cannot read. The failed server has normally recorded nothing, as the
// image is recorded only once a rollout completes.
func rollbackRefusal(failed *appsv1alpha1.FailedRevision, good *appsv1alpha1.GoodRevision, dataImage, restoring string) string {
	if downgradeRefusal(dataImage, restoring) == "" {
		return ""
	}
	why := failed.Reason
	if failed.Message != "" {
		why = failed.Message
	}
	msg := fmt.Sprintf("revision %s (%s) failed: %s; rolling back to revision %s (%s) is refused: the data volume records %s, "+
		"and MySQL cannot read data files written by a newer version, so the failed revision stays; fix spec.image or spec.config",
		failed.Name, failed.Image, why, good.Name, restoring, dataImage)
	if failed.Backup != "" {
		msg += fmt.Sprintf("; the backup taken before the upgrade is %s, to restore into a server of %s", failed.Backup, restoring)
	}
	return msg
}

// runsTarget tells whether the StatefulSet has completed its rollout of m's image and my.cnf:
// evidence that the revision the pass applied is good.
func runsTarget(sts *appsv1.StatefulSet, m *appsv1alpha1.MySQL) bool {
	return rolloutComplete(sts) && resources.Image(sts) == m.Spec.Image &&
		sts.Spec.Template.Annotations[resources.ConfigHashAnnotation] == resources.ConfigHash(resources.MyCnf(m))
}

// replaceFailedServer deletes the server's pod at once when a rolled back revision left it not
// Ready: the StatefulSet would wait for it forever before it starts the restored revision.
func (r *Reconciler) replaceFailedServer(ctx context.Context, m *appsv1alpha1.MySQL, seen observed, d rollout.Decision) error {
	for _, pod := range d.FailedMembers(seen.sts, seen.pods) {
		if err := r.wedged.DeleteRolledBack(ctx, r.Client, r.Recorder, m, pod, d.Status.Failed.Name, d.Status.LastGood.Name); err != nil {
			return fmt.Errorf("MySQL %s/%s: %w", m.Namespace, m.Name, err)
		}
	}
	return nil
}

// replaceWedgedServer deletes the server's pod when it runs an older revision and cannot become
// Ready: the StatefulSet would wait for it forever, so a broken image or my.cnf, once fixed in the
// spec, would never roll out. recheck is when a pod still in its grace should be looked at again.
func (r *Reconciler) replaceWedgedServer(ctx context.Context, m *appsv1alpha1.MySQL, sts *appsv1.StatefulSet, pods []corev1.Pod) (recheck time.Duration, err error) {
	wedged, recheck := rollout.WedgedMembers(sts, pods, time.Now())
	for _, pod := range wedged {
		if err := r.wedged.Delete(ctx, r.Client, r.Recorder, m, pod); err != nil {
			return 0, fmt.Errorf("MySQL %s/%s: %w", m.Namespace, m.Name, err)
		}
	}
	return recheck, nil
}
