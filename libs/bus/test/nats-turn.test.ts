import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NATS_URL } from "../../../test/support/deploy.ts";
import { BusRemoteError, NatsBus } from "../src/index.ts";

/**
 * The NATS bus sends the requests and replies of one event-loop iteration together, from that
 * iteration's check phase (issue #15: one socket write instead of one per message). Over this
 * machine's nats-server: many requests made in one iteration are each answered with their own reply,
 * and a reply JSON cannot carry is answered as an error the caller reads, without ending the service
 * (an unhandled rejection would end it, and fail this file).
 */

const envelope = (payload: unknown) => ({
  type: "test",
  id: randomBytes(6).toString("hex"),
  identity: null,
  deadline: Date.now() + 5_000,
  payload,
});

describe("NATS requests and replies sent per event-loop turn (issue #15)", () => {
  let server: NatsBus;
  let client: NatsBus;
  const namespace = `turn${randomBytes(3).toString("hex")}`;

  beforeAll(async () => {
    server = await NatsBus.connect(NATS_URL, "turn-server", namespace);
    client = await NatsBus.connect(NATS_URL, "turn-client", namespace);
    server.serve("echo", async (env) => ({ echoed: env.payload }), { queue: "echo" });
    server.serve("broken", async () => ({ size: 10n }), { queue: "broken" });
    await server.flush();
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it("answers every request of one iteration with its own reply", async () => {
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) => client.request("echo", envelope({ i }), 5_000)),
    );
    expect(replies).toEqual(Array.from({ length: 50 }, (_, i) => ({ echoed: { i } })));
  });

  it("answers a reply JSON cannot carry with an error that names the subject, and keeps serving", async () => {
    const refused = await client.request("broken", envelope({}), 5_000).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BusRemoteError);
    expect((refused as BusRemoteError).message).toMatch(/reply to broken could not be encoded as JSON/);
    expect(await client.request("echo", envelope("still here"), 5_000)).toEqual({ echoed: "still here" });
  });
});
