package mysqlbackup

import (
	"context"
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	batchv1 "k8s.io/api/batch/v1"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/apply"
	"github.com/appkeeper/appkeeper/internal/backupjob"
	"github.com/appkeeper/appkeeper/internal/conditions"
	"github.com/appkeeper/appkeeper/internal/event"
	resources "github.com/appkeeper/appkeeper/internal/resources/mysqlbackup"
)

// Names the controller shares with the builders.
const (
	DumpContainerName    = resources.DumpContainer
	InstallContainerName = resources.InstallContainer
)

// verify restores a succeeded backup into a scratch server when asked, and records the verdict.
func (r *Reconciler) verify(ctx context.Context, b *appsv1alpha1.MySQLBackup, m *appsv1alpha1.MySQL) error {
	if !WantsVerify(b, m) || b.Status.Verification != "" {
		return nil
	}
	if m == nil || b.Status.Location == nil {
		setVerified(b, metav1.ConditionUnknown, appsv1alpha1.ReasonWaitingForMySQL,
			fmt.Sprintf("MySQL %s, whose image and credentials the scratch server uses, does not exist", b.Spec.MySQLName))
		return nil
	}
	job, pods, err := r.job(ctx, b, b.VerifyJobName())
	if err != nil {
		return err
	}
	if job == nil {
		// Recorded before the Job is created, so that a status written after a failed create still
		// says a verdict is awaited, and the backup does not read as Ready meanwhile.
		setVerified(b, metav1.ConditionUnknown, appsv1alpha1.ReasonVerificationRunning, "the Job "+b.VerifyJobName()+" restores the backup into a scratch server")
		desired := resources.VerifyJob(b, m, *b.Status.Location, r.BackupImage, ServerImage(m))
		if err := apply.Ensure(ctx, r.Client, b, b.VerifyJobName(), &batchv1.Job{}, desired, batchv1ac.ExtractJob); err != nil {
			return err
		}
		log.FromContext(ctx).Info("verification started", "job", b.VerifyJobName())
		return nil
	}
	outcome := backupjob.Observe(job, pods, resources.VerifyContainer, resources.FetchContainer)
	switch res := outcome.Result; {
	case res != nil && res.Verified != nil && *res.Verified:
		b.Status.Verification = appsv1alpha1.VerificationPassed
		b.Status.VerificationTime = ptr.To(metav1.Now())
		setVerified(b, metav1.ConditionTrue, appsv1alpha1.ReasonVerificationPassed,
			fmt.Sprintf("restored into a scratch server: %d tables match their row counts and checksums", b.Status.Tables))
	case res != nil && res.Verified != nil:
		b.Status.Verification = appsv1alpha1.VerificationFailed
		b.Status.VerificationTime = ptr.To(metav1.Now())
		setVerified(b, metav1.ConditionFalse, appsv1alpha1.ReasonVerificationFailed, mismatchMessage(res.Error, res.Mismatches))
	case outcome.Failed:
		// The check could not run (the storage or the scratch server failed): no verdict on the backup.
		setVerified(b, metav1.ConditionUnknown, appsv1alpha1.ReasonVerificationFailed, "the verification could not run: "+outcome.Message)
	}
	return nil
}

func mismatchMessage(errMessage string, mismatches []string) string {
	switch {
	case errMessage != "" && len(mismatches) == 0:
		return errMessage
	case len(mismatches) > 0:
		return fmt.Sprintf("%d tables differ from the backup's manifest, first: %s", len(mismatches), mismatches[0])
	}
	return "the restored server does not match the backup's manifest"
}

// WantsVerify tells whether b is to be verified: its own spec says, or else its MySQL's policy when
// the backup uses the MySQL's storage.
func WantsVerify(b *appsv1alpha1.MySQLBackup, m *appsv1alpha1.MySQL) bool {
	if b.Spec.Verify != nil {
		return *b.Spec.Verify
	}
	return b.Spec.Storage == nil && m != nil && m.Spec.Backup != nil && m.Spec.Backup.Verify
}

// Location is where b is written: recorded once started, else its own storage or its MySQL's.
func Location(b *appsv1alpha1.MySQLBackup, m *appsv1alpha1.MySQL) (appsv1alpha1.BackupLocation, bool) {
	if b.Status.Location != nil {
		return *b.Status.Location, true
	}
	storage, encryption := resources.StorageOf(b.Spec.Storage, b.Spec.Encryption, m)
	if storage == nil {
		return appsv1alpha1.BackupLocation{}, false
	}
	return appsv1alpha1.BackupLocation{Storage: *storage.DeepCopy(), Key: b.Key(*storage), Encryption: encryption.DeepCopy()}, true
}

// ServerImage is the image of the server m runs, whose tools take and load its dumps.
func ServerImage(m *appsv1alpha1.MySQL) string {
	if m.Status.Image != "" {
		return m.Status.Image
	}
	return m.Spec.Image
}

// DumpJobFor is the dump Job of b, reading member (empty for the client Service).
func DumpJobFor(b *appsv1alpha1.MySQLBackup, m *appsv1alpha1.MySQL, member string, loc appsv1alpha1.BackupLocation, prune []string, toolsImage string) *batchv1ac.JobApplyConfiguration {
	return resources.DumpJob(b, m, member, loc, prune, toolsImage, ServerImage(m))
}

// JobPodSelector selects the pods of b's Jobs.
func JobPodSelector(b *appsv1alpha1.MySQLBackup) map[string]string {
	return map[string]string{appsv1alpha1.LabelName: appsv1alpha1.MySQLBackupAppName, appsv1alpha1.LabelInstance: b.Name}
}

func setComplete(b *appsv1alpha1.MySQLBackup, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(&b.Status.Conditions, b.Generation, conditions.Condition{
		Type: appsv1alpha1.ConditionComplete, Status: status, Reason: reason, Message: message})
}

func setVerified(b *appsv1alpha1.MySQLBackup, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(&b.Status.Conditions, b.Generation, conditions.Condition{
		Type: appsv1alpha1.ConditionVerified, Status: status, Reason: reason, Message: message})
}

// recordTransitions emits an Event when a backup succeeds, fails, or gets a verification verdict.
func (r *Reconciler) recordTransitions(ctx context.Context, original, b *appsv1alpha1.MySQLBackup) {
	message := func(t string) string {
		if c := apimeta.FindStatusCondition(b.Status.Conditions, t); c != nil {
			return c.Message
		}
		return ""
	}
	if original.Status.Phase != b.Status.Phase {
		switch b.Status.Phase {
		case appsv1alpha1.BackupSucceeded:
			log.FromContext(ctx).Info("backup succeeded", "key", b.Status.Location.Key, "bytes", b.Status.Size)
			event.BackupSucceeded.Emit(r.Recorder, b, nil,
				"backed up MySQL %s to %s %s: %s", b.Spec.MySQLName, b.Status.Location.Storage.Describe(), b.Status.Location.Key, message(appsv1alpha1.ConditionComplete))
		case appsv1alpha1.BackupFailed:
			log.FromContext(ctx).Info("backup failed", "reason", message(appsv1alpha1.ConditionComplete))
			event.BackupFailed.Emit(r.Recorder, b, nil,
				"backup of MySQL %s failed: %s", b.Spec.MySQLName, message(appsv1alpha1.ConditionComplete))
		}
	}
	if original.Status.Verification != b.Status.Verification {
		verdict := event.VerificationPassed
		if b.Status.Verification == appsv1alpha1.VerificationFailed {
			verdict = event.VerificationFailed
		}
		verdict.Emit(r.Recorder, b, nil, "%s", message(appsv1alpha1.ConditionVerified))
	}
}
