// Serves the web console's built files at /ui/ (issue #16), by path: the gateway imports no console code.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance } from "fastify";

/** Where the console's build is in this repository (`services/console/dist`), the default `BATON_CONSOLE_DIR`. */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL("../../console/dist/", import.meta.url));

/**
 * The console's Content-Security-Policy: its own scripts, styles, images and API calls only. No inline
 * script or style, no eval, no other host, no frames, no plugins, no form posts, no `<base>`.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

const HEADERS: Record<string, string> = {
  "Content-Security-Policy": CONSOLE_CSP,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
  "X-Frame-Options": "DENY",
};

/**
 * Registers `GET /ui/…`: the files of `dir` (a Vite build), `index.html` for `/ui/`, every answer with
 * {@link CONSOLE_CSP}. Hashed assets are cached for a year; `index.html` is revalidated each time, so
 * a new build is picked up without a restart. When `dir` holds no build, `/ui/` answers 503 saying
 * how to build one. `/ui` redirects to `/ui/`.
 */
export async function registerConsole(app: FastifyInstance, dir: string): Promise<void> {
  const index = join(dir, "index.html");
  await app.register(async (scope) => {
    scope.addHook("onRequest", async (_request, reply) => {
      reply.headers(HEADERS);
      if (!existsSync(index)) {
        return reply
          .code(503)
          .type("text/plain; charset=utf-8")
          .send(
            "The web console is not built. Run `pnpm install` (it builds it) or `pnpm --filter @baton/console build`, then reload.\n",
          );
      }
    });
    await scope.register(fastifyStatic, {
      root: dir,
      prefix: "/ui/",
      decorateReply: false,
      index: ["index.html"],
      dotfiles: "deny",
      cacheControl: false,
      setHeaders(reply, path) {
        // Vite names every asset by its content hash; index.html names the current ones.
        reply.header(
          "Cache-Control",
          /[\\/]assets[\\/]/.test(path) ? "public, max-age=31536000, immutable" : "no-cache",
        );
      },
    });
    scope.get("/ui", async (_request, reply) => reply.redirect("/ui/", 301));
  });
}
