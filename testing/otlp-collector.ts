import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for an OpenTelemetry collector: records every request (the OTLP/HTTP exporter's
 * `POST /v1/traces`, JSON encoded) and answers 200. `spans()` flattens what arrived.
 */
export type ReceivedRequest = { path: string; headers: IncomingHttpHeaders; body: string };

type Attribute = { key: string; value: { stringValue?: string } };
export type OtlpJson = {
  resourceSpans?: {
    resource?: { attributes?: Attribute[] };
    scopeSpans?: { spans?: { name: string; attributes?: Attribute[] }[] }[];
  }[];
};

export type OtlpCollector = {
  url: string;
  received: ReceivedRequest[];
  /** The trace exports received, parsed. */
  batches: () => OtlpJson[];
  serviceNames: () => string[];
  spans: () => { name: string; attributes?: Attribute[] }[];
  close: () => Promise<void>;
};

export async function startOtlpCollector(): Promise<OtlpCollector> {
  const received: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ path: `${request.method} ${request.url}`, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const batches = () => received.filter((request) => request.path === 'POST /v1/traces').map((request) => JSON.parse(request.body) as OtlpJson);
  const resources = () => batches().flatMap((batch) => batch.resourceSpans ?? []);
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    batches,
    serviceNames: () => [
      ...new Set(
        resources()
          .flatMap((resource) => resource.resource?.attributes ?? [])
          .filter((a) => a.key === 'service.name')
          .map((a) => a.value.stringValue ?? ''),
      ),
    ],
    spans: () =>
      resources()
        .flatMap((resource) => resource.scopeSpans ?? [])
        .flatMap((scope) => scope.spans ?? []),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
