package wordpress

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	resources "github.com/appkeeper/appkeeper/internal/resources/wordpress"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

// revision is the revision of the pods the spec as written asks for: the hash of the pod template
// built from the WordPress's own fields, with a database that stands for any. Which database the
// pods connect to is no part of a revision: a rollback leaves the database as the spec says, so
// the pods it rebuilds would connect to the same one, and a change of the database alone is
// nothing to roll back.
func revision(wp *appsv1alpha1.WordPress) rollout.Revision {
	return rollout.Revision{
		Name:  rollout.Hash(resources.Deployment(wp, &appsv1alpha1.MySQL{}).Spec.Template),
		Image: wp.Spec.Image,
		Spec:  rollout.Snapshot(wp.Spec),
	}
}

// podFields copies into spec what makes a WordPress's pods from the spec of a good revision. The
// database (its own MySQL, which rolls back on its own terms, or the one it references), the
// wp-content volume, the Service, the restore and the upgrade policy stay as the spec says.
func podFields(spec, good *appsv1alpha1.WordPressSpec) {
	spec.Image, spec.Resources, spec.Tuning = good.Image, good.Resources, good.Tuning
}

// decide is the rollout decision of a pass that has seen the database. While the database cannot
// be used, the site's pods cannot turn ready, whatever their revision: the progress deadline of
// a rollout under way starts again at every such pass, so that a database that is away (or
// rolling back itself) does not make the site roll back. Pods started while it was away are then
// judged by the deadline alone; a pod started since that crash-loops fails the rollout at once.
func decide(wp *appsv1alpha1.WordPress, desired rollout.Revision, seen *observed, now time.Time) rollout.Decision {
	st := *wp.Status.Rollout.DeepCopy()
	if seen.dbProblem != "" && st.UpdateRevision == desired.Name && st.Failed == nil && st.LastGood != nil && st.LastGood.Name != desired.Name {
		st.UpdateTime = &metav1.Time{Time: now}
	}
	return rollout.Decide(rollout.Input{Policy: wp.Spec.Upgrade, Status: st, Desired: desired, Pods: seen.pods, Now: now})
}

// rolloutComplete tells whether the Deployment runs the pass's target on every replica, at least
// one of them, all available: evidence that the target's revision is good.
func rolloutComplete(dep *appsv1.Deployment, target *appsv1alpha1.WordPress) bool {
	want := conditions.DeploymentWant{Replicas: target.DesiredReplicas(), Image: target.Spec.Image, Container: resources.ContainerName}
	return want.Replicas > 0 && conditions.DeploymentComplete(dep, want)
}
