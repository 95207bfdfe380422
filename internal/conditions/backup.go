package conditions

import (
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// SetBackupHealth records the Ready and Stalled conditions of a backup (a MySQLBackup or a
// WordPressBackup) from its Complete condition and, when verification was asked for, its Verified
// condition, so that kstatus reads a backup under way as InProgress, a good one as Current and a
// failed one as Failed.
//
// A backup whose verification was asked for is Ready only once it passed: whoever waits for it
// (kubectl wait, a GitOps tool, a script before a migration) asked for a backup known to restore.
// A verification that found a difference, or whose Job could not run and will not be retried,
// stalls the backup.
func SetBackupHealth(conditions *[]metav1.Condition, generation int64) {
	complete := conditionOf(*conditions, appsv1alpha1.ConditionComplete)
	failed := Condition{Type: appsv1alpha1.ConditionDegraded, Reason: appsv1alpha1.ReasonAsExpected, Message: "nothing has failed"}
	underWay := Condition{Type: appsv1alpha1.ConditionProgressing, Reason: complete.Reason, Message: complete.Message}
	done := complete
	switch verified := apimeta.FindStatusCondition(*conditions, appsv1alpha1.ConditionVerified); {
	case complete.Status == metav1.ConditionFalse:
		failed = asTrue(complete)
	case complete.Status != metav1.ConditionTrue:
		underWay = asTrue(complete)
	case verified != nil && VerificationFailed(verified):
		failed = asTrue(conditionOf(*conditions, appsv1alpha1.ConditionVerified))
	case verified != nil && verified.Status == metav1.ConditionUnknown:
		underWay = asTrue(conditionOf(*conditions, appsv1alpha1.ConditionVerified))
	case verified != nil:
		done.Message += "; " + verified.Message
	}
	SetSummaryConditions(conditions, generation, done, underWay, failed)
}

// VerificationPending tells whether a backup waits for the verdict of a verification it asked for.
func VerificationPending(conditions []metav1.Condition) bool {
	v := apimeta.FindStatusCondition(conditions, appsv1alpha1.ConditionVerified)
	return v != nil && v.Status == metav1.ConditionUnknown && !VerificationFailed(v)
}

// VerificationFailed tells whether verified, a Verified condition, gives up on the backup: a table
// differs, or the check could not run (its Job is kept and no other starts).
func VerificationFailed(verified *metav1.Condition) bool {
	return verified.Status == metav1.ConditionFalse || verified.Reason == appsv1alpha1.ReasonVerificationFailed
}

// conditionOf is the condition of type t, Unknown when the operator has not recorded it yet.
func conditionOf(conditions []metav1.Condition, t string) Condition {
	c := apimeta.FindStatusCondition(conditions, t)
	if c == nil {
		return Condition{Type: t, Status: metav1.ConditionUnknown, Reason: string(appsv1alpha1.BackupPending),
			Message: "the operator has not started the backup yet"}
	}
	return Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message}
}

// asTrue is c as the True condition that stands in the way of Ready, with c's reason and message.
func asTrue(c Condition) Condition {
	c.Status = metav1.ConditionTrue
	return c
}
