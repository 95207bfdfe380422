package v1alpha1_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
	"github.com/appkeeper/appkeeper/config/crd"
	"github.com/appkeeper/appkeeper/internal/resources/podset"
	"github.com/appkeeper/appkeeper/internal/resources/wordpress"
)

// derivedNames are the names a kind derives from its own: labels must be DNS labels (Service
// names, pod hostnames, label values), objects only DNS subdomains (Secrets, ConfigMaps, PVCs).
type derivedNames struct {
	labels, objects []string
}

// revisionLabel is the controller-revision-hash label the StatefulSet controller puts on its pods:
// the StatefulSet's name, a dash and a hash of at most 10 characters.
func revisionLabel(sts string) string { return sts + "-" + strings.Repeat("h", 10) }

func meta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "ns"} }

func mysqlNames(m *appsv1alpha1.MySQL) derivedNames {
	return derivedNames{
		labels:  []string{m.ChildName(), m.HeadlessServiceName(), m.ChildName() + "-0", revisionLabel(m.ChildName())},
		objects: []string{m.ConfigMapName(), m.GeneratedSecretName(), m.DataClaimName(), m.BackupAccountSecretName(), m.ExporterAccountSecretName()},
	}
}

func TestNameLimitsFitEveryDerivedName(t *testing.T) {
	tests := []struct {
		kind  string
		limit int
		names func(name string) derivedNames
	}{
		{"WebServer", appsv1alpha1.MaxWebServerNameLength, func(name string) derivedNames {
			ws := &appsv1alpha1.WebServer{ObjectMeta: meta(name)}
			return derivedNames{labels: []string{ws.ChildName(), ws.SelectorLabels()[appsv1alpha1.LabelInstance]}}
		}},
		{"Memcached", appsv1alpha1.MaxMemcachedNameLength, func(name string) derivedNames {
			mc := &appsv1alpha1.Memcached{ObjectMeta: meta(name)}
			lastMember := fmt.Sprintf("%s-%d", mc.ChildName(), appsv1alpha1.MaxMemcachedSize-1)
			return derivedNames{labels: []string{mc.ChildName(), lastMember, revisionLabel(mc.ChildName())}}
		}},
		{"PodSet", appsv1alpha1.MaxPodSetNameLength, func(name string) derivedNames {
			ps := &appsv1alpha1.PodSet{ObjectMeta: meta(name)}
			return derivedNames{labels: []string{podset.PodName(ps, math.MaxInt32), ps.SelectorLabels()[appsv1alpha1.LabelInstance]}}
		}},
		{"MySQL", appsv1alpha1.MaxMySQLNameLength, func(name string) derivedNames {
			return mysqlNames(&appsv1alpha1.MySQL{ObjectMeta: meta(name)})
		}},
		{"WordPress", appsv1alpha1.MaxWordPressNameLength, func(name string) derivedNames {
			wp := &appsv1alpha1.WordPress{ObjectMeta: meta(name)}
			wp.Spec.Database.MySQL = &appsv1alpha1.MySQLSpec{}
			own := wordpress.MySQL(wp)
			names := mysqlNames(own)
			names.labels = append(names.labels, wp.ChildName(), own.Name)
			names.objects = append(names.objects, wp.ContentClaimName(), wp.SaltsSecretName())
			return names
		}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			names := tt.names(strings.Repeat("a", tt.limit))
			longest := ""
			for _, n := range names.labels {
				if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
					t.Errorf("%s with a name of %d characters derives %q: %v", tt.kind, tt.limit, n, errs)
				}
				if len(n) > len(longest) {
					longest = n
				}
			}
			for _, n := range names.objects {
				if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
					t.Errorf("%s with a name of %d characters derives %q: %v", tt.kind, tt.limit, n, errs)
				}
			}
			if len(longest) != validation.DNS1123LabelMaxLength {
				t.Errorf("%s's longest derived label %q has %d characters: the limit %d could be %d",
					tt.kind, longest, len(longest), tt.limit, tt.limit+validation.DNS1123LabelMaxLength-len(longest))
			}
			if !rootRuleChecks(t, tt.kind, tt.limit) {
				t.Errorf("the %s CRD has no root rule checking size(self.metadata.name) <= %d with a message naming the limit", tt.kind, tt.limit)
			}
		})
	}
}

// rootRuleChecks is true when the generated CRD of kind has a root rule bounding metadata.name by
// limit whose message gives the limit, so that the marker and the constant cannot drift apart.
func rootRuleChecks(t *testing.T, kind string, limit int) bool {
	t.Helper()
	crds, err := crd.Definitions()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crds {
		if c.Spec.Names.Kind != kind {
			continue
		}
		for _, v := range c.Spec.Versions {
			for _, r := range v.Schema.OpenAPIV3Schema.XValidations {
				if strings.Contains(r.Rule, fmt.Sprintf("size(self.metadata.name) <= %d", limit)) &&
					strings.Contains(r.Message, fmt.Sprintf("metadata.name must be a DNS-1035 label of at most %d characters", limit)) {
					return true
				}
			}
		}
	}
	return false
}
