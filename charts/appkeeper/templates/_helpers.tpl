{{/* Labels on every object of the release. */}}
{{- define "appkeeper.labels" -}}
app.kubernetes.io/name: appkeeper
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* Labels that select the manager's pods; the same as the kustomize install. */}}
{{- define "appkeeper.selectorLabels" -}}
app.kubernetes.io/name: appkeeper
app.kubernetes.io/component: manager
{{- end }}

{{/* The operator's image: the tag defaults to the chart's appVersion, the version it was released with. */}}
{{- define "appkeeper.image" -}}
{{ printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
