package kubectlplugin

import (
	"context"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func newStatusCommand(env *environment) *cobra.Command {
	var allNamespaces bool
	var out output
	cmd := &cobra.Command{
		Use:   "status [kind[/name]]",
		Short: "One line per application: ready pods, running image or revision, and its health in words",
		Long: `status prints one line per application of every appkeeper kind (or of the kind, or the one
instance, named): its desired and ready pods, the image it runs (a PodSet's revision), and what its
conditions say: ready, rolling out, scaling, waiting for its database, degraded and why, or
rolled back from a failed image.`,
		Example: `  kubectl appkeeper status
  kubectl appkeeper status -A
  kubectl appkeeper status ws
  kubectl appkeeper status mysql/db -o yaml`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("status takes at most one kind[/name], got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			selected := kinds
			name := ""
			if len(args) == 1 {
				r, err := parseRef(args[0], false)
				if err != nil {
					return err
				}
				selected, name = []kind{r.kind}, r.name
			}
			if name != "" && allNamespaces {
				return usagef("-A lists every namespace: it cannot be used with a name")
			}
			return env.status(cmd.Context(), selected, name, allNamespaces, out)
		},
	}
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "list the applications of every namespace")
	out.addFlag(cmd, "the applications")
	return cmd
}

func (e *environment) status(ctx context.Context, selected []kind, name string, allNamespaces bool, out output) error {
	c, ns, err := e.session()
	if err != nil {
		return err
	}
	if allNamespaces {
		ns = ""
	}
	var found []instance
	for _, k := range selected {
		got, err := listInstances(ctx, c, k, ns, name)
		if err != nil {
			return err
		}
		found = append(found, got...)
	}
	sort.Slice(found, func(a, b int) bool {
		x, y := found[a], found[b]
		if x.namespace() != y.namespace() {
			return x.namespace() < y.namespace()
		}
		if x.kind != y.kind {
			return x.kind < y.kind
		}
		return x.name() < y.name()
	})
	if !out.text() {
		objects := make([]client.Object, 0, len(found))
		for _, i := range found {
			objects = append(objects, i.object)
		}
		return out.print(e.streams.Out, objects...)
	}
	if len(found) == 0 {
		where := "in any namespace"
		if ns != "" {
			where = "in namespace " + ns
		}
		fmt.Fprintf(e.streams.ErrOut, "No appkeeper applications found %s.\n", where)
		return nil
	}
	return writeStatusTable(e.streams.Out, found, allNamespaces)
}

// listInstances lists the instances of one kind in ns (every namespace when empty), or gets the
// one named.
func listInstances(ctx context.Context, c client.Client, k kind, ns, name string) ([]instance, error) {
	list := k.newList()
	if name != "" {
		obj := k.newOne()
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			return nil, apiError(err, fmt.Sprintf("%s/%s in namespace %s", k.name, name, ns))
		}
		return k.instances(singleList(list, obj)), nil
	}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, apiError(err, "list "+k.name)
	}
	return k.instances(list), nil
}

func writeStatusTable(w io.Writer, found []instance, withNamespace bool) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	if withNamespace {
		fmt.Fprint(tw, "NAMESPACE\t")
	}
	fmt.Fprintln(tw, "NAME\tREADY\tIMAGE/REVISION\tSTATUS")
	for _, i := range found {
		if withNamespace {
			fmt.Fprint(tw, i.namespace()+"\t")
		}
		fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%s\n", i.ref(), i.ready, i.desired, runs(i), describe(i))
	}
	return tw.Flush()
}

// runs is the image every pod runs, a PodSet's revision, or "-" before a first rollout completes.
func runs(i instance) string {
	switch {
	case i.image != "":
		return i.image
	case i.revision != "":
		return "revision " + i.revision
	}
	return "-"
}
