import { describe, expect, it } from "vitest";
import { issuerName, redirectResult } from "./sign-in.ts";

describe("the OIDC sign-in's return to the console (issue #16)", () => {
  it("tells a code to exchange, the issuer's refusal, and an ordinary address apart", () => {
    expect(redirectResult(new URL("http://baton.test/ui/?code=abc&state=s1"))).toBe("code");
    expect(redirectResult(new URL("http://baton.test/ui/?error=access_denied&state=s1"))).toBe("error");
    expect(redirectResult(new URL("http://baton.test/ui/?error=login_required"))).toBe("error");
    // A code without its state is not the issuer's answer to this console's request.
    expect(redirectResult(new URL("http://baton.test/ui/?code=abc"))).toBeNull();
    expect(redirectResult(new URL("http://baton.test/ui/#/runs/r_1"))).toBeNull();
    // The dev issuer's sign-in link carries its token in the fragment, never in the query.
    expect(redirectResult(new URL("http://baton.test/ui/#token=eyJ.eyJ.sig"))).toBeNull();
  });

  it("names the issuer by its host", () => {
    expect(issuerName("https://login.microsoftonline.com/72f988bf/v2.0")).toBe("login.microsoftonline.com");
    expect(issuerName("http://127.0.0.1:8080/realms/acme")).toBe("127.0.0.1:8080");
    expect(issuerName("urn:baton:dev-issuer")).toBe("urn:baton:dev-issuer");
  });
});
