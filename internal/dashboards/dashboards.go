// Package dashboards builds appkeeper's Grafana dashboards from the operator's metrics: an overview
// of every instance and of the operator, and one dashboard per kind. "make sync-manifests" writes
// them as JSON into config/grafana and the Helm chart; Queries lists their PromQL for tests that
// run it against a real Prometheus.
package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// Dashboard is one dashboard, ready to write to a file.
type Dashboard struct {
	// UID is the dashboard's fixed identifier in Grafana, which links and bookmarks keep.
	UID string
	// JSON is the dashboard's model, as Grafana imports it.
	JSON  []byte
	model dashboard.Dashboard
}

// FileName is the file the dashboard is written to.
func (d Dashboard) FileName() string {
	return d.UID + ".json"
}

// ConfigMapName is the name of the ConfigMap that ships the dashboard, in config/grafana as in the
// Helm chart.
func (d Dashboard) ConfigMapName() string {
	return "appkeeper-dashboard-" + strings.TrimPrefix(d.UID, "appkeeper-")
}

// All returns the overview, then one dashboard per kind.
func All() ([]Dashboard, error) {
	builders := []*dashboard.DashboardBuilder{overview()}
	for _, k := range kinds {
		builders = append(builders, kindDashboard(k))
	}
	out := make([]Dashboard, 0, len(builders))
	for _, b := range builders {
		model, err := b.Build()
		if err != nil {
			return nil, err
		}
		numberPanels(&model)
		data, err := marshal(model)
		if err != nil {
			return nil, fmt.Errorf("dashboard %s: %w", *model.Uid, err)
		}
		out = append(out, Dashboard{UID: *model.Uid, JSON: data, model: model})
	}
	return out, nil
}

// numberPanels gives every panel and row an id of its own, which Grafana's links to a single
// panel (viewPanel=<id>) need to stay stable.
func numberPanels(model *dashboard.Dashboard) {
	id := uint32(1)
	for _, p := range model.Panels {
		switch {
		case p.Panel != nil:
			p.Panel.Id = cog.ToPtr(id)
		case p.RowPanel != nil:
			p.RowPanel.Id = id
		}
		id++
	}
}

// marshal writes the model as indented JSON without escaping <, > and &, which PromQL uses.
func marshal(model dashboard.Dashboard) ([]byte, error) {
	var buf bytes.Buffer
	encoder := json.NewEncoder(&buf)
	encoder.SetEscapeHTML(false)
	encoder.SetIndent("", "  ")
	if err := encoder.Encode(model); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
