package wordpress

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/conditions"
	resources "github.com/appkeeper/appkeeper/internal/resources/wordpress"
	"github.com/appkeeper/appkeeper/internal/rollout"
)

// databaseProblem says why the site cannot use db yet, with the DatabaseReady reason, or returns
// two empty strings when db is Available for its current spec.
func databaseProblem(db *appsv1alpha1.MySQL) (reason, message string) {
	if db.Spec.Database == "" || db.Spec.User == "" {
		return appsv1alpha1.ReasonDatabaseMisconfigured,
			fmt.Sprintf("spec.database.mysqlRef: MySQL %s sets no spec.database or no spec.user for the site to use", db.Name)
	}
	c := meta.FindStatusCondition(db.Status.Conditions, appsv1alpha1.ConditionAvailable)
	switch {
	case c == nil || c.ObservedGeneration != db.Generation:
		return appsv1alpha1.ReasonWaitingForDatabase, fmt.Sprintf("MySQL %s has not reported on its current spec yet", db.Name)
	case c.Status != metav1.ConditionTrue:
		return appsv1alpha1.ReasonWaitingForDatabase, fmt.Sprintf("MySQL %s is not Available: %s", db.Name, c.Message)
	}
	return "", ""
}

// computeStatus derives the status of wp, whose spec is the one the pass applied (the last good
// revision's pod fields while the spec's revision is rolled back), from the pass's rollout
// decision, from what the pass observed and from its error, if any.
func computeStatus(wp *appsv1alpha1.WordPress, d rollout.Decision, seen observed, reconcileErr error) appsv1alpha1.WordPressStatus {
	status := *wp.Status.DeepCopy()
	status.Rollout = d.Status
	status.ObservedGeneration = wp.Generation
	status.URL = wp.URL()
	status.Selector = labels.SelectorFromSet(wp.SelectorLabels()).String()
	status.Tuning = resources.Tuning(wp)
	status.Replicas, status.ReadyReplicas = 0, 0
	if seen.dep != nil {
		status.Replicas = seen.dep.Status.Replicas
		status.ReadyReplicas = seen.dep.Status.ReadyReplicas
	}
	want := conditions.DeploymentWant{Replicas: wp.DesiredReplicas(), Image: wp.Spec.Image, Container: resources.ContainerName}
	complete := conditions.DeploymentComplete(seen.dep, want)
	if complete {
		status.Image = wp.Spec.Image
	}
	dbReady := conditions.Condition{Type: appsv1alpha1.ConditionDatabaseReady, Status: metav1.ConditionTrue, Reason: appsv1alpha1.ReasonAsExpected}
	if seen.dbProblem != "" {
		dbReady = conditions.Condition{Type: appsv1alpha1.ConditionDatabaseReady, Reason: seen.dbReason, Message: seen.dbProblem}
	} else if seen.db != nil {
		dbReady.Message = fmt.Sprintf("MySQL %s is Available at %s", seen.db.Name, seen.db.Status.Endpoint)
	}
	available := conditions.DeploymentAvailable(seen.dep, want, conditions.StartingPods(wp.Status.Conditions, seen.pods, wp.DesiredReplicas()), reconcileErr)
	progressing := d.Progressing(conditions.DeploymentProgressing(seen.dep, want, complete, reconcileErr))
	degraded := d.Degraded(conditions.DeploymentDegraded(seen.dep, seen.pods, seen.lost, seen.podsErr, reconcileErr), reconcileErr)
	if seen.dep == nil && seen.dbProblem != "" {
		available.Reason, available.Message = seen.dbReason, "the site starts once its database is ready: "+seen.dbProblem
		available.Status = metav1.ConditionFalse
		progressing.Status, progressing.Reason, progressing.Message = metav1.ConditionTrue, seen.dbReason, available.Message
	}
	if seen.dbReason == appsv1alpha1.ReasonDatabaseMisconfigured && reconcileErr == nil && !degraded.IsTrue() {
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, seen.dbReason, seen.dbProblem
	}
	restoreConditions(seen, reconcileErr, &available, &progressing, &degraded)
	conditions.SetHealthConditions(&status.Conditions, wp.Generation, available, progressing, degraded, dbReady)
	return status
}
