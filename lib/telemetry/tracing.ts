import { context, INVALID_SPAN_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Link, type Span, type SpanContext } from '@opentelemetry/api';

/**
 * The product's spans, through the OpenTelemetry API only (the SDK is `./sdk`, installed by
 * `./start` when an OTLP endpoint is configured). With no SDK nothing here allocates a span:
 * `withSpan` calls its function directly, so the send path's cost is the closure it passes.
 *
 * What a span may carry: ids (job id, correlation = first 32 hex of the notice key, queue
 * message id), the notice type, counts and outcomes. Never a body, a one-time code, an email
 * address or phone number, a payload value or the full notice key; an exception is recorded
 * by its class and SQLSTATE only, because a message can quote a value ("invalid input syntax
 * for type uuid: …"). `test/notice-trace.test.ts` walks every recorded attribute.
 *
 * This folder is the tracing API, the SDK and its scrubbing only: it imports nothing from the
 * domain (ESLint refuses it). What a step records lives beside the step: the send path's in
 * `lib/jobs/notice-spans.ts`, scheduling's and ingest's in the function they trace.
 */

export const tracer = trace.getTracer('notice-ledger');

/**
 * Whether an SDK is registered, kept on globalThis rather than in this module: Next compiles the
 * instrumentation hook and the route handlers as separate bundles, each with its own copy of
 * this module, and a module flag set by the hook stayed false in every route (no producer span
 * under `next start`, found by exporting from a real console). The API's own globals work the same way.
 */
const INSTALLED = Symbol.for('notice-ledger.tracing.installed');
type WithFlag = { [INSTALLED]?: boolean };
const flagHolder = globalThis as WithFlag;
/** Shared: a non-recording span ignores every call, so one serves every untraced step. */
const noopSpan = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Called by `./sdk` once a tracer provider is registered (and by nothing else). */
export function markTracingInstalled(on: boolean): void {
  flagHolder[INSTALLED] = on;
}

export function tracingInstalled(): boolean {
  return flagHolder[INSTALLED] === true;
}

export type SpanOptions = { kind?: SpanKind; links?: Link[]; root?: boolean };

/** `error.type` and, for PostgreSQL, the SQLSTATE: never the message. */
export function recordError(span: Span, error: unknown): void {
  const type = error instanceof Error ? error.name : typeof error;
  const code = error instanceof Error && 'code' in error && typeof error.code === 'string' && /^[0-9A-Z]{5}$/.test(error.code) ? error.code : undefined;
  span.addEvent('exception', code ? { 'exception.type': type, 'db.response.status_code': code } : { 'exception.type': type });
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

/**
 * Runs `fn` inside a span (the active one for what `fn` starts); a throw is recorded and
 * rethrown. Untraced, it returns `fn`'s own promise: no span, no extra await.
 */
export function withSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, options: SpanOptions = {}): Promise<T> {
  if (!tracingInstalled()) return fn(noopSpan);
  const parent = options.root ? trace.deleteSpan(context.active()) : context.active();
  return tracer.startActiveSpan(name, { attributes, kind: options.kind ?? SpanKind.INTERNAL, links: options.links }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      recordError(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * `fn` as one function that runs in its own span (`name`), `annotate` writing what it returned
 * on the span; a throw is recorded and rethrown. For a function with many exits, so the span's
 * answer is written once. Untraced, it calls `fn` directly: no span, no extra await.
 */
export function traced<A extends unknown[], T>(
  name: string,
  annotate: (span: Span, value: T) => unknown,
  fn: (...args: A) => Promise<T>,
): (...args: A) => Promise<T> {
  return (...args) => {
    if (!tracingInstalled()) return fn(...args);
    return withSpan(name, {}, async (span) => {
      const value = await fn(...args);
      annotate(span, value);
      return value;
    });
  };
}

/**
 * A send-path step as a span around a promise already started: the step's call stays as it
 * was (one wrapper around it), and the span covers its wait. Untraced, `pending` is returned
 * as it is. Nothing inside the step runs in this span's context; these steps start no spans.
 */
export function traceStep<T>(name: string, pending: Promise<T>, annotate?: (span: Span, value: T) => void): Promise<T> {
  if (!tracingInstalled()) return pending;
  const span = tracer.startSpan(name);
  return pending.then(
    (value) => {
      annotate?.(span, value);
      span.end();
      return value;
    },
    (error: unknown) => {
      recordError(span, error);
      span.end();
      throw error;
    },
  );
}

/** A step that is already decided (the pure policy decision, microseconds): a span of no length carrying its answer. */
export function recordStep<T>(name: string, value: T, annotate: (span: Span, value: T) => void): T {
  if (!tracingInstalled()) return value;
  const span = tracer.startSpan(name);
  annotate(span, value);
  span.end();
  return value;
}

/** The span `withSpan` is running in (the delivery's, inside a wake-up handler), or a no-op one. */
export function activeSpan(): Span {
  return trace.getActiveSpan() ?? noopSpan;
}

const traceparentPattern = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The active span as a W3C `traceparent` (version 00), or null when nothing is traced. */
export function currentTraceparent(): string | null {
  if (!tracingInstalled()) return null;
  const span = trace.getActiveSpan();
  if (!span) return null;
  const { traceId, spanId, traceFlags } = span.spanContext();
  if (!trace.isSpanContextValid(span.spanContext())) return null;
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A stored `traceparent` as the span context a link points at; null for anything malformed. */
export function spanContextOf(traceparent: string | null | undefined): SpanContext | null {
  const match = traceparent ? traceparentPattern.exec(traceparent) : null;
  if (!match) return null;
  const [, traceId = '', spanId = '', flags = '00'] = match;
  const spanContext: SpanContext = { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true };
  return trace.isSpanContextValid(spanContext) ? spanContext : null;
}

const correlationPattern = /^[0-9a-f]{32}$/;

/** A correlation as an attribute only when it looks like one (a provider's tag is its own text). */
export function correlationAttribute(correlation: string | null | undefined): Attributes {
  return correlation && correlationPattern.test(correlation) ? { 'notice.correlation': correlation } : {};
}

export { SpanKind, type Attributes, type Span };
