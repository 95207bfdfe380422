package kubectlplugin

import (
	"context"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

func newTreeCommand(env *environment) *cobra.Command {
	var out output
	cmd := &cobra.Command{
		Use:   "tree <kind>/<name>",
		Short: "An application's children and the health of each, as a tree",
		Long: `tree prints what an application is made of: its Deployment or StatefulSet and their pods,
Services, ConfigMaps, Secrets (never their values), volume claims, Jobs, a WordPress's MySQL with
its own children, and backups, each with its health: ready counts, a pod's phase and why it
waits, a claim's phase and capacity, a backup's phase.

Children are found by their owner references and by the names the kind gives them, so the
volume claims and Secrets kept without an owner (deletionPolicy Retain) are shown too.`,
		Example: `  kubectl appkeeper tree wordpress/blog
  kubectl appkeeper tree ws/web -o yaml`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			r, err := parseRef(args[0], true)
			if err != nil {
				return err
			}
			return env.tree(cmd.Context(), r, out)
		},
	}
	out.addFlag(cmd, "the application and its children")
	return cmd
}

func (e *environment) tree(ctx context.Context, r ref, out output) error {
	c, ns, err := e.session()
	if err != nil {
		return err
	}
	found, err := listInstances(ctx, c, r.kind, ns, r.name)
	if err != nil {
		return err
	}
	hidden := map[string]bool{}
	root, err := buildTree(ctx, c, found[0], hidden)
	if err != nil {
		return err
	}
	for _, kind := range sortedKeys(hidden) {
		fmt.Fprintf(e.streams.ErrOut, "Warning: you may not list %ss in namespace %s: the tree leaves them out\n", kind, ns)
	}
	if !out.text() {
		return out.print(e.streams.Out, root.objects()...)
	}
	return root.write(e.streams.Out)
}

// node is one object of a tree and the health the plugin reads in it.
type node struct {
	object   client.Object
	label    string
	health   string
	children []*node
}

func newNode(obj client.Object) *node {
	return &node{object: obj, label: kindOf(obj) + "/" + obj.GetName(), health: objectHealth(obj)}
}

// buildTree finds an instance's children, nests each under its owner, and a WordPress's MySQL
// with its own tree.
func buildTree(ctx context.Context, c client.Client, inst instance, hidden map[string]bool) (*node, error) {
	root := &node{object: inst.object, label: inst.ref(), health: instanceHealth(inst)}
	all, err := candidates(ctx, c, inst.object, hidden)
	if err != nil {
		return nil, err
	}
	byUID := map[types.UID]*node{inst.object.GetUID(): root}
	rest := attachToOwners(all, byUID)
	names := namedChildren(inst.object)
	for _, obj := range rest {
		switch kind := kindOf(obj); {
		case kind == "Pod":
			// A Deployment's pods belong to its ReplicaSets, which the tree leaves out.
			parent := root.child("Deployment")
			if parent == nil {
				parent = root
			}
			parent.children = append(parent.children, newNode(obj))
		case names.has(kind, obj.GetName()) || kind == "MySQLBackup" || kind == "WordPressBackup":
			root.children = append(root.children, newNode(obj))
		}
	}
	if m, ok := inst.object.(*appsv1alpha1.MySQL); ok {
		root.addMemberRoles(m.Status.Members)
	}
	if wp, ok := inst.object.(*appsv1alpha1.WordPress); ok {
		database, err := databaseNode(ctx, c, wp, hidden)
		if err != nil {
			return nil, err
		}
		root.children = append(root.children, database)
	}
	root.sort()
	return root, nil
}

// attachToOwners nests every object whose owner is in the tree under it, until none is left that
// can be placed, and returns those that could not.
func attachToOwners(objects []client.Object, byUID map[types.UID]*node) []client.Object {
	for placed := true; placed; {
		placed = false
		var rest []client.Object
		for _, obj := range objects {
			parent := ownerNode(obj, byUID)
			if parent == nil {
				rest = append(rest, obj)
				continue
			}
			child := newNode(obj)
			parent.children = append(parent.children, child)
			byUID[obj.GetUID()] = child
			placed = true
		}
		objects = rest
	}
	return objects
}

