package kubectlplugin

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/appkeeper/appkeeper/api/v1alpha1"
)

// kind is one of appkeeper's application kinds, as the plugin reads it.
type kind struct {
	// name is the kind in lower case, as the plugin prints it: webserver/web.
	name    string
	aliases []string
	newList func() client.ObjectList
	newOne  func() client.Object
	// instances views each item of a list of this kind.
	instances func(client.ObjectList) []instance
}

// kinds are the application kinds, in the order of their names.
var kinds = []kind{
	{
		name: "memcached", aliases: []string{"mc", "memcacheds"},
		newList: func() client.ObjectList { return &appsv1alpha1.MemcachedList{} },
		newOne:  func() client.Object { return &appsv1alpha1.Memcached{} },
		instances: func(l client.ObjectList) []instance {
			return viewAll(l.(*appsv1alpha1.MemcachedList).Items, memcachedInstance)
		},
	},
	{
		name: "mysql", aliases: []string{"my", "mysqls"},
		newList: func() client.ObjectList { return &appsv1alpha1.MySQLList{} },
		newOne:  func() client.Object { return &appsv1alpha1.MySQL{} },
		instances: func(l client.ObjectList) []instance {
			return viewAll(l.(*appsv1alpha1.MySQLList).Items, mysqlInstance)
		},
	},
	{
		name: "podset", aliases: []string{"pset", "podsets"},
		newList: func() client.ObjectList { return &appsv1alpha1.PodSetList{} },
		newOne:  func() client.Object { return &appsv1alpha1.PodSet{} },
		instances: func(l client.ObjectList) []instance {
			return viewAll(l.(*appsv1alpha1.PodSetList).Items, podSetInstance)
		},
	},
	{
		name: "webserver", aliases: []string{"ws", "webservers"},
		newList: func() client.ObjectList { return &appsv1alpha1.WebServerList{} },
		newOne:  func() client.Object { return &appsv1alpha1.WebServer{} },
		instances: func(l client.ObjectList) []instance {
			return viewAll(l.(*appsv1alpha1.WebServerList).Items, webServerInstance)
		},
	},
	{
		name: "wordpress", aliases: []string{"wp", "wordpresses"},
		newList: func() client.ObjectList { return &appsv1alpha1.WordPressList{} },
		newOne:  func() client.Object { return &appsv1alpha1.WordPress{} },
		instances: func(l client.ObjectList) []instance {
			return viewAll(l.(*appsv1alpha1.WordPressList).Items, wordPressInstance)
		},
	},
}

func viewAll[T any](items []T, view func(*T) instance) []instance {
	out := make([]instance, 0, len(items))
	for i := range items {
		out = append(out, view(&items[i]))
	}
	return out
}

// kindNames lists the kinds a user may name, for error messages.
func kindNames() string {
	names := make([]string, 0, len(kinds))
	for _, k := range kinds {
		names = append(names, k.name+" ("+k.aliases[0]+")")
	}
	return strings.Join(names, ", ")
}

// findKind is the kind a user named: its name, plural, short name or the kind itself, in any case.
func findKind(name string) (kind, error) {
	name = strings.ToLower(strings.TrimSuffix(strings.ToLower(name), "."+strings.ToLower(appsv1alpha1.GroupVersion.Group)))
	for _, k := range kinds {
		if name == k.name {
			return k, nil
		}
		for _, alias := range k.aliases {
			if name == alias {
				return k, nil
			}
		}
	}
	return kind{}, usagef("unknown kind %q: appkeeper's kinds are %s", name, kindNames())
}

// ref is kind[/name] as a user writes it.
type ref struct {
	kind kind
	name string
}

func (r ref) String() string { return r.kind.name + "/" + r.name }

// parseRef reads kind[/name]; with needName, the name is required.
func parseRef(arg string, needName bool) (ref, error) {
	kindName, name, hasName := strings.Cut(arg, "/")
	k, err := findKind(kindName)
	if err != nil {
		return ref{}, err
	}
	if hasName && name == "" || needName && name == "" {
		return ref{}, usagef("%q names no instance: write %s/<name>", arg, k.name)
	}
	return ref{kind: k, name: name}, nil
}

// parseRefOf reads kind/name where only the given kinds make sense.
func parseRefOf(arg string, allowed ...string) (ref, error) {
	r, err := parseRef(arg, true)
	if err != nil {
		return ref{}, err
	}
	for _, a := range allowed {
		if r.kind.name == a {
			return r, nil
		}
	}
	return ref{}, usagef("%s: only %s/<name> can be given here", arg, strings.Join(allowed, "/<name> or "))
}

// instance is what the plugin says about one application, whatever its kind.
type instance struct {
	kind       string
	object     client.Object
	desired    int32
	ready      int32
	updated    *int32
	image      string
	revision   string
	conditions []metav1.Condition
	rollout    appsv1alpha1.RolloutStatus
	observed   int64
	// database is a WordPress's MySQL.
	database string
	restore  *appsv1alpha1.MySQLRestoreStatus
	// facts are what the instance's kind adds to its health on a status line.
	facts []string
}

func (i instance) namespace() string { return i.object.GetNamespace() }
func (i instance) name() string      { return i.object.GetName() }
func (i instance) ref() string       { return i.kind + "/" + i.name() }

func webServerInstance(ws *appsv1alpha1.WebServer) instance {
	return instance{
		kind: "webserver", object: ws, desired: ws.DesiredReplicas(), ready: ws.Status.ReadyReplicas,
		updated: &ws.Status.UpdatedReplicas, image: ws.Status.Image, conditions: ws.Status.Conditions,
		rollout: ws.Status.Rollout, observed: ws.Status.ObservedGeneration,
	}
}

func memcachedInstance(mc *appsv1alpha1.Memcached) instance {
	return instance{
		kind: "memcached", object: mc, desired: mc.DesiredSize(), ready: mc.Status.ReadyReplicas,
		image: mc.Status.Image, conditions: mc.Status.Conditions,
		rollout: mc.Status.Rollout, observed: mc.Status.ObservedGeneration,
	}
}

func podSetInstance(ps *appsv1alpha1.PodSet) instance {
	return instance{
		kind: "podset", object: ps, desired: ps.DesiredReplicas(), ready: ps.Status.ReadyReplicas,
		updated: &ps.Status.UpdatedReplicas, revision: ps.Status.Rollout.CurrentRevision,
		conditions: ps.Status.Conditions, rollout: ps.Status.Rollout, observed: ps.Status.ObservedGeneration,
	}
}

func mysqlInstance(m *appsv1alpha1.MySQL) instance {
	return instance{
		kind: "mysql", object: m, desired: m.MemberCount(), ready: m.Status.ReadyReplicas,
		image: m.Status.Image, conditions: m.Status.Conditions, rollout: m.Status.Rollout,
		observed: m.Status.ObservedGeneration, restore: m.Status.Restore,
		facts: mysqlFacts(m),
	}
}

func wordPressInstance(wp *appsv1alpha1.WordPress) instance {
	return instance{
		kind: "wordpress", object: wp, desired: wp.DesiredReplicas(), ready: wp.Status.ReadyReplicas,
		image: wp.Status.Image, conditions: wp.Status.Conditions, rollout: wp.Status.Rollout,
		observed: wp.Status.ObservedGeneration, database: wp.MySQLName(), restore: wp.Status.Restore,
	}
}
