import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Builds the console to static files (issue #16) and says whether a build is current, so a fresh clone
 * serves it without built files in git: the workspace's `prepare` script builds it during
 * `pnpm install`, and `baton dev` builds it on start when the sources changed since (or when install
 * scripts were skipped). The gateway only serves the folder; it never builds.
 */

const ROOT = fileURLToPath(new URL(".", import.meta.url));

/** The build's folder, served by the gateway at `/ui/` (its default `BATON_CONSOLE_DIR`). */
export const CONSOLE_DIST = join(ROOT, "dist");

/** Written into the build: the hash of the sources it was built from. */
const STAMP = ".source-hash";

const INPUTS = ["src", "index.html", "vite.config.ts", "package.json"];

function files(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => files(join(path, name)));
}

/** SHA-256 (hex) over the console's sources: every file of `src/`, `index.html`, the Vite config, the manifest. */
export function sourceHash(): string {
  const hash = createHash("sha256");
  for (const input of INPUTS) {
    for (const file of files(join(ROOT, input))) {
      if (file.endsWith(".test.ts")) continue;
      hash.update(relative(ROOT, file)).update("\0").update(readFileSync(file)).update("\0");
    }
  }
  return hash.digest("hex");
}

/** Whether `dir` holds a build of the current sources. */
export function isBuilt(dir = CONSOLE_DIST): boolean {
  const stamp = join(dir, STAMP);
  return (
    existsSync(join(dir, "index.html")) &&
    existsSync(stamp) &&
    readFileSync(stamp, "utf8").trim() === sourceHash()
  );
}

/**
 * Builds into a fresh folder and moves it into place, so a server reading the old build never sees a
 * half-written one. Concurrent builds (two `baton dev` starting at once) each finish; the last move wins.
 */
export async function buildConsole(): Promise<void> {
  const { build } = await import("vite");
  const hash = sourceHash();
  const staging = join(ROOT, `.dist-${process.pid}-${Date.now()}`);
  try {
    await build({
      configFile: join(ROOT, "vite.config.ts"),
      build: { outDir: staging, emptyOutDir: true },
    });
    writeFileSync(join(staging, STAMP), `${hash}\n`);
    const old = join(ROOT, `.dist-old-${process.pid}-${Date.now()}`);
    if (existsSync(CONSOLE_DIST)) renameSync(CONSOLE_DIST, old);
    try {
      renameSync(staging, CONSOLE_DIST);
    } catch (error) {
      // Another build moved in first; keep its result.
      if (!existsSync(CONSOLE_DIST)) throw error;
    }
    rmSync(old, { recursive: true, force: true });
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Builds the console unless `dir` already holds a build of the current sources. Returns whether it
 * built. `note` is told before a build starts (it takes a few seconds).
 */
export async function ensureConsoleBuilt(note: (message: string) => void = () => {}): Promise<boolean> {
  if (isBuilt()) return false;
  note("building the web console (services/console) …");
  mkdirSync(ROOT, { recursive: true });
  await buildConsole();
  return true;
}

// `tsx build.ts [--force]`: the workspace's prepare step and the package's `build` script.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const force = process.argv.includes("--force");
  const started = Date.now();
  let built = true;
  if (force) await buildConsole();
  else built = await ensureConsoleBuilt();
  process.stdout.write(
    built
      ? `console built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`
      : "console build is current\n",
  );
}
