package kubectlplugin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// restoreOptions are the flags of restore.
type restoreOptions struct {
	from, to       string
	time, gtid     string
	database, user string
	wait           waitFlags
	out            output
}

func newRestoreCommand(env *environment) *cobra.Command {
	var o restoreOptions
	cmd := &cobra.Command{
		Use:   "restore <mysql|wordpress>/<name> --from <backup> [--to <new name>] [--time <RFC 3339> | --gtid <GTID>]",
		Short: "Create a new MySQL or WordPress that starts from a backup",
		Long: `restore never touches a running instance nor its data: appkeeper loads a backup only into a
MySQL (or a WordPress's own MySQL and its wp-content) when it is first created. So restore creates
a NEW instance whose spec.restore names the backup (--from: a MySQLBackup for a MySQL, a
WordPressBackup for a WordPress), and follows it until it is Ready.

- When <name> exists, it is the model and --to names the new instance: the copy gets its image,
  storage, database and user, config, resources, scheduling and upgrade policy; not its backup
  schedule, its credentials (the copy generates passwords of its own) nor its deletion policy
  (the copy keeps its data when deleted). Point the application at the copy once it is Ready.
- When <name> does not exist (an instance that was lost), it is created under that name with
  the kind's defaults, --database and --user for a MySQL: restore a lost WordPress under its
  former name, so that the URL its database records is the site's again.

With --time or --gtid, a MySQL whose backups keep its binary log (spec.backup.pointInTimeRecovery)
is restored to that instant or that transaction: the backup, then the archived transactions that
follow it. --from may then be left out: the newest backup of <name> taken before the target is
used. A time outside the window the MySQL's status shows is refused.

It refuses, creating nothing, when the new name is taken, when the backup does not exist or
failed, or when a volume claim of the new name is left by an earlier instance (a restore does not
replace data that is there).`,
		Example: `  kubectl appkeeper restore mysql/db --from db-20261124020000 --to db-copy
  kubectl appkeeper restore wordpress/blog --from launch          # blog was deleted: bring it back
  kubectl appkeeper restore mysql/shop --from shop-before --database shop --user shop
  kubectl appkeeper restore mysql/db --to db-before-the-drop --time 2026-11-27T10:41:59Z`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.out.check(); err != nil {
				return err
			}
			r, err := parseRefOf(args[0], "mysql", "wordpress")
			if err != nil {
				return err
			}
			target, err := o.pointInTime()
			if err != nil {
				return err
			}
			if target != nil && r.kind.name != "mysql" {
				return usagef("--time and --gtid restore a MySQL: a WordPress restores to its backups")
			}
			if o.from == "" && target == nil {
				return usagef("--from is required: the name of the %s to restore", backupKind(r))
			}
			return env.restore(cmd.Context(), r, o)
		},
	}
	cmd.Flags().StringVar(&o.from, "from", "", "the MySQLBackup (for a MySQL) or WordPressBackup (for a WordPress) to restore")
	cmd.Flags().StringVar(&o.to, "to", "", "name of the new instance; required when <name> exists")
	cmd.Flags().StringVar(&o.database, "database", "", "spec.database of a MySQL created without a model")
	cmd.Flags().StringVar(&o.user, "user", "", "spec.user of a MySQL created without a model")
	cmd.Flags().StringVar(&o.time, "time", "", "restore a MySQL as it was at this instant (RFC 3339, to the second)")
	cmd.Flags().StringVar(&o.gtid, "gtid", "", "restore a MySQL up to this transaction (domain-server-sequence)")
	o.wait.add(cmd, "the new instance until it is Ready", 30*time.Minute)
	o.out.addFlag(cmd, "the instance created")
	return cmd
}

func backupKind(r ref) string {
	if r.kind.name == "wordpress" {
		return "WordPressBackup"
	}
	return "MySQLBackup"
}

func (e *environment) restore(ctx context.Context, r ref, o restoreOptions) error {
	c, ns, err := e.session()
	if err != nil {
		return err
	}
	model := r.kind.newOne()
	switch err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: r.name}, model); {
	case apierrors.IsNotFound(err):
		model = nil
	case err != nil:
		return apiError(err, fmt.Sprintf("%s in namespace %s", r, ns))
	}
	target, err := restoreTarget(r, model, o)
	if err != nil {
		return err
	}
	point, err := o.pointInTime()
	if err != nil {
		return err
	}
	if point != nil {
		if err := checkWindow(model, point); err != nil {
			return err
		}
		if o.from == "" {
			var policy *appsv1alpha1.MySQLBackupPolicy
			if m, ok := model.(*appsv1alpha1.MySQL); ok {
				policy = m.Spec.Backup
			}
			if o.from, err = chooseBase(ctx, c, ns, r.name, policy, point); err != nil {
				return err
			}
		}
	}
	note, err := checkRestore(ctx, c, ns, r, target, o.from)
	if err != nil {
		return err
	}
	created, err := newRestored(ctx, c, ns, r, model, target, o)
	if err != nil {
		return err
	}
	if err := c.Create(ctx, created); err != nil {
		return apiError(err, fmt.Sprintf("create %s/%s", r.kind.name, target))
	}
	label := r.kind.name + "/" + target
	if o.out.text() {
		fmt.Fprintf(e.streams.Out, "%s created from %s/%s%s%s\n", label, strings.ToLower(backupKind(r)), o.from, pointNote(point), note)
	} else if err := o.out.print(e.streams.Out, created); err != nil {
		return err
	}
	if !o.wait.wait {
		return nil
	}
	err = follow(ctx, c, r.kind.newList(), client.ObjectKeyFromObject(created), o.wait.timeout, e.streams.Out, func(obj client.Object) (string, bool, error) {
		return restoreStep(label, r.kind.instances(singleList(r.kind.newList(), obj))[0])
	})
	if err != nil {
		return fmt.Errorf("%s: %w (the instance stays as it is: delete it to try again)", label, err)
	}
	return nil
}

