import { Liquid, type Context, type Template } from 'liquidjs';

/**
 * The Liquid engines templates are parsed and rendered with. Sandboxed: `templates: {}` means
 * no include, render or layout tag can read a file (every lookup is in an empty in-memory map);
 * only own properties are visible; an unknown variable or filter is an error, never an empty
 * string; and there is no way to run code. HTML output escapes every `{{ }}` (the layout marks
 * the one pre-rendered body `raw`); the text engine (subject, text part, SMS) does not escape,
 * since its output is not HTML. Values are data: Liquid in a payload value is printed, not run.
 */

function formatContext(context: Context): { locale: string; timeZone: string } {
  const recipient = context.getSync(['recipient']) as { locale?: unknown; time_zone?: unknown } | undefined;
  return {
    locale: typeof recipient?.locale === 'string' ? recipient.locale : 'en',
    timeZone: typeof recipient?.time_zone === 'string' ? recipient.time_zone : 'UTC',
  };
}

function asDate(value: unknown, filter: string): Date {
  const date = value instanceof Date ? value : typeof value === 'string' ? new Date(value.length === 10 ? `${value}T12:00:00Z` : value) : null;
  if (!date || Number.isNaN(date.getTime())) throw new Error(`${filter}: not a date`);
  return date;
}

/**
 * Intl formatters, one per locale, zone and style. Building one costs far more than formatting
 * with it (`local_date` was 5 % of the worker's CPU per notice, issue 27) and a built formatter is
 * pure, so each is built once and kept; the handful a deployment uses stay well under the bound,
 * and past it the map starts over. The key's parts are joined with NUL, which no locale or zone
 * Intl accepts can contain, so two different tuples never share a key.
 */
function createFormatterCache<T>(): (parts: string[], build: () => T) => T {
  const built = new Map<string, T>();
  return (parts, build) => {
    const key = parts.join('\u0000');
    const known = built.get(key);
    if (known !== undefined) return known;
    const formatter = build();
    if (built.size >= 1_000) built.clear();
    built.set(key, formatter);
    return formatter;
  };
}

const numberFormats = createFormatterCache<Intl.NumberFormat>();
const dateFormats = createFormatterCache<Intl.DateTimeFormat>();

/** An amount in the recipient's locale: `{{ amount | money: currency }}` → `49,00 €` for de. */
function money(this: { context: Context }, amount: unknown, currency: unknown): string {
  const { locale } = formatContext(this.context);
  if (typeof currency !== 'string') throw new Error('money: needs a currency code');
  const value = typeof amount === 'number' ? amount : Number(amount);
  if (!Number.isFinite(value)) throw new Error('money: not a number');
  // A decimal string is formatted exactly (Intl.NumberFormat v3 takes strings), not through a float.
  const exact = (typeof amount === 'string' ? amount : value) as unknown as number;
  return numberFormats([locale, currency], () => new Intl.NumberFormat(locale, { style: 'currency', currency })).format(exact);
}

const dateStyles = {
  long: { dateStyle: 'long' },
  // A text message's date, days away: `Sep 30`, `30. Sept.` (a year costs 6 of its 160 characters).
  month_day: { month: 'short', day: 'numeric' },
} as const satisfies Record<string, Intl.DateTimeFormatOptions>;

/** A date in the recipient's locale and time zone: `{{ anchor_at | local_date }}` → `1. Oktober 2026`; `local_date: 'month_day'` → `1. Okt.`. */
function localDate(this: { context: Context }, value: unknown, style: unknown = 'long'): string {
  const { locale, timeZone } = formatContext(this.context);
  if (style !== 'long' && style !== 'month_day') throw new Error("local_date: the style is 'long' or 'month_day'");
  return dateFormats([locale, timeZone, style], () => new Intl.DateTimeFormat(locale, { ...dateStyles[style], timeZone })).format(asDate(value, 'local_date'));
}

/** Date and time with the zone's short name: `{{ window_closes_at | local_datetime }}`. */
function localDateTime(this: { context: Context }, value: unknown): string {
  const { locale, timeZone } = formatContext(this.context);
  return dateFormats(
    [locale, timeZone, 'datetime'],
    // Intl refuses timeZoneName beside dateStyle/timeStyle (a TypeError on every call), so the fields are named.
    () =>
      new Intl.DateTimeFormat(locale, { year: 'numeric', month: 'long', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZone, timeZoneName: 'short' }),
  ).format(asDate(value, 'local_datetime'));
}

function createEngine(outputEscape: 'escape' | undefined): Liquid {
  const engine = new Liquid({
    templates: {},
    ownPropertyOnly: true,
    strictVariables: true,
    strictFilters: true,
    lenientIf: false,
    jsTruthy: false,
    outputEscape,
    // An operator's template is bounded like any input: size, render time, memory.
    parseLimit: 100_000,
    renderLimit: 1_000,
    memoryLimit: 10_000_000,
  });
  engine.registerFilter('money', money);
  engine.registerFilter('local_date', localDate);
  engine.registerFilter('local_datetime', localDateTime);
  return engine;
}

/** Escapes every output: the HTML body and the layout. */
export const htmlEngine = createEngine('escape');
/** Plain text: subject, text part, SMS. */
export const textEngine = createEngine(undefined);

/**
 * Parses an HTML template (a body, or the layout MJML compiled to) with every line break made CRLF
 * first. A rendered message's HTML then goes out as SMTP carries it: nodemailer's DATA transform
 * rewrites each LF that has no CR, and the ~300 of a notice's HTML (the MJML layout writes LF) made
 * it slice the message at each and concatenate the pieces again, after the claim: ~60 µs of CPU and
 * 68 KB of garbage per notice (issue 27). Done once per template here, it costs nothing per
 * notice. In HTML a line break is whitespace either way; text templates keep theirs.
 */
export function parseHtml(source: string, name: string): Template[] {
  return htmlEngine.parse(withCrlf(source), name);
}

/** `text` with every line break CRLF, as MIME and SMTP carry it: the HTML templates' at parse (above), an email's text part per notice (lib/mail/transport.ts). */
export const withCrlf = (text: string): string => text.replace(/\r?\n/g, '\r\n');
