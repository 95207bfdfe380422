package kubectlplugin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func newSwitchoverCommand(env *environment) *cobra.Command {
	var flags waitFlags
	var to string
	cmd := &cobra.Command{
		Use:   "switchover mysql/<name> [--to <member>]",
		Short: "Hand a MySQL cluster's primary role to a replica",
		Long: `switchover asks the operator to make another member of a MySQL cluster its primary: the
member --to names (a pod name such as db-1), or by default the replica that holds the most. The
primary closes to writes, the chosen replica applies the last of them, is recorded and opened,
and the other members follow it; no acknowledged write is lost. The request is the annotation
apps.appkeeper.dev/switchover, which the operator removes as it takes it; it refuses, changing
nothing, a switchover of a MySQL of one member, to a member that does not exist, does not
replicate or lags, or while the cluster has no writable primary.

By default it waits for the outcome, printed from status.lastSwitchover, and exits with status 1
when the switchover was refused.`,
		Example: `  kubectl appkeeper switchover mysql/db
  kubectl appkeeper switchover my/db --to db-2`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := parseRefOf(args[0], "mysql")
			if err != nil {
				return err
			}
			return env.switchover(cmd.Context(), r, to, flags)
		},
	}
	cmd.Flags().StringVar(&to, "to", appsv1alpha1.SwitchoverToAny, "the member to make primary, or any")
	flags.add(cmd, "the request until the operator has handled it", 2*time.Minute)
	return cmd
}

func (e *environment) switchover(ctx context.Context, r ref, to string, flags waitFlags) error {
	c, m, err := e.getMySQL(ctx, r)
	if err != nil {
		return err
	}
	if !m.Clustered() {
		return fmt.Errorf("%s has one member: there is no replica to switch to", r)
	}
	if pending, ok := m.Annotations[appsv1alpha1.SwitchoverAnnotation]; ok {
		return fmt.Errorf("%s has a switchover to %s that the operator has not taken yet", r, pending)
	}
	// The outcome is the first one that differs from the last before the request: the operator
	// removes the annotation before it writes the outcome.
	previous := m.Status.LastSwitchover.DeepCopy()
	if err := ask(ctx, c, m, appsv1alpha1.SwitchoverAnnotation, to); err != nil {
		return apiError(err, fmt.Sprintf("ask %s for a switchover", r))
	}
	fmt.Fprintf(e.streams.Out, "%s: switchover to %s asked for\n", r, to)
	if !flags.wait {
		return nil
	}
	return follow(ctx, c, &appsv1alpha1.MySQLList{}, client.ObjectKeyFromObject(m), flags.timeout, e.streams.Out, func(obj client.Object) (string, bool, error) {
		return switchoverStep(r, obj.(*appsv1alpha1.MySQL), previous)
	})
}

// errSwitchoverRefused says that the operator refused the switchover.
var errSwitchoverRefused = errors.New("switchover refused")

// switchoverStep reads the outcome of a request, once the operator has recorded one other than
// previous.
func switchoverStep(r ref, m *appsv1alpha1.MySQL, previous *appsv1alpha1.SwitchoverStatus) (string, bool, error) {
	last := m.Status.LastSwitchover
	if _, pending := m.Annotations[appsv1alpha1.SwitchoverAnnotation]; pending || last == nil || equality.Semantic.DeepEqual(last, previous) {
		return fmt.Sprintf("%s: waiting for the operator (primary %s)", r, m.Status.Primary), false, nil
	}
	line := fmt.Sprintf("%s: %s: %s", r, last.Result, last.Message)
	if last.Result != appsv1alpha1.SwitchoverDone {
		return line, true, fmt.Errorf("%w: %s", errSwitchoverRefused, last.Message)
	}
	return line, true, nil
}

// getMySQL reads the MySQL r names, in the session's namespace.
func (e *environment) getMySQL(ctx context.Context, r ref) (client.WithWatch, *appsv1alpha1.MySQL, error) {
	c, ns, err := e.session()
	if err != nil {
		return nil, nil, err
	}
	m := &appsv1alpha1.MySQL{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: r.name}, m); err != nil {
		return nil, nil, apiError(err, fmt.Sprintf("%s in namespace %s", r, ns))
	}
	return c, m, nil
}

// ask sets the annotation of a request to the operator on m. The patch holds no resourceVersion:
// the operator writes the status of a cluster as its members move.
func ask(ctx context.Context, c client.Client, m *appsv1alpha1.MySQL, annotation, value string) error {
	patch := client.MergeFrom(m.DeepCopy())
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[annotation] = value
	return c.Patch(ctx, m, patch)
}
