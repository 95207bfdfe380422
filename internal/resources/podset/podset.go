// Package podset builds the pods of a PodSet: one per ordinal, named after it, stamped with the hash
// of the template it was built from.
package podset

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/internal/resources/parts"
)

// TemplateHash identifies a template: equal templates hash alike, and any change of the labels,
// annotations or spec changes the hash, which is what makes the pods of the old template stale.
func TemplateHash(t *appsv1alpha1.PodSetTemplate) string {
	// encoding/json writes struct fields in declaration order and map keys sorted, so equal
	// templates always serialize to the same bytes.
	raw, err := json.Marshal(t)
	if err != nil {
		panic(fmt.Sprintf("marshal a pod template: %v", err))
	}
	h := fnv.New64a()
	_, _ = h.Write(raw)
	return fmt.Sprintf("%016x", h.Sum64())
}

// PodName is the name of the pod at ordinal. Names are deterministic so that the API server, not
// the operator's cache, decides whether a pod exists: creating a name twice fails with
// AlreadyExists, and a cache that lags behind can never lead to an extra pod.
func PodName(ps *appsv1alpha1.PodSet, ordinal int) string {
	return ps.Name + "-" + strconv.Itoa(ordinal)
}

// Ordinal is the inverse of PodName; ok is false for a name PodName does not produce for ps.
func Ordinal(ps *appsv1alpha1.PodSet, name string) (ordinal int, ok bool) {
	suffix, found := strings.CutPrefix(name, ps.Name+"-")
	if !found {
		return 0, false
	}
	n, err := strconv.Atoi(suffix)
	if err != nil || n < 0 || strconv.Itoa(n) != suffix {
		return 0, false
	}
	return n, true
}

// Pod is the pod of ps at ordinal, built from its template whose hash is templateHash.
func Pod(ps *appsv1alpha1.PodSet, ordinal int, templateHash string) *corev1.Pod {
	t := ps.Spec.Template
	annotations := make(map[string]string, len(t.Metadata.Annotations)+1)
	for k, v := range t.Metadata.Annotations {
		annotations[k] = v
	}
	annotations[appsv1alpha1.AnnotationTemplateHash] = templateHash
	spec := t.Spec.DeepCopy()
	// The pod gets a ServiceAccount token only when the template asks for one: most workloads
	// never call the Kubernetes API. The template hash is of the template as written, so this
	// default does not make existing pods stale.
	if spec.AutomountServiceAccountToken == nil {
		spec.AutomountServiceAccountToken = ptr.To(false)
	}
	// Nor does the preference to spread the pods over nodes, which a template's own affinity
	// replaces.
	spec.Affinity = parts.AffinityOrSpread(spec.Affinity, ps.SelectorLabels())
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      PodName(ps, ordinal),
			Namespace: ps.Namespace,
			// The selector labels go over the user's, so that no template label can take a pod out
			// of its PodSet; the managed-by label puts it in the operator's cache.
			Labels:          parts.PodLabels(t.Metadata.Labels, parts.Labels(ps.SelectorLabels(), appsv1alpha1.ManagedByValue)),
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ps, appsv1alpha1.GroupVersion.WithKind("PodSet"))},
		},
		Spec: *spec,
	}
}
