package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

// Variable names the queries refer to as $name.
const (
	varDatasource = "datasource"
	varJob        = "job"
	varNamespace  = "namespace"
	varKind       = "kind"
	varName       = "name"
)

// defaultJob is the scrape job of the operator's metrics when Prometheus follows the chart's
// ServiceMonitor or the kustomize install: Prometheus names a ServiceMonitor's job after the Service.
const defaultJob = "appkeeper-metrics"

// Units Grafana knows by these names.
const (
	unitSeconds = "s"
	unitBytes   = "bytes"
	unitRatio   = "percentunit"
	unitCount   = "short"
	unitPerSec  = "ops"
)

// Grafana's colors by name.
const (
	green  = "green"
	red    = "red"
	orange = "orange"
	blue   = "blue"
	grey   = "text"
)

// datasource is the data source every panel and variable queries: the one picked in the
// dashboard's data source variable.
func datasource() common.DataSourceRef {
	return common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${" + varDatasource + "}")}
}

// query is a Prometheus query drawn over the dashboard's time range; legend names each series.
func query(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Datasource(datasource()).Expr(expr).LegendFormat(legend).Range()
}

// tableQuery is a Prometheus query evaluated once at the end of the time range, one row a series.
func tableQuery(expr string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Datasource(datasource()).Expr(expr).
		Format(prometheus.PromQueryFormatTable).Instant()
}

// datasourceVariable lets the viewer pick which Prometheus the dashboard reads.
func datasourceVariable() *dashboard.DatasourceVariableBuilder {
	return dashboard.NewDatasourceVariableBuilder(varDatasource).Label("Data source").Type("prometheus")
}

// jobVariable is the scrape job of the operator, for controller-runtime's metrics, which every
// controller-runtime operator a Prometheus scrapes also serves.
func jobVariable() *dashboard.TextBoxVariableBuilder {
	return dashboard.NewTextBoxVariableBuilder(varJob).
		Label("Operator job").
		Description("The Prometheus job that scrapes the appkeeper operator (a regular expression).").
		DefaultValue(dashboard.StringOrMap{String: cog.ToPtr(defaultJob)}).
		Current(dashboard.VariableOption{
			Text:  dashboard.StringOrArrayOfString{String: cog.ToPtr(defaultJob)},
			Value: dashboard.StringOrArrayOfString{String: cog.ToPtr(defaultJob)},
		})
}

// labelVariable offers the values of label on the series of appkeeper_resource_condition that
// selector picks, several at once or all.
func labelVariable(name, label, selector string) *dashboard.QueryVariableBuilder {
	definition := "label_values(appkeeper_resource_condition" + selector + ", " + name + ")"
	return dashboard.NewQueryVariableBuilder(name).
		Label(label).
		Datasource(datasource()).
		Query(dashboard.StringOrMap{String: cog.ToPtr(definition)}).
		Definition(definition).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(true).
		IncludeAll(true).
		AllValue(".*").
		Current(dashboard.VariableOption{
			Text:  dashboard.StringOrArrayOfString{String: cog.ToPtr("All")},
			Value: dashboard.StringOrArrayOfString{String: cog.ToPtr("$__all")},
		})
}

// newDashboard starts a dashboard with what every appkeeper dashboard shares.
func newDashboard(uid, title, description string) *dashboard.DashboardBuilder {
	return dashboard.NewDashboardBuilder(title).
		Uid(uid).
		Description(description).
		Tags([]string{"appkeeper"}).
		Editable().
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Refresh("1m").
		Time("now-6h", "now").
		Timezone(common.TimeZoneBrowser).
		// Every appkeeper dashboard, a click away, on the same time range and namespaces.
		Link(dashboard.NewDashboardLinkBuilder("appkeeper").
			Type(dashboard.DashboardLinkTypeDashboards).
			Tags([]string{"appkeeper"}).
			AsDropdown(true).
			KeepTime(true).
			IncludeVars(true)).
		WithVariable(datasourceVariable())
}

// thresholds colors a value by the first step it reaches; base is the color below every step.
func thresholds(base string, steps ...threshold) *dashboard.ThresholdsConfigBuilder {
	out := []dashboard.Threshold{{Color: base}}
	for _, s := range steps {
		out = append(out, dashboard.Threshold{Value: cog.ToPtr(s.from), Color: s.color})
	}
	return dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).Steps(out)
}

type threshold struct {
	from  float64
	color string
}

// valueNames shows values as words in their colors, e.g. 1 as "True" in green.
func valueNames(names ...valueName) []dashboard.ValueMapping {
	options := map[string]dashboard.ValueMappingResult{}
	for i, n := range names {
		options[n.value] = dashboard.ValueMappingResult{
			Text: cog.ToPtr(n.text), Color: cog.ToPtr(n.color), Index: cog.ToPtr(int32(i)),
		}
	}
	return []dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{Type: dashboard.MappingTypeValueToText, Options: options}}}
}

type valueName struct {
	value, text, color string
}

// tableColumns shows a table's labels and its value, named valueColumn, and drops the time, which
// is the same on every row of an instant query.
func tableColumns(valueColumn string) dashboard.DataTransformerConfig {
	return dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
		"excludeByName": map[string]bool{"Time": true},
		"renameByName":  map[string]string{"Value": valueColumn},
		"indexByName":   map[string]int{"kind": 0, "namespace": 1, "name": 2},
	}}
}
