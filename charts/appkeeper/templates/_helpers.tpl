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

{{/* The ServiceAccount the manager runs as, which every binding of the chart names. */}}
{{- define "appkeeper.serviceAccountName" -}}
{{ .Values.serviceAccount.name }}
{{- end }}

{{/*
The manager pods' labels: the selector's, then podLabels. The schema refuses a podLabel that
would replace a selector label; this skips one all the same, so the Deployment always selects its pods.
*/}}
{{- define "appkeeper.podLabels" -}}
{{- $selector := include "appkeeper.selectorLabels" . | fromYaml }}
{{- include "appkeeper.selectorLabels" . }}
{{- range $name, $value := .Values.podLabels }}
{{- if not (hasKey $selector $name) }}
{{ $name }}: {{ $value | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* The manager pods' annotations: the chart's, then podAnnotations, which cannot replace them. */}}
{{- define "appkeeper.podAnnotations" -}}
kubectl.kubernetes.io/default-container: manager
{{- range $name, $value := .Values.podAnnotations }}
{{- if ne $name "kubectl.kubernetes.io/default-container" }}
{{ $name }}: {{ $value | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* The pod's securityContext when podSecurityContext is empty: what the restricted Pod Security Standard asks. */}}
{{- define "appkeeper.podSecurityContext" -}}
runAsNonRoot: true
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* The container's securityContext when containerSecurityContext is empty: restricted, with a read-only root. */}}
{{- define "appkeeper.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end }}
