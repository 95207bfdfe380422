package argocd_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/appkeeper/appkeeper/config/argocd"
)

// decode reads an object as Argo CD holds it: its JSON form, integers as int64.
func decode(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return obj
}

const webServer = `
apiVersion: apps.appkeeper.dev/v1alpha1
kind: WebServer
metadata: {name: web, namespace: shop, generation: 2}
spec: {replicas: 2, image: "nginx:1.27"}
`

// condition is one status condition at generation 2, the object's.
func condition(kind, status, reason, message string) string {
	return `{type: ` + kind + `, status: "` + status + `", reason: ` + reason + `, message: "` + message +
		`", observedGeneration: 2, lastTransitionTime: "2026-11-24T06:00:00Z"}`
}

func status(observed string, conditions ...string) string {
	return "status:\n  observedGeneration: " + observed + "\n  conditions: [" + strings.Join(conditions, ", ") + "]\n"
}

var (
	readyTrue        = condition("Ready", "True", "AsExpected", "2 of 2 replicas available")
	degradedFalse    = condition("Degraded", "False", "AsExpected", "")
	stalledFalse     = condition("Stalled", "False", "AsExpected", "")
	progressingFalse = condition("Progressing", "False", "RolloutComplete", "")
)

func TestHealthOfAnApplication(t *testing.T) {
	rolledBack := "revision 5d8f (nginx:broken) failed: ImagePullBackOff; rolled back to revision 7c4b (nginx:1.27)"
	for name, tc := range map[string]struct {
		manifest, status, message string
	}{
		"no status yet": {webServer, argocd.Progressing, "Waiting for the operator to report on the resource"},
		"an empty status": {webServer + "status: {}\n", argocd.Progressing,
			"Waiting for the operator to report on the resource"},
		"created, not yet observed": {webServer + status("0"), argocd.Progressing,
			"Waiting for the operator to report on the resource"},
		"spec changed, the operator reported on the previous one": {webServer + status("1", readyTrue), argocd.Progressing,
			"Waiting for the operator to observe generation 2 (it reported on generation 1)"},
		"ready": {webServer + status("2", readyTrue, degradedFalse, stalledFalse, progressingFalse), argocd.Healthy,
			"2 of 2 replicas available"},
		"scaled to zero": {webServer + status("2", condition("Ready", "True", "ScaledToZero", "spec.replicas is 0: no pod serves")),
			argocd.Healthy, "spec.replicas is 0: no pod serves"},
		"ready without a message": {webServer + status("2", condition("Ready", "True", "AsExpected", "")), argocd.Healthy, "AsExpected"},
		"rolling out": {webServer + status("2", condition("Ready", "False", "RollingOut", "1 of 2 pods updated"),
			condition("Progressing", "True", "RollingOut", "1 of 2 pods updated")), argocd.Progressing,
			"RollingOut: 1 of 2 pods updated"},
		"rolled back": {webServer + status("2", condition("Ready", "False", "RolledBack", rolledBack),
			condition("Degraded", "True", "RolledBack", rolledBack), condition("Stalled", "True", "RolledBack", rolledBack)),
			argocd.Degraded, "RolledBack: " + rolledBack},
		"stalled alone says degraded": {webServer + status("2", condition("Stalled", "True", "CrashLoopBackOff", "pod web-1: container nginx: back-off")),
			argocd.Degraded, "CrashLoopBackOff: pod web-1: container nginx: back-off"},
		"a failed read, which the operator retries": {webServer + status("2", condition("Ready", "Unknown", "ReadFailed", "list pods: timeout")),
			argocd.Progressing, "ReadFailed: list pods: timeout"},
		"a condition of an older generation is not evidence": {webServer + status("2",
			strings.Replace(condition("Degraded", "True", "ImagePullBackOff", "old image"), "observedGeneration: 2", "observedGeneration: 1", 1),
			condition("Ready", "False", "RollingOut", "new image")), argocd.Progressing, "RollingOut: new image"},
		"no Ready condition": {webServer + status("2", degradedFalse), argocd.Progressing,
			"Waiting for the operator to report the Ready condition"},
		"being deleted": {strings.Replace(webServer, "generation: 2", `generation: 2, deletionTimestamp: "2026-11-24T06:00:00Z"`, 1) +
			status("2", readyTrue), argocd.Progressing, "Pending deletion"},
	} {
		t.Run(name, func(t *testing.T) { requireHealth(t, decode(t, tc.manifest), tc.status, tc.message) })
	}
}

const mySQL = `
apiVersion: apps.appkeeper.dev/v1alpha1
kind: MySQL
metadata: {name: db, namespace: shop, generation: 2}
spec:
  image: "mysql:8.4.6"
  backup: {schedule: "0 2 * * *", suspend: SUSPEND, storage: {volume: {claimName: backups}}}
`

// A database serves whether or not its backups run: what they lack is told, not judged.
func TestHealthOfADatabaseTellsOfItsBackups(t *testing.T) {
	ready := condition("Ready", "True", "AsExpected", "the server is ready")
	for name, tc := range map[string]struct {
		manifest, message string
	}{
		"backups on schedule": {strings.Replace(mySQL, "SUSPEND", "false", 1) + status("2", ready), "the server is ready"},
		"backups suspended": {strings.Replace(mySQL, "SUSPEND", "true", 1) + status("2", ready),
			"the server is ready; scheduled backups are suspended (spec.backup.suspend)"},
		"the last backup failed": {strings.Replace(mySQL, "SUSPEND", "false", 1) + status("2", ready) +
			"  backup: {lastSuccessfulBackup: db-1, lastFailedBackup: db-2}\n", "the server is ready; the last backup, db-2, failed"},
	} {
		t.Run(name, func(t *testing.T) { requireHealth(t, decode(t, tc.manifest), argocd.Healthy, tc.message) })
	}
}

