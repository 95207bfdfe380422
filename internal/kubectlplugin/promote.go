package kubectlplugin

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func newPromoteCommand(env *environment) *cobra.Command {
	var flags waitFlags
	var acceptDataLoss bool
	var why string
	cmd := &cobra.Command{
		Use:   "promote mysql/<name> --accept-data-loss [--reason <text>]",
		Short: "Let a MySQL cluster whose failover is blocked promote a replica, losing what the others held",
		Long: `promote lets the operator finish a failover it refuses to do alone. When a cluster's primary
has failed and a replica that may hold the last acknowledged write cannot be read (its node is
gone, say), the operator promotes no one, and the condition Degraded says FailoverBlocked. If that
replica will not come back, promote tells the operator to promote the replica that holds the most
of those it can read: writes acknowledged only by the unread replicas are lost, which is why
--accept-data-loss is required.

The request is the annotation apps.appkeeper.dev/promote-accepting-data-loss, whose value is the
reason given; the operator removes it as it takes it, refuses it with a PromoteRefused Event when
no failover is blocked, and records the failover in status.lastFailover. By default promote waits
for that record.`,
		Example: `  kubectl appkeeper promote mysql/db --accept-data-loss --reason "node worker-2 is lost"`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := parseRefOf(args[0], "mysql")
			if err != nil {
				return err
			}
			if !acceptDataLoss {
				return usagef("promote loses the writes only the unread replicas acknowledged: give --accept-data-loss to go ahead")
			}
			return env.promote(cmd.Context(), r, why, flags)
		},
	}
	cmd.Flags().BoolVar(&acceptDataLoss, "accept-data-loss", false, "accept that writes only the unread replicas hold are lost")
	cmd.Flags().StringVar(&why, "reason", "asked with kubectl appkeeper promote", "why, kept in the request")
	flags.add(cmd, "until a replica took over", 2*time.Minute)
	return cmd
}

func (e *environment) promote(ctx context.Context, r ref, why string, flags waitFlags) error {
	c, m, err := e.getMySQL(ctx, r)
	if err != nil {
		return err
	}
	if !m.Clustered() {
		return fmt.Errorf("%s has one member: there is no replica to promote", r)
	}
	if cond := meta.FindStatusCondition(m.Status.Conditions, appsv1alpha1.ConditionDegraded); cond == nil ||
		cond.Status != metav1.ConditionTrue || cond.Reason != appsv1alpha1.ReasonFailoverBlocked {
		return fmt.Errorf("%s has no blocked failover (its primary is %s): nothing to promote", r, orNone(m.Status.Primary))
	}
	if _, pending := m.Annotations[appsv1alpha1.PromoteAnnotation]; pending {
		return fmt.Errorf("%s has a promotion the operator has not taken yet", r)
	}
	previous := m.Status.LastFailover.DeepCopy()
	if err := ask(ctx, c, m, appsv1alpha1.PromoteAnnotation, why); err != nil {
		return apiError(err, fmt.Sprintf("ask %s for a promotion", r))
	}
	fmt.Fprintf(e.streams.Out, "%s: promotion accepting data loss asked for\n", r)
	if !flags.wait {
		return nil
	}
	return follow(ctx, c, &appsv1alpha1.MySQLList{}, client.ObjectKeyFromObject(m), flags.timeout, e.streams.Out, func(obj client.Object) (string, bool, error) {
		return promoteStep(r, obj.(*appsv1alpha1.MySQL), previous)
	})
}

// promoteStep reads the outcome of a promotion: a failover recorded other than previous. A
// refusal leaves no record but an Event, so the waiting line says what blocks the cluster.
func promoteStep(r ref, m *appsv1alpha1.MySQL, previous *appsv1alpha1.FailoverStatus) (string, bool, error) {
	last := m.Status.LastFailover
	if last == nil || equality.Semantic.DeepEqual(last, previous) {
		waiting := "waiting for the operator"
		if _, pending := m.Annotations[appsv1alpha1.PromoteAnnotation]; !pending {
			waiting = "taken by the operator, waiting for a replica to take over (a PromoteRefused Event says why if none can)"
		}
		if cond := meta.FindStatusCondition(m.Status.Conditions, appsv1alpha1.ConditionDegraded); cond != nil && cond.Status == metav1.ConditionTrue {
			waiting += ": " + cond.Message
		}
		return fmt.Sprintf("%s: %s", r, waiting), false, nil
	}
	line := fmt.Sprintf("%s: %s took over from %s, writable %s after the failure was found", r, last.To, last.From, last.Duration.Duration)
	if last.AcceptedDataLoss {
		line += ", accepting data loss"
	}
	return line, true, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
