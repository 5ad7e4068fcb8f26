import { describe, expect, it } from "vitest";
import { argumentProblems, MAX_ARGUMENT_DEPTH, parseBody } from "./body.ts";

const call = (args: string) =>
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"start_run","arguments":${args}}}`;
const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;

describe("parseBody (ARCHITECTURE: numbers are never rounded; bad input never hurts the server)", () => {
  it("reads plain JSON and keeps numbers exact", () => {
    const body = parseBody(call('{"inputs":{"amount":84.5,"n":9007199254740991}}'));
    expect(body.kind).toBe("json");
    if (body.kind !== "json") return;
    expect((body.value as { params: { arguments: unknown } }).params.arguments).toEqual({
      inputs: { amount: 84.5, n: 9007199254740991 },
    });
    expect(body.problems).toEqual([]);
  });

  it("reports every number JSON cannot hold exactly, with its path under the arguments (§2.3 MUST NOT round)", () => {
    const body = parseBody(call('{"inputs":{"a":9007199254740993,"b":[1,0.1000000000000000000001]}}'));
    expect(argumentProblems(body).map((p) => p.path)).toEqual(["inputs.a", "inputs.b[1]"]);
    expect(argumentProblems(body)[0]?.problem).toMatch(/9007199254740993.*never rounded/);
  });

  it(`refuses arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels as a problem of the call`, () => {
    expect(argumentProblems(parseBody(call(nested(MAX_ARGUMENT_DEPTH))))).toEqual([]);
    const deep = argumentProblems(parseBody(call(nested(MAX_ARGUMENT_DEPTH + 1))));
    expect(deep).toHaveLength(1);
    expect(deep[0]?.problem).toMatch(/nests deeper than 64 levels/);
  });

  it("answers absurd nesting, batches and malformed JSON with JSON-RPC errors without parsing recursively", () => {
    expect(parseBody(call(nested(100_000)))).toMatchObject({ kind: "error", code: -32600 });
    expect(parseBody(`[${call("{}")}]`)).toMatchObject({
      kind: "error",
      code: -32600,
      message: expect.stringContaining("batches"),
    });
    expect(parseBody('{"a":1,')).toMatchObject({ kind: "error", code: -32700 });
    expect(parseBody('{"a":1,"a":2}')).toMatchObject({ kind: "error", code: -32700 });
  });

  it("refuses a __proto__ key inside the arguments, which JavaScript readers would turn into a prototype (§2.3: undeclared fields are refused)", () => {
    const body = parseBody(call('{"inputs":{"label":"x","__proto__":{"label":1}}}'));
    expect(argumentProblems(body)).toEqual([{ path: "inputs.__proto__", problem: "not an allowed key" }]);
  });

  it("§4.3 issue #8: reports every string and key under the arguments that Baton cannot store, in the same walk, with its path", () => {
    const body = parseBody(
      call(
        '{"inputs":{"url":"https://example.com/\\ud800","k\\udc00":{"n":"a\\u0000"}},"requestId":"\\udbff"}',
      ),
    );
    expect(argumentProblems(body)).toEqual([
      {
        path: "inputs.url",
        problem: expect.stringMatching(
          /^contains a lone surrogate \(\\ud800\) at character 21, which has no UTF-8 form/,
        ),
      },
      {
        path: "inputs.k\\udc00",
        problem: expect.stringMatching(/^key contains a lone surrogate \(\\udc00\)/),
      },
      {
        path: "inputs.k\\udc00.n",
        problem: expect.stringMatching(/^contains NUL \(\\u0000\) at character 2/),
      },
      { path: "requestId", problem: expect.stringMatching(/^contains a lone surrogate \(\\udbff\)/) },
    ]);
    // The value keeps the text as it was sent, for the schema check to read.
    const value = (body as { value: { params: { arguments: { inputs: Record<string, unknown> } } } }).value;
    expect(value.params.arguments.inputs.url).toBe("https://example.com/\ud800");
  });

  it('leaves strings outside the arguments alone on /mcp, and checks the whole body for the admin API (root "")', () => {
    const text =
      '{"jsonrpc":"2.0","id":"\\ud800","method":"tools/call","params":{"name":"x","arguments":{}}}';
    expect(argumentProblems(parseBody(text))).toEqual([]);
    const admin = parseBody('{"source":"---\\nname: a\\u0000\\n","bindings":{"r\\ud800":"g"}}', "");
    expect(admin.kind === "json" && admin.problems).toEqual([
      { path: "source", problem: expect.stringMatching(/^contains NUL \(\\u0000\) at line 2, column 8/) },
      { path: "bindings.r\\ud800", problem: expect.stringMatching(/^key contains a lone surrogate/) },
    ]);
  });

  it("ignores brackets inside strings when measuring depth", () => {
    const body = parseBody(call(`{"note":"${"[{".repeat(1000)}"}`));
    expect(body.kind).toBe("json");
  });
});
