/**
 * `pnpm build [--out DIR] [--install] [--offline]`: Baton compiled to JavaScript, the tree the image
 * runs (deploy/Dockerfile) and `test/integration/build-output.test.ts` proves (issue #13 item 1).
 *
 * DIR (default `dist/`) gets the repository's layout with JavaScript in place of TypeScript:
 * `libs/<name>/src/*.js` and `services/<name>/src/*.js` (tsc with `tsconfig.build.json`, relative
 * imports rewritten from `.ts` to `.js`), each workspace package's `package.json` with its exports
 * pointing at the `.js` files and no scripts, the migrations (`libs/db/drizzle`), the web console's
 * static build (`services/console/dist`, built first when its sources changed), the sample processes
 * (`fixtures/`), and the workspace's manifest, `pnpm-workspace.yaml` and `pnpm-lock.yaml` unchanged, so
 * `pnpm install --prod --frozen-lockfile` there installs exactly the locked production dependencies
 * and links the workspace packages to one another. Then
 *
 *     node DIR/services/cli/src/main.js serve <service>
 *
 * runs a service with Node alone: no `tsx`, no `typescript`. `--install` runs that install in DIR
 * (`--offline`: from the pnpm store only). `baton dev` is not part of the build: it builds the console
 * and runs from a clone (`pnpm baton dev`).
 *
 * Exits non-zero when the compiler reports an error or the install fails.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** The workspace packages, as `libs/<name>` and `services/<name>` paths relative to the root. */
export function workspacePackages(root = ROOT): string[] {
  return ["libs", "services"].flatMap((dir) =>
    readdirSync(join(root, dir), { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(root, dir, d.name, "package.json")))
      .map((d) => `${dir}/${d.name}`)
      .sort(),
  );
}

type Exports = string | { [condition: string]: Exports };

/** An `exports` map with every `.ts` target pointing at the compiled `.js` file. */
function compiledExports(exports: Exports): Exports {
  if (typeof exports === "string") return exports.replace(/\.ts$/, ".js");
  return Object.fromEntries(Object.entries(exports).map(([k, v]) => [k, compiledExports(v)]));
}

/** A package manifest for the build: no scripts, exports at the JavaScript (`keepExports` false: none). */
function compiledManifest(manifest: Record<string, unknown>, keepExports = true): Record<string, unknown> {
  const { scripts: _scripts, exports, ...rest } = manifest;
  return keepExports && exports ? { ...rest, exports: compiledExports(exports as Exports) } : rest;
}

function runOrExit(command: string, args: string[], cwd: string, what: string): void {
  const result = spawnSync(command, args, { cwd, stdio: "inherit" });
  if (result.status !== 0) {
    process.stderr.write(`build: ${what} failed (${result.error?.message ?? `exit ${result.status}`})\n`);
    process.exit(1);
  }
}

/** How to run pnpm here: `pnpm` on the PATH, else the version the manifest names, through npx. */
export function pnpmCommand(root = ROOT): [string, string[]] {
  if (spawnSync("pnpm", ["--version"], { stdio: "ignore" }).status === 0) return ["pnpm", []];
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { packageManager: string };
  return ["npx", ["-y", manifest.packageManager]];
}

/** Options of {@link build}. */
export interface BuildOptions {
  /** Output directory; emptied first. */
  out: string;
  /** Install the production dependencies in `out` (`pnpm install --prod --frozen-lockfile`). */
  install?: boolean;
  /** With `install`: from the pnpm store only, never the registry. */
  offline?: boolean;
}

/** Builds Baton into `options.out` (see the file's comment); exits the process on a failure. */
export async function build(options: BuildOptions): Promise<void> {
  const out = resolve(options.out);
  // The output is emptied first: never the repository or a folder holding it.
  if (`${resolve(ROOT)}${sep}`.startsWith(`${out}${sep}`) || out === resolve(ROOT))
    throw new Error(`build: --out ${out} holds the repository; name a folder of its own`);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });

  // The console's static files, built by Vite when its sources changed (a devDependency, here only).
  const { ensureConsoleBuilt, CONSOLE_DIST } = await import("../services/console/build.ts");
  await ensureConsoleBuilt((m) => process.stdout.write(`build: ${m}\n`));

  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  runOrExit(
    process.execPath,
    [tsc, "-p", join(ROOT, "tsconfig.build.json"), "--outDir", out],
    ROOT,
    "tsc (tsconfig.build.json)",
  );

  const copy = (from: string, to = from) => cpSync(join(ROOT, from), join(out, to), { recursive: true });
  copy("libs/db/drizzle");
  cpSync(CONSOLE_DIST, join(out, "services/console/dist"), { recursive: true });
  copy("fixtures");
  copy("pnpm-lock.yaml");
  copy("pnpm-workspace.yaml");
  const rootManifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  writeFileSync(join(out, "package.json"), `${JSON.stringify(compiledManifest(rootManifest), null, 2)}\n`);
  for (const pkg of workspacePackages()) {
    const manifest = JSON.parse(readFileSync(join(ROOT, pkg, "package.json"), "utf8"));
    // The console's export is its Vite build step, which only `baton dev` (a clone) runs.
    const keepExports = pkg !== "services/console";
    mkdirSync(join(out, pkg), { recursive: true });
    writeFileSync(
      join(out, pkg, "package.json"),
      `${JSON.stringify(compiledManifest(manifest, keepExports), null, 2)}\n`,
    );
  }
  process.stdout.write(`build: compiled into ${out}\n`);

  if (options.install) {
    const [command, prefix] = pnpmCommand();
    runOrExit(
      command,
      [
        ...prefix,
        "install",
        "--prod",
        "--frozen-lockfile",
        "--ignore-scripts",
        "--config.confirmModulesPurge=false",
        ...(options.offline ? ["--offline"] : []),
      ],
      out,
      "pnpm install --prod",
    );
    process.stdout.write(`build: production dependencies installed in ${out}\n`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: {
      out: { type: "string", default: join(ROOT, "dist") },
      install: { type: "boolean", default: false },
      offline: { type: "boolean", default: false },
    },
  });
  await build({ out: values.out, install: values.install, offline: values.offline }).catch((error: Error) => {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  });
}
