import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkUpload, decodedLength, fileNameProblems, isMediaType } from "./upload.ts";

const b64 = (s: string) => Buffer.from(s).toString("base64");

describe("upload checks (tools.md upload; issue #10: bad input gets a clear error and stores nothing)", () => {
  it("decodedLength is the decoded size for every base64 text, padded or not, before decoding", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.boolean(), (bytes, padded) => {
        let text = Buffer.from(bytes).toString("base64");
        if (!padded) text = text.replace(/=+$/, "");
        expect(decodedLength(text)).toBe(Buffer.from(text, "base64").length);
      }),
    );
  });

  it("accepts media types with parameters and refuses what is not one (RFC 9110 §8.3.1)", () => {
    for (const ok of [
      "text/plain",
      "application/pdf",
      "text/plain; charset=utf-8",
      'x/y;a="b c"',
      "application/vnd.ms-excel",
    ])
      expect(isMediaType(ok), ok).toBe(true);
    for (const bad of [
      "",
      "text",
      "text/",
      "/plain",
      "a b/c",
      "text/plain;",
      "image/png\n",
      "text/plain; charset",
      "täxt/plain",
    ])
      expect(isMediaType(bad), JSON.stringify(bad)).toBe(false);
  });

  it("a file name is a name: no folders, not . or .., no control characters", () => {
    expect(fileNameProblems("Q3 report (final).pdf")).toEqual([]);
    expect(fileNameProblems("Vertrag Müller.pdf")).toEqual([]);
    expect(fileNameProblems("../etc/passwd")[0]).toMatch(/^fileName: contains a path separator/);
    expect(fileNameProblems("C:\\temp\\a.txt")[0]).toMatch(/^fileName: contains a path separator/);
    expect(fileNameProblems("..")).toEqual(['fileName: ".." is not a file name']);
    expect(fileNameProblems("a\nb.txt")[0]).toMatch(/^fileName: contains a control character/);
    expect(fileNameProblems("a\u0085b.txt")[0]).toMatch(/^fileName: contains a control character/);
  });

  it("lists every problem at once and decodes nothing when any", () => {
    expect(checkUpload({ fileName: "a/b", contentType: "plain", contentBase64: "YQ==" }, 10)).toEqual({
      ok: false,
      issues: [
        "fileName: contains a path separator (/ or \\); send the file's own name, without folders",
        'contentType: "plain" is not a media type; use type/subtype, such as application/pdf or text/plain',
      ],
    });
    expect(
      checkUpload({ fileName: "a", contentType: "text/plain", contentBase64: "not base64!" }, 10),
    ).toEqual({
      ok: false,
      issues: ["contentBase64: not valid base64"],
    });
    expect(checkUpload({ fileName: "a", contentType: "text/plain", contentBase64: "  \n " }, 10)).toEqual({
      ok: false,
      issues: ["contentBase64: the file is empty; upload at least one byte"],
    });
  });

  it("the size limit is on the decoded bytes: the limit passes, one byte over is refused", () => {
    const args = (n: number) => ({
      fileName: "a.bin",
      contentType: "application/octet-stream",
      contentBase64: b64("x".repeat(n)),
    });
    const at = checkUpload(args(10), 10);
    expect(at.ok && at.bytes.length).toBe(10);
    expect(checkUpload(args(11), 10)).toEqual({
      ok: false,
      issues: ["contentBase64: 11 bytes, over describe.maxUploadBytes (10)"],
    });
    const wrapped = checkUpload({ ...args(0), contentBase64: "aGVs\nbG8=" }, 10);
    expect(wrapped.ok && wrapped.bytes.toString()).toBe("hello");
  });
});
