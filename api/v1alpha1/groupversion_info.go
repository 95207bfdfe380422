// Package v1alpha1 holds the appkeeper API: the kinds a user creates to run an application.
// +kubebuilder:object:generate=true
// +groupName=apps.appkeeper.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every appkeeper kind.
	GroupVersion = schema.GroupVersion{Group: "apps.appkeeper.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the appkeeper kinds with a scheme.
	SchemeBuilder = &schemeBuilder{}
)

// AddToScheme adds the appkeeper kinds to a scheme.
func AddToScheme(s *runtime.Scheme) error {
	metav1.AddToGroupVersion(s, GroupVersion)
	return SchemeBuilder.AddToScheme(s)
}

// schemeBuilder collects the kinds that each <kind>_types.go registers from its init function. It
// keeps this package's dependencies to the API machinery alone.
type schemeBuilder struct{ runtime.SchemeBuilder }

// Register adds objects to the kinds of GroupVersion.
func (b *schemeBuilder) Register(objects ...runtime.Object) {
	b.SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, objects...)
		return nil
	})
}
