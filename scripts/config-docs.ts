/**
 * Generates docs/configuration.md from the services' zod config schemas (ARCHITECTURE:
 * "each service's documented in one generated reference"). `pnpm config-docs` writes it; the unit
 * test `config-docs.test.ts` fails when the checked-in file is out of date.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { MigrateConfigSchema } from "../services/cli/src/migrate.ts";
import { EngineConfigSchema } from "../services/engine/src/config.ts";
import { EvidenceConfigSchema } from "../services/evidence/src/config.ts";
import { GatewayConfigSchema } from "../services/gateway/src/config.ts";
import { NotifierConfigSchema } from "../services/notifier/src/config.ts";
import { RegistryConfigSchema } from "../services/registry/src/config.ts";
import { SchedulerConfigSchema } from "../services/scheduler/src/config.ts";

/**
 * Every command that reads its configuration from the environment, by the name the deployment files
 * use for it (`baton serve <name>`, and `baton migrate`), with its schema: the one list the reference
 * and the deployment files' drift test (test/unit/deploy-env.test.ts) read.
 */
export const CONFIG_SCHEMAS = {
  gateway: GatewayConfigSchema,
  registry: RegistryConfigSchema,
  engine: EngineConfigSchema,
  evidence: EvidenceConfigSchema,
  scheduler: SchedulerConfigSchema,
  notifier: NotifierConfigSchema,
  migrate: MigrateConfigSchema,
} as const satisfies Record<string, z.ZodType>;

/** A command of {@link CONFIG_SCHEMAS}. */
export type ConfiguredCommand = keyof typeof CONFIG_SCHEMAS;

/** The JSON Schema (input side) of a command's environment: its variables, required ones, defaults. */
export function envJsonSchema(schema: z.ZodType): {
  properties: Record<string, { description?: string; default?: unknown }>;
  required?: string[];
  description?: string;
} {
  return z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as ReturnType<typeof envJsonSchema>;
}

/** The Markdown reference. */
export function configReference(): string {
  const lines = [
    "# Configuration",
    "",
    "Generated from the services' configuration schemas by `pnpm config-docs`; do not edit by hand.",
    "Each service reads only its environment, once at start, and lists every problem before exiting.",
    "",
  ];
  for (const [name, schema] of Object.entries(CONFIG_SCHEMAS)) {
    const json = envJsonSchema(schema);
    lines.push(name === "migrate" ? "## `baton migrate`" : `## \`baton serve ${name}\``, "");
    if (json.description) lines.push(json.description, "");
    lines.push("| variable | required | default | meaning |", "|---|---|---|---|");
    for (const [key, prop] of Object.entries(json.properties)) {
      const required = json.required?.includes(key) && prop.default === undefined ? "yes" : "no";
      const def = prop.default === undefined ? "" : `\`${String(prop.default)}\``;
      lines.push(`| \`${key}\` | ${required} | ${def} | ${(prop.description ?? "").replace(/\|/g, "\\|")} |`);
    }
    lines.push("");
  }
  return lines.join("\n");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(new URL("../docs/configuration.md", import.meta.url), configReference());
}
