import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { CONFIG_SCHEMAS, envJsonSchema } from "../../scripts/config-docs.ts";
import { REPO } from "../support/deploy.ts";
import {
  type Command,
  composeServices,
  containerEnv,
  type EnvSource,
  renderChart,
  workloadCommand,
} from "../support/deploy-files.ts";

/**
 * Issue #13 ("what can be proven here"): the deployment files and the code cannot drift apart. Every
 * environment variable docker-compose.yml and the Helm chart set for a command is one that command's
 * configuration schema declares (the schemas `baton serve <service>` and `baton migrate` parse, the
 * same ones docs/configuration.md is generated from), and the environment they give parses: every
 * required variable is set, every value is of the right form.
 */

/** The variables a command's schema declares, read from the code. */
const declared = (command: Command) =>
  new Set(Object.keys(envJsonSchema(CONFIG_SCHEMAS[command]).properties));

/**
 * Variables the operations half of issue #13 (branch i13-ops) adds to every service's schema. The
 * deployment files set them already; until the schemas declare them they are let through here, and
 * from the moment any schema declares one it is checked like every other.
 */
const FROM_OPS_BRANCH = ["BATON_OPS_PORT"];
const declaredAnywhere = new Set((Object.keys(CONFIG_SCHEMAS) as Command[]).flatMap((c) => [...declared(c)]));
const pendingFromOps = FROM_OPS_BRANCH.filter((v) => !declaredAnywhere.has(v));

/** The variables of `env` that `command` does not declare. */
function undeclared(command: Command, names: string[]): string[] {
  const known = declared(command);
  return names.filter((n) => !known.has(n) && !pendingFromOps.includes(n));
}

/** The issues of parsing `env` with `command`'s schema, as `VARIABLE: message`. */
function problems(command: Command, env: Record<string, string>): string[] {
  const parsed = (CONFIG_SCHEMAS[command] as z.ZodType).safeParse(env);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
}

/** Variables whose values are secrets: the chart takes them from a Secret, never from values. */
const SECRETS = [
  "DATABASE_URL",
  "BATON_SECRET",
  "BATON_SECRET_PREVIOUS",
  "REDIS_URL",
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "BATON_SMTP_URL",
];

/** What a Secret's key holds in a running cluster, for parsing (the test has no cluster to read). */
const SECRET_SAMPLES: Record<string, string> = {
  DATABASE_URL: "postgres://baton:secret@db.example.com:5432/baton",
  BATON_SECRET: "0123456789abcdef0123456789abcdef",
};

/**
 * A rendered container's environment as the process would see it: values as they are, a required
 * Secret key as a sample of its kind, an optional one absent (the worst case), a field reference as a
 * pod name.
 */
function resolved(env: Record<string, EnvSource>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, source] of Object.entries(env)) {
    if ("value" in source) out[name] = source.value;
    else if ("field" in source) out[name] = "baton-engine-5d8f9c7b6-x2x7q";
    else if (!source.secret.optional) {
      const sample = SECRET_SAMPLES[name];
      if (sample === undefined) throw new Error(`no sample for the required secret ${name}`);
      out[name] = sample;
    }
  }
  return out;
}

describe("docker-compose.yml sets what the services read (issue #13)", () => {
  const services = composeServices();
  const baton = services.filter((s) => s.command !== null);

  it("runs the migration and every service: gateway, registry, two engines, scheduler, evidence, notifier", () => {
    expect(baton.map((s) => s.command).sort()).toEqual(
      ["evidence", "engine", "engine", "gateway", "migrate", "notifier", "registry", "scheduler"].sort(),
    );
  });

  it.each(
    composeServices()
      .filter((s) => s.command !== null)
      .map((s) => [s.name, s] as const),
  )("%s: every variable is declared by its schema and the environment parses", (_name, service) => {
    const command = service.command as Command;
    expect(undeclared(command, Object.keys(service.environment))).toEqual([]);
    expect(problems(command, service.environment)).toEqual([]);
  });

  it("settings that must be equal on every service are equal (BATON_SECRET, BATON_PARTITIONS, BATON_NAMESPACE, DATABASE_URL)", () => {
    for (const name of ["BATON_SECRET", "BATON_PARTITIONS", "BATON_NAMESPACE", "DATABASE_URL", "NATS_URL"]) {
      const values = new Set(baton.filter((s) => name in s.environment).map((s) => s.environment[name]));
      expect(values.size, name).toBe(1);
    }
  });
});

describe("the Helm chart sets what the services read (issue #13)", () => {
  const rendered = {
    defaults: renderChart(),
    production: renderChart([join(REPO, "helm/baton/ci/production-values.yaml")]),
  };
  const workloads = (objects: typeof rendered.defaults) =>
    objects.filter((o) => o.kind === "Deployment" || o.kind === "Job");

  it.each(Object.entries(rendered))(
    "%s values: a Deployment per service and the migration Job, each setting only declared variables, secrets only by reference",
    (_label, objects) => {
      const found = workloads(objects).map((o) => workloadCommand(o));
      expect(found.sort()).toEqual(
        ["engine", "evidence", "gateway", "migrate", "notifier", "registry", "scheduler"].sort(),
      );
      for (const workload of workloads(objects)) {
        const command = workloadCommand(workload) as Command;
        const env = containerEnv(workload.spec.template.spec.containers[0]);
        expect(undeclared(command, Object.keys(env)), workload.metadata.name).toEqual([]);
        for (const name of SECRETS.filter((n) => n in env))
          expect(env[name], `${workload.metadata.name} ${name}`).toHaveProperty("secret");
      }
    },
  );

  it("production-like values: every service's environment parses, required variables included", () => {
    for (const workload of workloads(rendered.production)) {
      const command = workloadCommand(workload) as Command;
      const env = resolved(containerEnv(workload.spec.template.spec.containers[0]));
      expect(problems(command, env), workload.metadata.name).toEqual([]);
    }
  });

  it("default values: everything parses but the two endpoints only the user can name, the identity provider and the bucket", () => {
    const byCommand = Object.fromEntries(
      workloads(rendered.defaults).map((w) => [
        workloadCommand(w),
        problems(workloadCommand(w) as Command, resolved(containerEnv(w.spec.template.spec.containers[0]))),
      ]),
    );
    expect(byCommand).toEqual({
      gateway: [
        "BATON_AUTH_JWKS_URL: set BATON_AUTH_ISSUER and BATON_AUTH_JWKS_URL, or BATON_DEV_ISSUER_FILE",
        "BATON_S3_BUCKET: set BATON_S3_BUCKET (an S3 bucket) or BATON_BLOB_DIR (a directory, single host)",
      ],
      evidence: [
        "BATON_S3_BUCKET: set BATON_S3_BUCKET (an S3 bucket) or BATON_BLOB_DIR (a directory, single host)",
      ],
      registry: [],
      engine: [],
      scheduler: [],
      notifier: [],
      migrate: [],
    });
  });

  it("settings that must be equal on every service are equal (BATON_SECRET, BATON_PARTITIONS, BATON_NAMESPACE, DATABASE_URL)", () => {
    for (const objects of Object.values(rendered)) {
      const envs = workloads(objects).map((w) => containerEnv(w.spec.template.spec.containers[0]));
      for (const name of [
        "BATON_SECRET",
        "BATON_PARTITIONS",
        "BATON_NAMESPACE",
        "DATABASE_URL",
        "NATS_URL",
      ]) {
        const values = new Set(envs.filter((e) => name in e).map((e) => JSON.stringify(e[name])));
        expect(values.size, name).toBe(1);
      }
    }
  });
});
