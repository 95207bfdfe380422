package main

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// tiny is a kind of this package, so that the walk treats its types as the project's own.
type tiny struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              tinySpec `json:"spec"`
}

type tinySpec struct {
	Size        *int32                      `json:"size,omitempty"`
	Resources   corev1.ResourceRequirements `json:"resources,omitempty"`
	Tolerations []corev1.Toleration         `json:"tolerations,omitempty"`
	Storage     tinyStorage                 `json:"storage"`
}

type tinyStorage struct {
	Size  resource.Quantity `json:"size,omitzero"`
	Class string            `json:"class,omitempty"`
}

// tinySchema is what controller-gen would generate from tiny, with the fields in another order
// than the struct's, as a map's keys come.
const tinySchema = `
type: object
properties:
  metadata:
    type: object
  spec:
    description: Spec is what a user asks for.
    type: object
    required: [storage]
    x-kubernetes-validations:
    - rule: has(self.storage.class) == has(oldSelf.storage.class) && (!has(self.storage.class) || self.storage.class == oldSelf.storage.class)
      message: spec.storage.class is immutable
      fieldPath: .storage.class
    properties:
      storage:
        description: Storage is the volume.
        type: object
        properties:
          size:
            description: Size of the volume.
            default: 1Gi
            anyOf: [{type: integer}, {type: string}]
            x-kubernetes-int-or-string: true
            x-kubernetes-validations:
            - rule: quantity(string(self)).isGreaterThan(quantity('0'))
              message: size must be above zero
          class:
            description: Class of the volume | or none.
            type: string
            enum: [fast, slow]
      resources:
        description: Resources of the container.
        type: object
        properties:
          limits:
            description: Limits describes the maximum amount of compute resources allowed.
            type: object
            additionalProperties:
              anyOf: [{type: integer}, {type: string}]
              x-kubernetes-int-or-string: true
      size:
        description: Size is the number of members.
        type: integer
        format: int32
        default: 3
        minimum: 1
        maximum: 9
      tolerations:
        description: Tolerations of the pods.
        type: array
        items:
          description: The pod this Toleration is attached to tolerates any taint that matches.
          type: object
          properties:
            key:
              description: Key is the taint key that the toleration applies to.
              type: string
`

const ref = "https://kubernetes.io/docs/reference/generated/kubernetes-api/v1.36/"

func TestWalkSection(t *testing.T) {
	tests := []struct {
		name   string
		change func(spec *apiextensionsv1.JSONSchemaProps)
		// rows maps a field's path to text its row must hold.
		rows map[string][]string
		// absent are prefixes of paths that must have no row.
		absent  []string
		wantErr string
	}{{
		name: "a foreign type stops the walk and links to the Kubernetes reference",
		rows: map[string][]string{
			"spec.resources":   {"[`ResourceRequirements`](" + ref + "#resourcerequirements-v1-core)"},
			"spec.tolerations": {"[`[]Toleration`](" + ref + "#toleration-v1-core)"},
			"spec.storage.size": {
				"[`quantity`](" + ref + "#quantity-resource-core) (int-or-string)",
			},
		},
		absent: []string{"spec.resources.", "spec.tolerations["},
	}, {
		name: "defaults, bounds and CEL rules appear on their field",
		rows: map[string][]string{
			"spec":         {"rule `has(self.storage.class) == has(oldSelf.storage.class)", "; message, on `spec.storage.class`: spec.storage.class is immutable"},
			"spec.size":    {"`3`", "at least 1", "at most 9", "format `int32`"},
			"spec.storage": {"| yes |"},
			"spec.storage.size": {
				"`1Gi`",
				"rule `quantity(string(self)).isGreaterThan(quantity('0'))`; message: size must be above zero",
			},
			"spec.storage.class": {"one of `fast`, `slow`", "immutable, by a rule on `spec`", `Class of the volume \| or none.`},
		},
	}, {
		name:    "a field without a description fails with its path",
		change:  func(spec *apiextensionsv1.JSONSchemaProps) { setDescription(spec, "storage", "class", "") },
		wantErr: "spec.storage.class has no description",
	}, {
		name: "a field that only has its type's description fails with its path",
		change: func(spec *apiextensionsv1.JSONSchemaProps) {
			setDescription(spec, "resources", "", "ResourceRequirements describes the compute resource requirements.")
		},
		wantErr: "spec.resources has only the description of its type",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := &apiextensionsv1.JSONSchemaProps{}
			if err := yaml.UnmarshalStrict([]byte(tinySchema), root); err != nil {
				t.Fatal(err)
			}
			if tt.change != nil {
				spec := root.Properties["spec"]
				tt.change(&spec)
				root.Properties["spec"] = spec
			}
			fields, err := walkSection(root, reflect.TypeFor[tiny](), "spec", ref)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, fields, tt.rows, tt.absent)
		})
	}
}

func checkRows(t *testing.T, fields []field, want map[string][]string, absent []string) {
	t.Helper()
	var paths []string
	rows := map[string]string{}
	for _, f := range fields {
		paths = append(paths, f.Path)
		var b strings.Builder
		renderFields(&b, "Spec", "spec", []field{f})
		rows[f.Path] = b.String()
	}
	// The struct's order, not the schema's.
	if got := strings.Join(paths, " "); got != "spec spec.size spec.resources spec.tolerations spec.storage spec.storage.size spec.storage.class" {
		t.Errorf("rows in the order %s", got)
	}
	for path, texts := range want {
		for _, text := range texts {
			if !strings.Contains(rows[path], text) {
				t.Errorf("row of %s lacks %q:\n%s", path, text, rows[path])
			}
		}
	}
	for _, prefix := range absent {
		for _, p := range paths {
			if strings.HasPrefix(p, prefix) {
				t.Errorf("row of %s: the walk went into a type of another package", p)
			}
		}
	}
}

// setDescription sets the description of spec's property name, or of its property sub.
func setDescription(spec *apiextensionsv1.JSONSchemaProps, name, sub, description string) {
	p := spec.Properties[name]
	if sub == "" {
		p.Description = description
	} else {
		s := p.Properties[sub]
		s.Description = description
		p.Properties[sub] = s
	}
	spec.Properties[name] = p
}

func TestCodeSpansAndEscapes(t *testing.T) {
	tests := []struct{ got, want string }{
		{code("a || b"), "`a || b`"},
		{code("say `x`"), "`` say `x` ``"},
		{code("two\nlines"), "`two lines`"},
		{escape("ConfigMap <name>-nginx | 0 2 * * * [a](b) x_y"), `ConfigMap &lt;name&gt;-nginx \| 0 2 \* \* \* \[a\](b) x\_y`},
		{oneLine(" joined\n  into\tone "), "joined into one"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
