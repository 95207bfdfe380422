package event

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// Event is one kind of Event: its type (Normal or Warning), its reason and the action it reports.
type Event struct {
	Type   string
	Reason string
	Action string
}

// Emit records the Event on regarding, with related as the object acted on (or nil) and the note
// formatted from note and args.
func (e Event) Emit(recorder events.EventRecorder, regarding, related runtime.Object, note string, args ...any) {
	recorder.Eventf(regarding, related, e.Type, e.Reason, e.Action, note, args...)
}

// The catalog. Reasons come from api/v1alpha1, where users find them.
var (
	// Created: the operator created a child (Service, StatefulSet, Deployment, Secret, Job,
	// MySQL, pods of a PodSet).
	Created = Event{Type: corev1.EventTypeNormal, Reason: appsv1alpha1.EventCreated, Action: "Create"}
	// Scaled: a new spec asks for another number of replicas, members or pods.
	Scaled = Event{Type: corev1.EventTypeNormal, Reason: appsv1alpha1.EventScaled, Action: "Scale"}
	// Upgrading: a rollout to a new image or template started.
	Upgrading = Event{Type: corev1.EventTypeNormal, Reason: appsv1alpha1.EventUpgrading, Action: "Upgrade"}
	// Upgraded: a rollout completed; everything runs the new image or template.
	Upgraded = Event{Type: corev1.EventTypeNormal, Reason: appsv1alpha1.EventUpgraded, Action: "Upgrade"}
	// Tuned: the settings a MySQL's or WordPress's tuning computes changed.
	Tuned = Event{Type: corev1.EventTypeNormal, Reason: appsv1alpha1.EventTuned, Action: "Tune"}
	// Replaced: a PodSet deleted pods to replace them, because they exited or to put the last good
	// revision back.
	Replaced = Event{Type: corev1.EventTypeNormal, Reason: appsv1alpha1.EventReplaced, Action: "Replace"}
	// ReplacedFailed: a PodSet deleted failed pods to replace them; a Warning, since something
	// made them fail.
	ReplacedFailed = Event{Type: corev1.EventTypeWarning, Reason: appsv1alpha1.EventReplaced, Action: "Replace"}
	// RolledBack: the spec's revision failed and the last good one was put back.
	RolledBack = Event{Type: corev1.EventTypeWarning, Reason: appsv1alpha1.EventRolledBack, Action: "Rollback"}
	// WedgedPodDeleted: a StatefulSet member of an older or failed revision that could not become
	// Ready was deleted, so that it is recreated from the current or restored revision.
	WedgedPodDeleted = Event{Type: corev1.EventTypeWarning, Reason: appsv1alpha1.EventWedgedPodDeleted, Action: "Delete"}
	// LostNodePodDeleted: a pod of a WebServer, a Memcached, a PodSet or a WordPress with shared
	// wp-content on a node lost for a while was deleted, so that it starts again on a node that runs.
	LostNodePodDeleted = Event{Type: corev1.EventTypeWarning, Reason: appsv1alpha1.EventLostNodePodDeleted, Action: "Delete"}
	// PrimaryChosen: a MySQL cluster's first primary was recorded and opened to writes.
	PrimaryChosen = Event{Type: corev1.EventTypeNormal, Reason: appsv1alpha1.EventPrimaryChosen, Action: "Promote"}
	// FailedOver: a replica took over from a MySQL cluster's primary that failed; a Warning,
	// since something made the primary fail.
	FailedOver = Event{Type: corev1.EventTypeWarning, Reason: appsv1alpha1.EventFailedOver, Action: "Promote"}
	// MemberRebuilt: a MySQL cluster member that held writes the primary never had is rebuilt from
	// a copy of a healthy member; a Warning, since those writes leave the cluster's history.
	MemberRebuilt = Event{Type: corev1.EventTypeWarning, Reason: appsv1alpha1.EventMemberRebuilt, Action: "Rebuild"}
	// SwitchedOver: a MySQL cluster's primary handed its role to a replica, as a person asked or
	// as a drain of its node needs.
	SwitchedOver = Event{Type: corev1.EventTypeNormal, Reason: appsv1alpha1.EventSwitchedOver, Action: "Switchover"}
	// DrainWaiting: a MySQL cluster's primary is on a cordoned node and no replica can take over:
	// the primary's budget holds the drain.
	DrainWaiting = Event{Type: corev1.EventTypeWarning, Reason: appsv1alpha1.EventDrainWaiting, Action: "Switchover"}
	// SwitchoverRefused: a switchover was asked for and not done; nothing changed.
	SwitchoverRefused = Event{Type: corev1.EventTypeWarning, Reason: appsv1alpha1.EventSwitchoverRefused, Action: "Switchover"}
	// PromotedAcceptingDataLoss: a replica took over from a failed primary, as a person asked,
	// while a replica that may hold the last acknowledged write could not be read.
	PromotedAcceptingDataLoss = Event{Type: corev1.EventTypeWarning, Reason: appsv1alpha1.EventPromotedAcceptingDataLoss, Action: "Promote"}
	// AcksLost: a MySQL cluster's primary held commits for acknowledgements lost when its
	// replicas' connections broke, and the sessions that waited were ended; a Warning, since their
	// clients were left in doubt.
	AcksLost = Event{Type: corev1.EventTypeWarning, Reason: appsv1alpha1.EventAcksLost, Action: "Release"}
	// PromoteRefused: a promotion accepting data loss was asked for while no failover was
	// blocked; nothing changed.
	PromoteRefused = Event{Type: corev1.EventTypeWarning, Reason: appsv1alpha1.EventPromoteRefused, Action: "Promote"}
	// Restored: a MySQL serves, or a WordPress's wp-content holds, the data restored from a backup.
	Restored = Event{Type: corev1.EventTypeNormal, Reason: appsv1alpha1.ReasonRestored, Action: "Restore"}
	// RestoreStuck: a WordPress's restore cannot go on until a person fixes its source.
	RestoreStuck = Event{Type: corev1.EventTypeWarning, Reason: appsv1alpha1.ReasonRestoreSourceNotReady, Action: "Restore"}
	// BackupSucceeded: a MySQLBackup or WordPressBackup stored its artifact.
	BackupSucceeded = Event{Type: corev1.EventTypeNormal, Reason: appsv1alpha1.ReasonBackupSucceeded, Action: "Backup"}
	// BackupFailed: a MySQLBackup or WordPressBackup failed.
	BackupFailed = Event{Type: corev1.EventTypeWarning, Reason: appsv1alpha1.ReasonBackupFailed, Action: "Backup"}
	// BackupPruned: a backup and its artifact were deleted, as the MySQL's retention says.
	BackupPruned = Event{Type: corev1.EventTypeNormal, Reason: appsv1alpha1.ReasonBackupPruned, Action: "Prune"}
	// MissedSchedule: a MySQL's backup schedule passed times without a backup; only the latest
	// was started.
	MissedSchedule = Event{Type: corev1.EventTypeWarning, Reason: appsv1alpha1.EventMissedSchedule, Action: "Backup"}
	// VerificationPassed: a restore of a MySQLBackup matched the backup.
	VerificationPassed = Event{Type: corev1.EventTypeNormal, Reason: appsv1alpha1.ReasonVerificationPassed, Action: "Verify"}
	// VerificationFailed: a restore of a MySQLBackup did not match the backup.
	VerificationFailed = Event{Type: corev1.EventTypeWarning, Reason: appsv1alpha1.ReasonVerificationFailed, Action: "Verify"}
)

// Degraded is the Warning recorded when an instance turns Degraded: its reason is the Degraded
// condition's, so that the Event and the condition name the same cause.
func Degraded(reason string) Event {
	return Event{Type: corev1.EventTypeWarning, Reason: reason, Action: "Reconcile"}
}
