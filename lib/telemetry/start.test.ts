import { context, ProxyTracerProvider, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, tracingSettings } from '@/lib/config';
import { startTracing } from './start';
import { currentTraceparent, spanContextOf, tracingInstalled, withSpan } from './tracing';

const secret = { NOTICE_KEY_SECRET: 'x'.repeat(32) };

describe('tracing is off unless an OTLP endpoint is configured', () => {
  it('installs no SDK without one: the global provider stays the API proxy over its no-op, and spans record nothing', async () => {
    const tracing = await startTracing({ serviceName: 'notice-ledger-worker', settings: tracingSettings({}) });
    expect(tracing.enabled).toBe(false);
    expect(tracingInstalled()).toBe(false);
    const provider = trace.getTracerProvider();
    expect(provider).toBeInstanceOf(ProxyTracerProvider);
    expect((provider as ProxyTracerProvider).getDelegate().constructor.name).toBe('NoopTracerProvider');
    // withSpan calls straight through with a non-recording span, and no context is entered.
    const seen = await withSpan('notice.test', { 'notice.job_id': 'j' }, async (span) => ({
      recording: span.isRecording(),
      active: trace.getSpan(context.active()),
    }));
    expect(seen).toEqual({ recording: false, active: undefined });
    expect(currentTraceparent()).toBeNull();
    await tracing.shutdown();
  });

  it('derives the traces URL from the base endpoint (OTLP rule), prefers the traces endpoint, honours OTEL_SERVICE_NAME', () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      serviceName: null,
    });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example/base/' }).tracesUrl).toBe('https://otel.example/base/v1/traces');
    expect(
      tracingSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/custom',
        OTEL_SERVICE_NAME: 'ledger-eu',
      }),
    ).toEqual({ tracesUrl: 'http://b:4318/custom', serviceName: 'ledger-eu' });
    // Blank counts as unset, as everywhere in lib/config.ts.
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: '' }).tracesUrl).toBeNull();
  });

  it('refuses a malformed endpoint with a ConfigError naming the variable, alone and in the full configuration', () => {
    for (const bad of ['not a url', 'localhost:4318', 'grpc://collector:4317', 'ftp://collector/v1/traces']) {
      expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: bad })).toThrow(ConfigError);
      expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: bad })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/);
      expect(() => loadConfig({ ...secret, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: bad })).toThrow(/OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http\(s\) URL/);
    }
  });
});

describe('traceparent', () => {
  it('reads a W3C traceparent into the span context a link points at, and nothing malformed', () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const spanId = '00f067aa0ba902b7';
    expect(spanContextOf(`00-${traceId}-${spanId}-01`)).toEqual({ traceId, spanId, traceFlags: 1, isRemote: true });
    for (const bad of [
      null,
      undefined,
      '',
      `01-${traceId}-${spanId}-01`,
      `00-${'0'.repeat(32)}-${spanId}-01`,
      `00-${traceId}-${'0'.repeat(16)}-01`,
      `00-${traceId.toUpperCase()}-${spanId}-01`,
      `00-${traceId}-${spanId}-01-extra`,
    ]) {
      expect(spanContextOf(bad)).toBeNull();
    }
  });
});
