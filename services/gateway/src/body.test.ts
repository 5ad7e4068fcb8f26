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

  it("ignores brackets inside strings when measuring depth", () => {
    const body = parseBody(call(`{"note":"${"[{".repeat(1000)}"}`));
    expect(body.kind).toBe("json");
  });
});