const mySQLBackup = `
apiVersion: apps.appkeeper.dev/v1alpha1
kind: MySQLBackup
metadata: {name: db-1, namespace: shop, generation: 1}
spec: {mysqlName: db}
`

// backupStatus is a backup's status in phase, with conditions at generation 1.
func backupStatus(phase string, conditions ...string) string {
	for i, c := range conditions {
		conditions[i] = strings.Replace(c, "observedGeneration: 2", "observedGeneration: 1", 1)
	}
	return status("1", conditions...) + "  phase: " + phase + "\n"
}

func TestHealthOfABackup(t *testing.T) {
	complete := condition("Complete", "True", "BackupSucceeded", "3 tables of 1 databases, 1234 bytes")
	for name, tc := range map[string]struct {
		manifest, status, message string
	}{
		"waiting for its MySQL": {mySQLBackup + backupStatus("Pending", condition("Complete", "Unknown", "WaitingForMySQL", "MySQL db does not exist")),
			argocd.Progressing, "WaitingForMySQL: MySQL db does not exist"},
		"running": {mySQLBackup + backupStatus("Running", condition("Complete", "Unknown", "BackupRunning", "the backup Job db-1-backup runs")),
			argocd.Progressing, "BackupRunning: the backup Job db-1-backup runs"},
		"a phase and no condition": {mySQLBackup + backupStatus("Running"), argocd.Progressing, "The backup is Running"},
		"succeeded":                {mySQLBackup + backupStatus("Succeeded", complete), argocd.Healthy, "BackupSucceeded: 3 tables of 1 databases, 1234 bytes"},
		"being verified": {mySQLBackup + backupStatus("Succeeded", complete,
			condition("Verified", "Unknown", "VerificationRunning", "the Job db-1-verify restores the backup")),
			argocd.Progressing, "VerificationRunning: the Job db-1-verify restores the backup"},
		"verified": {mySQLBackup + backupStatus("Succeeded", complete, condition("Verified", "True", "VerificationPassed", "3 tables match")),
			argocd.Healthy, "BackupSucceeded: 3 tables of 1 databases, 1234 bytes"},
		"failed verification": {mySQLBackup + backupStatus("Succeeded", complete,
			condition("Verified", "False", "VerificationFailed", "shop.orders: rows 10 != 9")),
			argocd.Degraded, "VerificationFailed: shop.orders: rows 10 != 9"},
		"verification that could not run": {mySQLBackup + backupStatus("Succeeded", complete,
			condition("Verified", "Unknown", "VerificationFailed", "the verification could not run: pod evicted")),
			argocd.Degraded, "VerificationFailed: the verification could not run: pod evicted"},
		"failed": {mySQLBackup + backupStatus("Failed", condition("Complete", "False", "BackupFailed", "bucket backups does not exist")),
			argocd.Degraded, "BackupFailed: bucket backups does not exist"},
		"failed, no condition": {mySQLBackup + backupStatus("Failed"), argocd.Degraded, "The backup failed"},
		"not yet observed":     {mySQLBackup + status("0"), argocd.Progressing, "Waiting for the operator to report on the resource"},
		// The summary conditions every application reports, once a backup reports them too.
		"ready": {mySQLBackup + backupStatus("Succeeded", complete, condition("Ready", "True", "BackupSucceeded", "stored")),
			argocd.Healthy, "stored"},
		"not ready": {mySQLBackup + backupStatus("Running", condition("Ready", "False", "BackupRunning", "the Job runs")),
			argocd.Progressing, "BackupRunning: the Job runs"},
		"stalled": {mySQLBackup + backupStatus("Failed", condition("Stalled", "True", "BackupFailed", "no space left")),
			argocd.Degraded, "BackupFailed: no space left"},
	} {
		t.Run(name, func(t *testing.T) { requireHealth(t, decode(t, tc.manifest), tc.status, tc.message) })
	}
}

func requireHealth(t *testing.T, obj *unstructured.Unstructured, status, message string) {
	t.Helper()
	got, err := argocd.Evaluate(obj, argocd.Script)
	if err != nil {
		t.Fatal(err)
	}
	if want := (argocd.Health{Status: status, Message: message}); got != want {
		t.Errorf("health = %+v, want %+v", got, want)
	}
}

// Argo CD gives argocd-cm scripts no string library, reads a status it does not know as Unknown, and
// fails a script that returns no table.
func TestEvaluateRunsScriptsAsArgoCDDoes(t *testing.T) {
	obj := decode(t, webServer)
	if _, err := argocd.Evaluate(obj, `return {status = string.upper("healthy")}`); err == nil {
		t.Error("a script that calls the string library ran")
	}
	got, err := argocd.Evaluate(obj, `return {status = "Fine"}`)
	if err != nil || got.Status != argocd.Unknown {
		t.Errorf("health = %+v, %v; want Unknown", got, err)
	}
	if _, err := argocd.Evaluate(obj, `return "Healthy"`); err == nil {
		t.Error("a script that returns no table passed")
	}
	// Integers reach the script as numbers, and print without a decimal point.
	got, err = argocd.Evaluate(obj, `return {status = "Healthy", message = obj.metadata.name .. " " .. (obj.metadata.generation + 1)}`)
	if want := (argocd.Health{Status: argocd.Healthy, Message: "web 3"}); err != nil || got != want {
		t.Errorf("health = %+v, %v; want %+v", got, err, want)
	}
}
