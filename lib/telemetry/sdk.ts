import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { ScrubbingSpanProcessor } from './scrub';
import { markTracingInstalled } from './tracing';

/**
 * The OpenTelemetry SDK, in this one place: a Node tracer provider (async-hooks context, W3C
 * propagation) registered as the global one. Loaded only by `./start` when an endpoint is
 * configured, and by the tests with their in-memory exporter. Every processor is wrapped in
 * `ScrubbingSpanProcessor` (./scrub): no recipient token, email or phone in a URL reaches an exporter.
 */

export type InstalledTracing = {
  /** Exports what is buffered. */
  forceFlush: () => Promise<void>;
  /** Flushes, stops the provider and puts the API's no-op tracer back. */
  shutdown: () => Promise<void>;
};

export function installTracerProvider({ serviceName, spanProcessors }: { serviceName: string; spanProcessors: SpanProcessor[] }): InstalledTracing {
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': serviceName })),
    spanProcessors: spanProcessors.map((processor) => new ScrubbingSpanProcessor(processor)),
  });
  provider.register();
  markTracingInstalled(true);
  let stopped: Promise<void> | null = null;
  return {
    forceFlush: () => provider.forceFlush(),
    shutdown: () => {
      stopped ??= (async () => {
        markTracingInstalled(false);
        try {
          await provider.shutdown();
        } finally {
          trace.disable();
          context.disable();
          propagation.disable();
        }
      })();
      return stopped;
    },
  };
}

/** Spans batched (BatchSpanProcessor's defaults: every 5 s or 512 spans) to an OTLP/HTTP collector. */
export function installOtlpTracing({ tracesUrl, serviceName }: { tracesUrl: string; serviceName: string }): InstalledTracing {
  return installTracerProvider({ serviceName, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl }))] });
}
