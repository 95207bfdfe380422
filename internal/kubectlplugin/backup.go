package kubectlplugin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func newBackupCommand(env *environment) *cobra.Command {
	var flags waitFlags
	var out output
	var name string
	cmd := &cobra.Command{
		Use:   "backup <mysql|wordpress>/<name>",
		Short: "Back a MySQL or a WordPress up now, into the storage of its backup policy",
		Long: `backup creates a MySQLBackup of a MySQL, or a WordPressBackup (database and wp-content) of a
WordPress, that leaves storage and encryption unset: the operator takes them from the MySQL's
spec.backup (the WordPress's MySQL), as a scheduled backup would, and verification follows that
policy's verify. A MySQL without spec.backup has no storage to back up to: the command says so
and creates nothing.

It prints the backup's name, then by default follows its phase (Pending, Running, Succeeded or
Failed), printing each change, until the backup is Ready: stored and, when its policy asks for
verification, verified. It exits with status 1 when the backup or its verification failed. A
backup is worth something only once it is Ready, hence --wait by default; --wait=false returns
once it is created.`,
		Example: `  kubectl appkeeper backup mysql/db
  kubectl appkeeper backup wordpress/blog --name before-upgrade
  kubectl appkeeper backup my/db --wait=false -o yaml`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			r, err := parseRefOf(args[0], "mysql", "wordpress")
			if err != nil {
				return err
			}
			return env.backup(cmd.Context(), r, name, flags, out)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "name of the backup; default <name>-<UTC time as yyyymmddhhmmss>")
	flags.add(cmd, "the backup until it succeeds or fails", time.Hour)
	out.addFlag(cmd, "the backup created")
	return cmd
}

func (e *environment) backup(ctx context.Context, r ref, name string, flags waitFlags, out output) error {
	c, ns, err := e.session()
	if err != nil {
		return err
	}
	backup, err := newBackup(ctx, c, ns, r, name)
	if err != nil {
		return err
	}
	if err := c.Create(ctx, backup); err != nil {
		return apiError(err, fmt.Sprintf("create %s for %s", strings.ToLower(kindOf(backup)), r))
	}
	label := strings.ToLower(kindOf(backup)) + "/" + backup.GetName()
	if out.text() {
		fmt.Fprintf(e.streams.Out, "%s created\n", label)
	} else if err := out.print(e.streams.Out, backup); err != nil {
		return err
	}
	if !flags.wait {
		return nil
	}
	list := client.ObjectList(&appsv1alpha1.MySQLBackupList{})
	if r.kind.name == "wordpress" {
		list = &appsv1alpha1.WordPressBackupList{}
	}
	err = follow(ctx, c, list, client.ObjectKeyFromObject(backup), flags.timeout, e.streams.Out, func(obj client.Object) (string, bool, error) {
		return backupStep(label, obj)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	return nil
}

// newBackup is the backup of the instance r names, checked against what the operator needs.
func newBackup(ctx context.Context, c client.Client, ns string, r ref, name string) (client.Object, error) {
	database := r.name
	var wp *appsv1alpha1.WordPress
	if r.kind.name == "wordpress" {
		wp = &appsv1alpha1.WordPress{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: r.name}, wp); err != nil {
			return nil, apiError(err, fmt.Sprintf("%s in namespace %s", r, ns))
		}
		database = wp.MySQLName()
	}
	m := &appsv1alpha1.MySQL{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: database}, m); err != nil {
		return nil, apiError(err, fmt.Sprintf("mysql/%s in namespace %s", database, ns))
	}
	if m.Spec.Backup == nil {
		return nil, fmt.Errorf("mysql/%s has no spec.backup, so no storage to back up to: set spec.backup (storage and schedule) on it, or create a %s with spec.storage yourself",
			m.Name, map[bool]string{true: "WordPressBackup", false: "MySQLBackup"}[wp != nil])
	}
	if wp == nil {
		limit := appsv1alpha1.MaxMySQLBackupNameLength
		return &appsv1alpha1.MySQLBackup{
			ObjectMeta: backupMeta(ns, r.name, name, limit, map[string]string{appsv1alpha1.LabelMySQL: m.Name}),
			Spec:       appsv1alpha1.MySQLBackupSpec{MySQLName: m.Name},
		}, nil
	}
	return &appsv1alpha1.WordPressBackup{
		ObjectMeta: backupMeta(ns, r.name, name, appsv1alpha1.MaxWordPressBackupNameLength, nil),
		Spec:       appsv1alpha1.WordPressBackupSpec{WordPressName: wp.Name, Verify: m.Spec.Backup.Verify},
	}, nil
}

// backupMeta names a backup as asked, or <instance>-<UTC time>, or lets the API server complete a
// shortened name when that one would be too long.
func backupMeta(ns, instance, name string, limit int, labels map[string]string) metav1.ObjectMeta {
	meta := metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}
	if name != "" {
		return meta
	}
	meta.Name = instance + "-" + time.Now().UTC().Format("20060102150405")
	if len(meta.Name) > limit {
		const generatedSuffix = 5
		meta.Name = ""
		meta.GenerateName = strings.TrimRight(instance[:min(len(instance), limit-generatedSuffix-1)], "-") + "-"
	}
	return meta
}

// backupStep is a backup's phase in words. It is over once the backup is Ready, which waits for
// the verification its policy asks for, or Stalled; for an operator that reports neither, once
// the phase is Succeeded or Failed.
func backupStep(label string, obj client.Object) (string, bool, error) {
	var phase appsv1alpha1.BackupPhase
	var conditions []metav1.Condition
	var where string
	switch b := obj.(type) {
	case *appsv1alpha1.MySQLBackup:
		phase, conditions = b.Status.Phase, b.Status.Conditions
		if b.Status.Location != nil {
			where = b.Status.Location.Storage.Describe() + "/" + b.Status.Location.Key
		}
	case *appsv1alpha1.WordPressBackup:
		phase, conditions = b.Status.Phase, b.Status.Conditions
		if b.Status.Content != nil {
			where = b.Status.Content.Location.Storage.Describe() + "/" + b.Status.Content.Location.Key
		}
	}
	health := objectHealth(obj)
	line := label + ": " + health
	failed := phase == appsv1alpha1.BackupFailed
	succeeded := phase == appsv1alpha1.BackupSucceeded
	why := strings.TrimPrefix(health, "Failed: ")
	if ready := meta.FindStatusCondition(conditions, appsv1alpha1.ConditionReady); ready != nil {
		stalled := meta.FindStatusCondition(conditions, appsv1alpha1.ConditionStalled)
		failed = stalled != nil && stalled.Status == metav1.ConditionTrue
		succeeded = ready.Status == metav1.ConditionTrue
		if failed {
			why = reasonAndMessage(stalled)
		}
	}
	switch {
	case failed:
		return line, true, fmt.Errorf("the backup failed: %s", why)
	case succeeded:
		if where != "" {
			line += ", at " + where
		}
		return line, true, nil
	}
	return line, false, nil
}
