{{/* The services, each one Deployment running `baton serve <service>`. */}}
{{- define "baton.services" -}}
gateway registry engine evidence scheduler notifier
{{- end -}}

{{- define "baton.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's full name: the release name, with the chart's unless it already contains it. */}}
{{- define "baton.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "baton.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "baton.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "baton.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every object; `component` (a service, or migrate) is added where one applies. */}}
{{- define "baton.labels" -}}
helm.sh/chart: {{ include "baton.chart" .root }}
{{ include "baton.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: baton
{{- end -}}

{{- define "baton.selectorLabels" -}}
app.kubernetes.io/name: {{ include "baton.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- if .component }}
app.kubernetes.io/component: {{ .component }}
{{- end }}
{{- end -}}

{{- define "baton.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "baton.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "baton.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The gateway's public base URL: publicUrl, else its Service inside the cluster. */}}
{{- define "baton.publicUrl" -}}
{{- if .Values.publicUrl -}}
{{- .Values.publicUrl | trimSuffix "/" -}}
{{- else -}}
{{- printf "http://%s-gateway.%s.svc:%v" (include "baton.fullname" .) .Release.Namespace .Values.gateway.service.port -}}
{{- end -}}
{{- end -}}

{{/* An environment variable read from the release's Secret. */}}
{{- define "baton.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .root.Values.existingSecret }}
      key: {{ .key }}
      {{- if .optional }}
      optional: true
      {{- end }}
{{- end -}}

{{/*
The environment of one command (a service, or migrate): exactly the variables its configuration schema
declares (docs/configuration.md), from the values. test/unit/deploy-env.test.ts renders the chart and
checks every variable against the schemas, so this table and the code cannot drift apart.
Called with (dict "root" $ "component" "<service>").
*/}}
{{- define "baton.env" -}}
{{- $v := .root.Values -}}
{{- $c := .component -}}
{{- if ne $c "gateway" }}
{{ include "baton.secretEnv" (dict "root" .root "name" "DATABASE_URL" "key" $v.secretKeys.databaseUrl) }}
{{- end }}
{{- if ne $c "migrate" }}
- name: NATS_URL
  value: {{ $v.nats.url | quote }}
- name: BATON_NAMESPACE
  value: {{ $v.nats.namespace | quote }}
- name: BATON_LOG_LEVEL
  value: {{ $v.logLevel | quote }}
- name: BATON_OPS_PORT
  value: {{ $v.ops.port | quote }}
{{- end }}
{{- if has $c (list "gateway" "engine") }}
{{ include "baton.secretEnv" (dict "root" .root "name" "BATON_SECRET" "key" $v.secretKeys.secret) }}
- name: BATON_LEASE_SECONDS
  value: {{ $v.leaseSeconds | quote }}
- name: BATON_RUN_DATA_BYTES
  value: {{ $v.runDataBytes | quote }}
{{- end }}
{{- if has $c (list "gateway" "engine" "scheduler") }}
- name: BATON_PARTITIONS
  value: {{ $v.partitions | quote }}
{{- end }}
{{- if has $c (list "engine" "scheduler" "notifier") }}
- name: BATON_REPLICA_ID
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- end }}
{{- if has $c (list "gateway" "notifier") }}
- name: BATON_PUBLIC_URL
  value: {{ include "baton.publicUrl" .root | quote }}
{{- end }}
{{- if has $c (list "gateway" "evidence") }}
{{- if $v.s3.bucket }}
- name: BATON_S3_BUCKET
  value: {{ $v.s3.bucket | quote }}
{{- end }}
- name: AWS_REGION
  value: {{ $v.s3.region | quote }}
{{- if $v.s3.endpoint }}
- name: AWS_ENDPOINT_URL_S3
  value: {{ $v.s3.endpoint | quote }}
{{- end }}
- name: BATON_S3_FORCE_PATH_STYLE
  value: {{ $v.s3.forcePathStyle | quote }}
{{- if $v.s3.publicEndpoint }}
- name: BATON_S3_PUBLIC_ENDPOINT
  value: {{ $v.s3.publicEndpoint | quote }}
{{- end }}
{{ include "baton.secretEnv" (dict "root" .root "name" "AWS_ACCESS_KEY_ID" "key" $v.secretKeys.s3AccessKeyId "optional" true) }}
{{ include "baton.secretEnv" (dict "root" .root "name" "AWS_SECRET_ACCESS_KEY" "key" $v.secretKeys.s3SecretAccessKey "optional" true) }}
{{- end }}
{{- if eq $c "gateway" }}
- name: BATON_PORT
  value: {{ $v.gateway.port | quote }}
{{- if $v.auth.issuer }}
- name: BATON_AUTH_ISSUER
  value: {{ $v.auth.issuer | quote }}
{{- end }}
{{- if $v.auth.jwksUrl }}
- name: BATON_AUTH_JWKS_URL
  value: {{ $v.auth.jwksUrl | quote }}
{{- end }}
{{- if $v.auth.audience }}
- name: BATON_AUTH_AUDIENCE
  value: {{ $v.auth.audience | quote }}
{{- end }}
{{ include "baton.secretEnv" (dict "root" .root "name" "BATON_SECRET_PREVIOUS" "key" $v.secretKeys.secretPrevious "optional" true) }}
{{ include "baton.secretEnv" (dict "root" .root "name" "REDIS_URL" "key" $v.secretKeys.redisUrl "optional" true) }}
{{- end }}
{{- if eq $c "engine" }}
- name: BATON_DB_POOL
  value: {{ $v.engine.dbPool | quote }}
{{- end }}
{{- if eq $c "notifier" }}
{{ include "baton.secretEnv" (dict "root" .root "name" "BATON_SMTP_URL" "key" $v.secretKeys.smtpUrl "optional" true) }}
{{- if $v.notifier.mailFrom }}
- name: BATON_MAIL_FROM
  value: {{ $v.notifier.mailFrom | quote }}
{{- end }}
{{- if $v.notifier.operatorsEmail }}
- name: BATON_OPERATORS_EMAIL
  value: {{ $v.notifier.operatorsEmail | quote }}
{{- end }}
{{- end }}
{{- if ne $c "migrate" }}
{{- range $name, $value := (index $v $c).env }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- end }}
{{- end -}}
