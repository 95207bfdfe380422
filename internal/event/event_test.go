package event

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestCatalog(t *testing.T) {
	catalog := map[string]Event{
		"Created":            Created,
		"Scaled":             Scaled,
		"Upgrading":          Upgrading,
		"Upgraded":           Upgraded,
		"Replaced":           Replaced,
		"ReplacedFailed":     ReplacedFailed,
		"RolledBack":         RolledBack,
		"WedgedPodDeleted":   WedgedPodDeleted,
		"Restored":           Restored,
		"RestoreStuck":       RestoreStuck,
		"BackupSucceeded":    BackupSucceeded,
		"BackupFailed":       BackupFailed,
		"BackupPruned":       BackupPruned,
		"MissedSchedule":     MissedSchedule,
		"VerificationPassed": VerificationPassed,
		"VerificationFailed": VerificationFailed,
		"Degraded":           Degraded("ReconcileFailed"),
	}
	seen := map[[2]string]string{}
	for name, e := range catalog {
		if e.Type != corev1.EventTypeNormal && e.Type != corev1.EventTypeWarning {
			t.Errorf("%s: type %q is neither Normal nor Warning", name, e.Type)
		}
		if e.Reason == "" || e.Action == "" {
			t.Errorf("%s: reason %q and action %q must both be set", name, e.Reason, e.Action)
		}
		// One reason and type, one meaning: a user filtering on them must not mix two kinds.
		key := [2]string{e.Reason, e.Type}
		if other, ok := seen[key]; ok {
			t.Errorf("%s and %s are both %s %s", name, other, e.Type, e.Reason)
		}
		seen[key] = name
	}
}

func TestDegradedKeepsTheConditionsReason(t *testing.T) {
	got := Degraded("CrashLoopBackOff")
	want := Event{Type: corev1.EventTypeWarning, Reason: "CrashLoopBackOff", Action: "Reconcile"}
	if got != want {
		t.Errorf("Degraded = %+v, want %+v", got, want)
	}
}
