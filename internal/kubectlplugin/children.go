package kubectlplugin

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// childKinds are the kinds of the objects an instance makes, each listed once per tree. Every
// child carries the managed-by label, the one label the operator's own cache selects on.
var childKinds = []func() client.ObjectList{
	func() client.ObjectList { return &appsv1.DeploymentList{} },
	func() client.ObjectList { return &appsv1.StatefulSetList{} },
	func() client.ObjectList { return &corev1.ServiceList{} },
	func() client.ObjectList { return &corev1.ConfigMapList{} },
	func() client.ObjectList { return &corev1.SecretList{} },
	func() client.ObjectList { return &corev1.PersistentVolumeClaimList{} },
	func() client.ObjectList { return &batchv1.JobList{} },
}

// named are the children an instance's kind names with its helpers, by kind: those the operator
// keeps without an owner reference when the instance goes (the data claim, generated passwords,
// wp-content) are found by name alone.
type named map[string][]string

func namedChildren(obj client.Object) named {
	switch o := obj.(type) {
	case *appsv1alpha1.WebServer:
		return named{"Deployment": {o.ChildName()}, "Service": {o.ChildName()}, "ConfigMap": {o.ConfigMapName()}}
	case *appsv1alpha1.Memcached:
		return named{"StatefulSet": {o.ChildName()}, "Service": {o.ChildName()}}
	case *appsv1alpha1.MySQL:
		return named{
			"StatefulSet": {o.ChildName()}, "Service": {o.ChildName(), o.HeadlessServiceName()},
			"ConfigMap": {o.ConfigMapName()}, "Secret": {o.SecretName(), o.BackupAccountSecretName()},
			"PersistentVolumeClaim": {o.DataClaimName()},
		}
	case *appsv1alpha1.WordPress:
		return named{
			"Deployment": {o.ChildName()}, "Service": {o.ChildName()}, "Secret": {o.SaltsSecretName()},
			"PersistentVolumeClaim": {o.ContentClaimName()}, "Job": {o.RestoreJobName()},
		}
	}
	return nil
}

func (n named) has(kind, name string) bool {
	for _, candidate := range n[kind] {
		if candidate == name {
			return true
		}
	}
	return false
}

// candidates lists every object in the instance's namespace that may be part of its tree: the
// managed children of every kind, the instance's pods, and its backups.
// A kind the user may not list (Secrets, often) is left out of the tree and reported in
// hidden, rather than failing the whole tree.
func candidates(ctx context.Context, c client.Client, obj client.Object, hidden map[string]bool) ([]client.Object, error) {
	ns := obj.GetNamespace()
	var found []client.Object
	managed := client.MatchingLabels{appsv1alpha1.LabelManagedBy: appsv1alpha1.ManagedByValue}
	for _, newList := range childKinds {
		list := newList()
		if err := c.List(ctx, list, client.InNamespace(ns), managed); apierrors.IsForbidden(err) {
			gvk, _ := apiutil.GVKForObject(list, scheme)
			hidden[strings.TrimSuffix(gvk.Kind, "List")] = true
			continue
		} else if err != nil {
			return nil, apiError(err, "list children")
		}
		found = append(found, objectsOf(list)...)
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(selectorOf(obj))); err != nil {
		return nil, apiError(err, "list pods")
	}
	found = append(found, objectsOf(pods)...)
	backups, err := backupsOf(ctx, c, obj)
	if err != nil {
		return nil, err
	}
	return append(found, backups...), nil
}

func selectorOf(obj client.Object) map[string]string {
	switch o := obj.(type) {
	case *appsv1alpha1.WebServer:
		return o.SelectorLabels()
	case *appsv1alpha1.Memcached:
		return o.SelectorLabels()
	case *appsv1alpha1.PodSet:
		return o.SelectorLabels()
	case *appsv1alpha1.MySQL:
		return o.SelectorLabels()
	case *appsv1alpha1.WordPress:
		return o.SelectorLabels()
	}
	panic(fmt.Sprintf("no selector for %T", obj))
}

// backupsOf are a MySQL's MySQLBackups (labelled with its name, whoever owns them) or a
// WordPress's WordPressBackups.
func backupsOf(ctx context.Context, c client.Client, obj client.Object) ([]client.Object, error) {
	switch o := obj.(type) {
	case *appsv1alpha1.MySQL:
		list := &appsv1alpha1.MySQLBackupList{}
		if err := c.List(ctx, list, client.InNamespace(o.Namespace), client.MatchingLabels{appsv1alpha1.LabelMySQL: o.Name}); err != nil {
			return nil, apiError(err, "list mysqlbackups")
		}
		return objectsOf(list), nil
	case *appsv1alpha1.WordPress:
		list := &appsv1alpha1.WordPressBackupList{}
		if err := c.List(ctx, list, client.InNamespace(o.Namespace)); err != nil {
			return nil, apiError(err, "list wordpressbackups")
		}
		var mine []client.Object
		for i := range list.Items {
			if list.Items[i].Spec.WordPressName == o.Name {
				mine = append(mine, &list.Items[i])
			}
		}
		return mine, nil
	}
	return nil, nil
}

func objectsOf(list client.ObjectList) []client.Object {
	items, err := meta.ExtractList(list)
	if err != nil {
		panic(fmt.Sprintf("items of %T: %v", list, err))
	}
	out := make([]client.Object, 0, len(items))
	for _, item := range items {
		out = append(out, item.(client.Object))
	}
	return out
}

// kindOf is an object's kind, from the scheme: typed objects read from the API carry none.
func kindOf(obj client.Object) string {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	return gvk.Kind
}
