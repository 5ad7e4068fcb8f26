import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";

/**
 * A TCP proxy of the test's own, put between services and a dependency (PostgreSQL, NATS) to make
 * the network fail on purpose (issue #8, part 4) without touching the machine's shared servers.
 *
 * - {@link cut}: every open connection is reset, and every new one is accepted and reset at once, as
 *   a dependency that went away would look to its clients, until {@link restore}.
 * - {@link restore}: new connections are forwarded again.
 *
 * Listens on 127.0.0.1 on a free port; {@link close} stops it.
 */
export class TcpProxy {
  private readonly pairs = new Set<{ client: Socket; upstream: Socket }>();
  private down = false;

  private constructor(
    private readonly server: Server,
    /** The port the proxy listens on (127.0.0.1). */
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {
    server.on("connection", (client) => this.accept(client));
  }

  /** Starts a proxy to `target` (host and port); resolves once it listens. */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const server = createServer();
    const port = await new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        const a = server.address();
        resolve(typeof a === "object" && a ? a.port : 0);
      });
    });
    return new TcpProxy(server, port, target);
  }

  /** Connections open through the proxy now. */
  get connections(): number {
    return this.pairs.size;
  }

  private accept(client: Socket): void {
    client.on("error", () => undefined);
    if (this.down) {
      client.resetAndDestroy();
      return;
    }
    const upstream = tcpConnect(this.target.port, this.target.host);
    upstream.on("error", () => undefined);
    const pair = { client, upstream };
    this.pairs.add(pair);
    const end = () => {
      if (!this.pairs.delete(pair)) return;
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end);
    upstream.on("close", end);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  /** Resets every open connection and refuses new ones until {@link restore}. */
  cut(): void {
    this.down = true;
    for (const pair of [...this.pairs]) {
      this.pairs.delete(pair);
      pair.client.resetAndDestroy();
      pair.upstream.destroy();
    }
  }

  /** Forwards new connections again. */
  restore(): void {
    this.down = false;
  }

  /** Stops listening and closes every connection. */
  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
