package dashboards

import (
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// series is metric{matchers}: scope, the matchers of the dashboard's variables, then the extra ones.
func series(metric, scope string, extra ...string) string {
	matchers := append([]string{scope}, extra...)
	return metric + "{" + strings.Join(matchers, ", ") + "}"
}

// instanceLegend names a resource's series by its namespace and name.
const instanceLegend = "{{namespace}}/{{name}}"

func timeseriesPanel(title, description, unit string, targets ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().
		Title(title).Description(description).Unit(unit).
		Datasource(datasource()).
		Height(8).Span(12).
		Min(0).
		FillOpacity(10).
		ShowPoints(common.VisibilityModeNever).
		Legend(common.NewVizLegendOptionsBuilder().
			DisplayMode(common.LegendDisplayModeTable).
			Placement(common.LegendPlacementBottom).
			ShowLegend(true).
			Calcs([]string{"lastNotNull", "max"})).
		Tooltip(tooltip(common.TooltipDisplayModeMulti))
	for i, t := range targets {
		p.WithTarget(t.RefId(refID(i)))
	}
	return p
}

func statPanel(title, description, unit string, targets ...*prometheus.DataqueryBuilder) *stat.PanelBuilder {
	p := stat.NewPanelBuilder().
		Title(title).Description(description).Unit(unit).
		Datasource(datasource()).
		Height(5).Span(6).
		GraphMode(common.BigValueGraphModeNone).
		ColorMode(common.BigValueColorModeBackground).
		Orientation(common.VizOrientationAuto).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}).Values(false))
	for i, t := range targets {
		p.WithTarget(t.RefId(refID(i)))
	}
	return p
}

// tablePanel lists the rows of one instant query, its value in a column named valueColumn.
func tablePanel(title, description, unit, valueColumn string, target *prometheus.DataqueryBuilder) *table.PanelBuilder {
	return table.NewPanelBuilder().
		Title(title).Description(description).Unit(unit).
		Datasource(datasource()).
		Height(8).Span(12).
		WithTarget(target.RefId(refID(0))).
		WithTransformation(tableColumns(valueColumn)).
		SortBy([]cog.Builder[common.TableSortByFieldState]{
			common.NewTableSortByFieldStateBuilder().DisplayName(valueColumn).Desc(true),
		}).
		Footer(common.NewTableFooterOptionsBuilder().Show(true).CountRows(true).Reducer([]string{"count"}))
}

// conditionTimeline draws conditions as colored bands over time: the query yields 1 for True, 0
// for False and -1 for Unknown.
func conditionTimeline(title, description, trueColor, falseColor string, target *prometheus.DataqueryBuilder) *statetimeline.PanelBuilder {
	return stateTimeline(title, description, target,
		valueName{"1", "True", trueColor},
		valueName{"0", "False", falseColor},
		valueName{"-1", "Unknown", grey})
}

// stateTimeline draws each series as a band whose color and word follow its value.
func stateTimeline(title, description string, target *prometheus.DataqueryBuilder, states ...valueName) *statetimeline.PanelBuilder {
	return statetimeline.NewPanelBuilder().
		Title(title).Description(description).
		Datasource(datasource()).
		Height(8).Span(24).
		WithTarget(target.RefId(refID(0))).
		ShowValue(common.VisibilityModeNever).
		MergeValues(true).
		AlwaysSpanNulls().
		FillOpacity(80).
		Mappings(valueNames(states...)).
		Tooltip(tooltip(common.TooltipDisplayModeSingle)).
		Legend(common.NewVizLegendOptionsBuilder().
			DisplayMode(common.LegendDisplayModeList).
			Placement(common.LegendPlacementBottom).
			ShowLegend(true))
}

// conditionValue is 1 while each condition conditionMatcher picks is True, 0 while False, -1
// while Unknown.
func conditionValue(scope, conditionMatcher string) string {
	return perCondition(series("appkeeper_resource_condition", scope, conditionMatcher, `status="true"`)) + "\n- " +
		perCondition(series("appkeeper_resource_condition", scope, conditionMatcher, `status="unknown"`))
}

// perInstance keeps one series a resource: every replica of the operator serves the resource
// gauges, which differ only by the scrape target's labels.
func perInstance(expr string) string {
	return "max by (kind, namespace, name) (" + expr + ")"
}

func perCondition(expr string) string {
	return "max by (kind, namespace, name, condition) (" + expr + ")"
}

// refID names a panel's i-th query: A, B, C...
func refID(i int) string {
	return string(rune('A' + i))
}

// tooltip shows the values under the pointer, largest first.
func tooltip(mode common.TooltipDisplayMode) *common.VizTooltipOptionsBuilder {
	return common.NewVizTooltipOptionsBuilder().Mode(mode).Sort(common.SortOrderDescending)
}

func row(title string) *dashboard.RowBuilder {
	return dashboard.NewRowBuilder(title)
}