func ownerNode(obj client.Object, byUID map[types.UID]*node) *node {
	for _, owner := range obj.GetOwnerReferences() {
		if n, ok := byUID[owner.UID]; ok {
			return n
		}
	}
	return nil
}

// databaseNode is a WordPress's MySQL with its own tree, or a line saying it is missing.
func databaseNode(ctx context.Context, c client.Client, wp *appsv1alpha1.WordPress, hidden map[string]bool) (*node, error) {
	m := &appsv1alpha1.MySQL{}
	err := c.Get(ctx, client.ObjectKey{Namespace: wp.Namespace, Name: wp.MySQLName()}, m)
	if apierrors.IsNotFound(err) {
		return &node{object: m, label: "mysql/" + wp.MySQLName(), health: "not found"}, nil
	}
	if err != nil {
		return nil, apiError(err, "mysql/"+wp.MySQLName())
	}
	database, err := buildTree(ctx, c, mysqlInstance(m), hidden)
	if err != nil {
		return nil, err
	}
	if !wp.OwnsMySQL() {
		database.label += " (referenced)"
	}
	return database, nil
}

// instanceHealth is an instance's line: its pods, what it runs, and its health in words.
func instanceHealth(i instance) string {
	return fmt.Sprintf("%d/%d ready, %s: %s", i.ready, i.desired, runs(i), describe(i))
}

// addMemberRoles adds to each member's pod in the tree what the operator last read of it.
func (n *node) addMemberRoles(members []appsv1alpha1.MySQLMemberStatus) {
	for _, c := range n.children {
		if kindOf(c.object) == "Pod" {
			for _, member := range members {
				if member.Name == c.object.GetName() {
					c.health += "; " + memberWords(member)
				}
			}
		}
		c.addMemberRoles(members)
	}
}

func (n *node) child(kind string) *node {
	for _, c := range n.children {
		if kindOf(c.object) == kind {
			return c
		}
	}
	return nil
}

// kindOrder puts workloads and their pods first, then what they read, then the data, then backups.
var kindOrder = map[string]int{
	"Deployment": 1, "StatefulSet": 1, "Pod": 2, "Service": 3, "ConfigMap": 4, "Secret": 5,
	"PersistentVolumeClaim": 6, "Job": 7, "MySQL": 8, "MySQLBackup": 9, "WordPressBackup": 9,
}

func (n *node) sort() {
	sort.SliceStable(n.children, func(a, b int) bool {
		x, y := n.children[a], n.children[b]
		kx, ky := kindOrder[kindOf(x.object)], kindOrder[kindOf(y.object)]
		if kx != ky {
			return kx < ky
		}
		return x.label < y.label
	})
	for _, c := range n.children {
		c.sort()
	}
}

func (n *node) objects() []client.Object {
	if n.object.GetUID() == "" {
		return nil
	}
	out := []client.Object{n.object}
	for _, c := range n.children {
		out = append(out, c.objects()...)
	}
	return out
}

// write prints the tree with the health of every object aligned in a column.
func (n *node) write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintf(tw, "%s\t%s\n", n.label, n.health)
	n.writeChildren(tw, "")
	return tw.Flush()
}

func (n *node) writeChildren(w io.Writer, indent string) {
	for i, c := range n.children {
		branch, next := "├── ", "│   "
		if i == len(n.children)-1 {
			branch, next = "└── ", "    "
		}
		fmt.Fprintf(w, "%s%s%s\t%s\n", indent, branch, c.label, c.health)
		c.writeChildren(w, indent+next)
	}
}

func sortedKeys(set map[string]bool) []string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
