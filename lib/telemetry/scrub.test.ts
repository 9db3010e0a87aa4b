import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { trace } from '@opentelemetry/api';
import { afterAll, describe, expect, it } from 'vitest';
import { installTracerProvider } from './sdk';
import { scrubUrlText } from './scrub';

describe('scrubUrlText', () => {
  it('redacts the recipient token, the unsubscribe token, the producer recipient path and every query value', () => {
    expect(scrubUrlText('/r/abc.def_123/cancel?x=1')).toBe('/r/[redacted]/cancel?x=[redacted]');
    expect(scrubUrlText('http://console/api/recipient/unsubscribe/tok-en')).toBe('http://console/api/recipient/unsubscribe/[redacted]');
    expect(scrubUrlText('/api/v1/recipients/ada%40example.com/preferences')).toBe('/api/v1/recipients/[redacted]/preferences');
    expect(scrubUrlText('GET /lookup?q=%2B4915112345678&page=2#top')).toBe('GET /lookup?q=[redacted]&page=[redacted]#top');
  });

  it('keeps route patterns and what holds no path or query', () => {
    for (const kept of [
      'GET /r/[token]',
      '/api/recipient/unsubscribe/[token]',
      '/api/v1/recipients/{email}/preferences',
      'payment_recovery',
      'GET /api/console/lookup',
    ])
      expect(scrubUrlText(kept)).toBe(kept);
  });
});

describe('the installed provider scrubs every span before its exporter', () => {
  const exporter = new InMemorySpanExporter();
  const tracing = installTracerProvider({ serviceName: 'scrub-test', spanProcessors: [new SimpleSpanProcessor(exporter)] });
  afterAll(() => tracing.shutdown());

  it('rewrites the name, attributes and event attributes of a span that recorded a raw URL', () => {
    const span = trace
      .getTracer('next.js')
      .startSpan('GET /r/secret-token', { attributes: { 'http.target': '/r/secret-token?code=ABCD', 'http.status_code': 200 } });
    span.addEvent('redirect', { 'url.full': 'https://console/lookup?q=ada@example.com' });
    span.end();
    const [exported] = exporter.getFinishedSpans();
    expect(exported?.name).toBe('GET /r/[redacted]');
    expect(exported?.attributes).toEqual({ 'http.target': '/r/[redacted]?code=[redacted]', 'http.status_code': 200 });
    expect(exported?.events[0]?.attributes).toEqual({ 'url.full': 'https://console/lookup?q=[redacted]' });
  });
});
