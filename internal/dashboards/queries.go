package dashboards

import (
	"fmt"
	"regexp"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

// Query is one PromQL query of a dashboard's panel.
type Query struct {
	// Dashboard is the dashboard's UID, Panel the panel's title, RefID the query's letter in it.
	Dashboard, Panel, RefID string
	// Template is the query as the dashboard holds it, with Grafana's variables.
	Template string
	// Expr is Template as Grafana sends it to Prometheus with every variable on "All": each
	// dashboard variable replaced by the regular expression .* and $__rate_interval by 5m.
	Expr string
	// Instant: Grafana evaluates the query once, at the end of the time range, rather than over it.
	Instant bool
}

// allValues replaces each variable the dashboards use in a query, as Grafana would with every
// variable on "All" and a scrape interval of a minute or less.
var allValues = map[string]string{
	varNamespace:         ".*",
	varKind:              ".*",
	varName:              ".*",
	varJob:               ".*",
	"__rate_interval":    "5m",
	"__range":            "6h",
	"__interval":         "1m",
	"__range_s":          "21600",
	"__interval_ms":      "60000",
	"__rate_interval_ms": "300000",
}

// variableRef matches $name and ${name} in a query.
var variableRef = regexp.MustCompile(`\$(\w+)|\$\{(\w+)\}`)

// Queries returns every panel query of every dashboard, the variables substituted.
func Queries() ([]Query, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	var out []Query
	for _, d := range all {
		for _, p := range d.model.Panels {
			if p.Panel == nil {
				continue
			}
			queries, err := panelQueries(d.UID, p.Panel)
			if err != nil {
				return nil, err
			}
			out = append(out, queries...)
		}
	}
	return out, nil
}

func panelQueries(uid string, panel *dashboard.Panel) ([]Query, error) {
	var out []Query
	title := ""
	if panel.Title != nil {
		title = *panel.Title
	}
	for _, target := range panel.Targets {
		q, ok := target.(prometheus.Dataquery)
		if !ok {
			return nil, fmt.Errorf("dashboard %s, panel %q: a %T query, want Prometheus", uid, title, target)
		}
		expr, err := substitute(q.Expr)
		if err != nil {
			return nil, fmt.Errorf("dashboard %s, panel %q: %w", uid, title, err)
		}
		out = append(out, Query{
			Dashboard: uid, Panel: title, RefID: deref(q.RefId),
			Template: q.Expr, Expr: expr, Instant: q.Instant != nil && *q.Instant,
		})
	}
	return out, nil
}

// substitute replaces the variables of a query by the values of allValues; it fails on any other.
func substitute(expr string) (string, error) {
	var unknown []string
	out := variableRef.ReplaceAllStringFunc(expr, func(ref string) string {
		m := variableRef.FindStringSubmatch(ref)
		name := m[1] + m[2]
		value, ok := allValues[name]
		if !ok {
			unknown = append(unknown, name)
		}
		return value
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("unknown variables %v in %s", unknown, expr)
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
