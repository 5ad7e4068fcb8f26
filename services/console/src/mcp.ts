// The console is just another MCP client (issue #16): the SDK's client over Streamable HTTP, with the person's token.
import type { ToolName, ToolResult } from "@baton/protocol";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { writeExactNumbers } from "./exact-number.ts";

/** `fetch` that writes each `ExactNumber` into the JSON body as the number it is. */
const exactFetch: typeof fetch = (input, init) =>
  fetch(
    input,
    init && typeof init.body === "string" ? { ...init, body: writeExactNumbers(init.body) } : init,
  );

/** Thrown when the server refuses the token (401): the person must sign in again. */
export class SignedOut extends Error {}

/**
 * Calls the protocol's tools as the signed-in person. Every answer is the tool's `{ ok, data | error }`;
 * a transport failure is answered as `retry`, and a `retry` answer is sent again with the same
 * arguments (so the same `requestId`) a few times, as §4.3 tells a client to.
 */
export class Baton {
  private client: Promise<Client> | null = null;

  constructor(
    private readonly token: string,
    private readonly endpoint = new URL("/mcp", window.location.origin),
  ) {}

  private connect(): Promise<Client> {
    if (!this.client) {
      const client = new Client(
        { name: "baton-console", version: "1.0.0" },
        // Baton's tools declare no output schema, so nothing needs compiling (ajv would need eval,
        // which the console's Content-Security-Policy forbids).
        {
          jsonSchemaValidator: {
            getValidator: () => (input: unknown) => ({
              valid: true,
              data: input as never,
              errorMessage: undefined,
            }),
          },
        },
      );
      const transport = new StreamableHTTPClientTransport(this.endpoint, {
        requestInit: { headers: { authorization: `Bearer ${this.token}` } },
        fetch: exactFetch,
      });
      this.client = client.connect(transport).then(
        () => client,
        (error: unknown) => {
          this.client = null;
          throw error;
        },
      );
    }
    return this.client;
  }

  /** Calls `tool` with `args`; see the class comment. */
  async call<T>(tool: ToolName, args: Record<string, unknown> = {}): Promise<ToolResult<T>> {
    for (let attempt = 0; ; attempt++) {
      const result = await this.callOnce<T>(tool, args);
      if (result.ok || result.error.code !== "retry" || attempt >= 3) return result;
      await new Promise((r) => setTimeout(r, 300 * (attempt + 1)));
    }
  }

  private async callOnce<T>(tool: ToolName, args: Record<string, unknown>): Promise<ToolResult<T>> {
    try {
      const client = await this.connect();
      const response = await client.callTool({ name: tool, arguments: args });
      const structured = response.structuredContent as ToolResult<T> | undefined;
      if (structured && typeof structured === "object" && "ok" in structured) return structured;
      return { ok: false, error: { code: "retry", message: "the server's answer had no result; try again" } };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (/\b401\b|invalid_token|unauthorized/i.test(message)) throw new SignedOut(message);
      return { ok: false, error: { code: "retry", message: `could not reach the server: ${message}` } };
    }
  }
}
