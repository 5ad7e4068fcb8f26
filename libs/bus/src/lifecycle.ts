import type { z } from "zod";

/**
 * Parses the environment with a service's schema; on failure prints every problem and exits 2
 * (CONVENTIONS: "on failure it lists every problem and exits"). Secrets are never printed.
 */
export function parseEnv<S extends z.ZodType>(
  schema: S,
  env: NodeJS.ProcessEnv,
  service: string,
): z.infer<S> {
  const parsed = schema.safeParse(env, { reportInput: true });
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((i) => {
    const missing = i.code === "invalid_type" && i.input === undefined;
    // Never print a value: an environment holds secrets.
    return `  ${i.path.join(".") || "environment"}: ${missing ? "required" : i.message.replace(/, received .*/, "")}`;
  });
  process.stderr.write(`baton serve ${service}: the environment is not usable:\n${lines.join("\n")}\n`);
  process.exit(2);
}

/** Resolves on the first SIGINT or SIGTERM. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const done = (signal: NodeJS.Signals) => {
      process.off("SIGINT", done);
      process.off("SIGTERM", done);
      resolve(signal);
    };
    process.on("SIGINT", done);
    process.on("SIGTERM", done);
  });
}
