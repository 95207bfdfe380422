// Package v1alpha1 holds the appkeeper API: the kinds a user creates to run an application.
// +kubebuilder:object:generate=true
// +groupName=apps.appkeeper.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every appkeeper kind.
	GroupVersion = schema.GroupVersion{Group: "apps.appkeeper.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the appkeeper kinds with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the appkeeper kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
