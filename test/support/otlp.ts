import { createServer, type Server } from "node:http";

/** One span as an OTLP/HTTP JSON export carries it, with the `service.name` of the process that sent it. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's span kind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}

interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: OtlpValue }[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: { key: string; value: OtlpValue }[];
      }[];
    }[];
  }[];
}

const attributeValue = (v: OtlpValue): unknown => v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue;

/**
 * A real OTLP/HTTP trace receiver (issue #13) started by a test: `POST /v1/traces` with a JSON body
 * (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`), decoded into {@link ReceivedSpan}s. Point services at
 * it with `OTEL_EXPORTER_OTLP_ENDPOINT` = {@link url}.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Bodies that were not OTLP JSON (a protobuf export, say), counted so a test can say so. */
  undecoded = 0;

  private constructor(
    private readonly server: Server,
    /** `http://127.0.0.1:<port>`, the exporter's base endpoint. */
    readonly url: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    let receiver: OtlpReceiver | null = null;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (c: Buffer) => chunks.push(c));
      request.on("end", () => {
        if (request.method === "POST" && request.url === "/v1/traces") receiver?.take(Buffer.concat(chunks));
        response.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    const port = await new Promise<number>((resolve) => {
      server.listen(0, "127.0.0.1", () => {
        const a = server.address();
        resolve(typeof a === "object" && a ? a.port : 0);
      });
    });
    receiver = new OtlpReceiver(server, `http://127.0.0.1:${port}`);
    return receiver;
  }

  private take(body: Buffer): void {
    let parsed: OtlpExport;
    try {
      parsed = JSON.parse(body.toString("utf8")) as OtlpExport;
    } catch {
      this.undecoded++;
      return;
    }
    for (const rs of parsed.resourceSpans ?? []) {
      const service = rs.resource?.attributes?.find((a) => a.key === "service.name");
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            service: String(service ? attributeValue(service.value) : ""),
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? "",
            name: s.name,
            kind: s.kind ?? 0,
            attributes: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, attributeValue(a.value)])),
          });
        }
      }
    }
  }

  /** The spans of trace `traceId`. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
