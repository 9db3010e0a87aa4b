import { tracingSettings, type TracingSettings } from '@/lib/config';

export type Tracing = { enabled: boolean; shutdown: () => Promise<void> };

/**
 * Tracing for a process (the worker's main, the console's instrumentation hook): with no OTLP
 * endpoint configured nothing is loaded or registered — the API stays on its no-op tracer and
 * `withSpan` calls straight through. A malformed endpoint is a ConfigError naming the variable.
 */
export async function startTracing({ serviceName, settings = tracingSettings() }: { serviceName: string; settings?: TracingSettings }): Promise<Tracing> {
  if (!settings.tracesUrl) return { enabled: false, shutdown: async () => undefined };
  const { installOtlpTracing } = await import('./sdk');
  const installed = installOtlpTracing({ tracesUrl: settings.tracesUrl, serviceName: settings.serviceName ?? serviceName });
  return { enabled: true, shutdown: installed.shutdown };
}