// restoreTarget is the name of the new instance.
func restoreTarget(r ref, model client.Object, o restoreOptions) (string, error) {
	switch {
	case model != nil && o.to == "":
		return "", usagef("%s exists and a restore never replaces an instance: name the new one with --to", r)
	case model != nil && o.to == r.name:
		return "", usagef("--to %s names the instance itself: a restore creates a new instance", o.to)
	case model != nil && (o.database != "" || o.user != ""):
		return "", usagef("--database and --user are for a MySQL created without a model: the new instance takes those of %s", r)
	case r.kind.name == "wordpress" && (o.database != "" || o.user != ""):
		return "", usagef("--database and --user are for a MySQL: a WordPress's own MySQL takes its defaults")
	case o.to != "":
		return o.to, nil
	}
	return r.name, nil
}

// checkRestore refuses a restore that could not succeed or would meet data already there, and
// notes a backup that has not succeeded yet.
func checkRestore(ctx context.Context, c client.Client, ns string, r ref, target, from string) (string, error) {
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: target}, r.kind.newOne()); err == nil {
		return "", fmt.Errorf("%s/%s already exists: a restore creates a new instance, choose another --to", r.kind.name, target)
	} else if !apierrors.IsNotFound(err) {
		return "", apiError(err, fmt.Sprintf("%s/%s", r.kind.name, target))
	}
	phase, err := restorePointPhase(ctx, c, ns, r, from)
	if err != nil {
		return "", err
	}
	for _, claim := range restoreClaims(r, ns, target) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: claim}, &corev1.PersistentVolumeClaim{}); err == nil {
			return "", fmt.Errorf("persistentvolumeclaim/%s exists, kept from an earlier %s/%s: a restore does not replace data that is there; choose another --to, or delete the claim if its data is not wanted", claim, r.kind.name, target)
		} else if !apierrors.IsNotFound(err) {
			return "", apiError(err, "persistentvolumeclaim/"+claim)
		}
	}
	if phase != appsv1alpha1.BackupSucceeded {
		return fmt.Sprintf(" (the backup is %s: the restore waits for it to succeed)", phaseOrNew(phase)), nil
	}
	return "", nil
}

func phaseOrNew(phase appsv1alpha1.BackupPhase) string {
	if phase == "" {
		return "not yet started"
	}
	return string(phase)
}

func restorePointPhase(ctx context.Context, c client.Client, ns string, r ref, from string) (appsv1alpha1.BackupPhase, error) {
	var phase *appsv1alpha1.BackupPhase
	var backup client.Object
	if r.kind.name == "wordpress" {
		b := &appsv1alpha1.WordPressBackup{}
		backup, phase = b, &b.Status.Phase
	} else {
		b := &appsv1alpha1.MySQLBackup{}
		backup, phase = b, &b.Status.Phase
	}
	what := fmt.Sprintf("--from: %s/%s in namespace %s", strings.ToLower(backupKind(r)), from, ns)
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: from}, backup); err != nil {
		return "", apiError(err, what)
	}
	if *phase == appsv1alpha1.BackupFailed {
		return "", fmt.Errorf("%s failed: %s", what, strings.TrimPrefix(objectHealth(backup), "Failed: "))
	}
	return *phase, nil
}

// restoreClaims are the volume claims the new instance would make, which must not exist yet.
func restoreClaims(r ref, ns, target string) []string {
	if r.kind.name == "wordpress" {
		wp := &appsv1alpha1.WordPress{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: target}}
		m := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: wp.MySQLName()}}
		return []string{wp.ContentClaimName(), m.DataClaimName()}
	}
	m := &appsv1alpha1.MySQL{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: target}}
	return []string{m.DataClaimName()}
}

// restoreStep is the new instance's health; it is over once Ready, and failed once Degraded
// because of its restore source (missing, failed, or a claim in the way). Other Degraded reasons
// can pass on their own, as a pod Unschedulable until its new claim is bound: they are printed
// and followed.
func restoreStep(label string, i instance) (string, bool, error) {
	line := label + ": " + health(i)
	if i.observed < i.object.GetGeneration() {
		return line, false, nil
	}
	if c := meta.FindStatusCondition(i.conditions, appsv1alpha1.ConditionDegraded); c != nil && c.Status == metav1.ConditionTrue &&
		c.Reason == appsv1alpha1.ReasonRestoreSourceNotReady {
		return line, true, fmt.Errorf("the restore cannot go on: %s", c.Message)
	}
	return line, meta.IsStatusConditionTrue(i.conditions, appsv1alpha1.ConditionReady), nil
}
