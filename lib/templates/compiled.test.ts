import fc from 'fast-check';
import type { Liquid, Template } from 'liquidjs';
import { describe, expect, it, vi } from 'vitest';
import { activeNoticeConfig } from '@/lib/windows/active';
import { renderCasesOf, type RenderCase } from '@/testing/render-cases';
import { compileTemplate, compiledFor, type CompiledTemplate, type TracePart } from './compiled';
import { htmlEngine, textEngine } from './engine';
import type { TemplateSet } from './load';
import { joinTrace, storedTrace } from './trace';

/**
 * The compiled renderer (compiled.ts) must give LiquidJS's bytes, or give up and let LiquidJS
 * render. Three ways to catch a difference: every shipped template rendered through the product
 * with and without it; the same with generated payload values; and generated templates (inside
 * the subset and outside it, with values of every kind) rendered both ways by each engine.
 */

const { config } = activeNoticeConfig();

type RenderModules = {
  prepare: (typeof import('./load'))['prepareTemplates'];
  email: (typeof import('./render'))['renderEmail'];
  sms: (typeof import('./render'))['renderSms'];
};

/** The product's render modules, fresh; `compiled` decides what their compiledFor is. */
async function renderModules(compiled: (real: typeof compiledFor) => typeof compiledFor): Promise<RenderModules> {
  vi.resetModules();
  vi.doMock('./compiled', async (importOriginal) => {
    const real = await importOriginal<typeof import('./compiled')>();
    return { ...real, compiledFor: compiled(real.compiledFor) };
  });
  const load = await import('./load');
  const render = await import('./render');
  vi.doUnmock('./compiled');
  return { prepare: load.prepareTemplates, email: render.renderEmail, sms: render.renderSms };
}

/** The render as the product does it, counting the compiled renders that gave up. */
async function productRender(): Promise<{ modules: RenderModules; outcomes: { compiled: number; gaveUp: number } }> {
  const outcomes = { compiled: 0, gaveUp: 0 };
  const modules = await renderModules((real) => (engine, templates) => {
    const compiled = real(engine, templates);
    if (!compiled) return null;
    const counted = (scope: Record<string, unknown>, trace?: TracePart[]) => {
      const out = compiled(scope, trace);
      if (out === null) outcomes.gaveUp += 1;
      else outcomes.compiled += 1;
      return out;
    };
    return Object.assign(counted, { pieces: compiled.pieces });
  });
  return { modules, outcomes };
}

/** The same modules with no compiled renderer: LiquidJS renders everything. */
const liquidOnly = () => renderModules(() => () => null);

/** The HTML joined back from a rendered email's trace (lib/templates/trace.ts), as the evidence record does; null without one. */
function joinedHtml(email: { htmlTrace: Parameters<typeof storedTrace>[0] | null }): string | null {
  if (!email.htmlTrace) return null;
  const { trace, pieces } = storedTrace(email.htmlTrace);
  const joined = joinTrace(JSON.parse(JSON.stringify(trace)), Object.fromEntries([...pieces].map(([digest, p]) => [digest, p.texts])));
  if (!joined.ok) throw new Error(joined.problem);
  return joined.text;
}

/** The render as JSON (its trace apart: LiquidJS gives none); the trace, where there is one, must join to the HTML. */
async function renderWith(modules: RenderModules, { channel, request }: RenderCase, traces?: { joined: number }): Promise<string> {
  const set = await modules.prepare(config);
  try {
    if (channel === 'sms') return JSON.stringify(modules.sms(set, request));
    const { htmlTrace, ...email } = await modules.email(set, { ...request, traceHtml: true });
    const joined = joinedHtml({ htmlTrace });
    if (joined !== null) {
      expect(joined, `${request.template}: the trace joins to the HTML`).toBe(email.html);
      if (traces) traces.joined += 1;
    }
    return JSON.stringify(email);
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

function parsedTemplates(set: TemplateSet): { where: string; engine: Liquid; templates: Template[] }[] {
  const all: { where: string; engine: Liquid; templates: Template[] }[] = [];
  for (const [id, entry] of set.entries) {
    for (const [locale, email] of entry.email) {
      all.push({ where: `${id}/email.${locale}.subject`, engine: textEngine, templates: email.subject });
      all.push({ where: `${id}/email.${locale}.html`, engine: htmlEngine, templates: email.html });
      if (email.text) all.push({ where: `${id}/email.${locale}.text`, engine: textEngine, templates: email.text });
    }
    for (const [locale, sms] of entry.sms) all.push({ where: `${id}/sms.${locale}`, engine: textEngine, templates: sms.text });
  }
  all.push({ where: '_layout/text.liquid', engine: textEngine, templates: set.textLayout });
  if (set.compiledLayout) all.push({ where: '_layout/email.mjml', engine: htmlEngine, templates: set.compiledLayout });
  return all;
}

describe('the compiled renderer gives the bytes LiquidJS gives', () => {
  it('every shipped template compiles, and every shipped notice renders compiled, byte for byte as LiquidJS renders it', async () => {
    const cases = renderCasesOf(config);
    const product = await productRender();
    const set = await product.modules.prepare(config);
    const templates = parsedTemplates(set);
    expect(templates.length).toBeGreaterThan(20);
    for (const { where, engine, templates: parsed } of templates) expect(compileTemplate(engine, parsed), where).not.toBeNull();

    const reference = await liquidOnly();
    const traces = { joined: 0 };
    for (const item of cases) {
      const expected = await renderWith(reference, item);
      expect(expected.startsWith('{'), `${item.id}: ${expected}`).toBe(true);
      expect(await renderWith(product.modules, item, traces), item.id).toBe(expected);
    }
    // Every email's HTML came with a trace that joins back to it, the body's nested in the layout's.
    expect(traces.joined).toBe(cases.filter((c) => c.channel === 'email').length);
    // Every part of every notice went the compiled way: subject, body, layout and text layout of each email, each SMS.
    const emails = cases.filter((c) => c.channel === 'email').length;
    expect(product.outcomes).toEqual({ compiled: emails * 4 + (cases.length - emails), gaveUp: 0 });
    // A notice that keeps no evidence record renders without one (nothing on its send path builds it).
    const email = cases.find((c) => c.channel === 'email');
    if (email) expect((await product.modules.email(set, email.request)).htmlTrace).toBeNull();
  }, 120_000);

  it('with generated payload values (markup, Unicode, numbers, nulls, arrays, missing ones), the product renders what LiquidJS renders, errors included', async () => {
    const cases = renderCasesOf(config).filter((c) => c.request.timeZone !== 'Europe/Berlin');
    const product = await productRender();
    const reference = await liquidOnly();
    const value = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.string({ unit: 'grapheme', maxLength: 12 }),
      fc.constantFrom('<b>&"\'</b>', '19.00', '1234.5', '-3', '', ' ', 'EUR', 'JPY', 'xx', '{{ code }}', '{% if %}'),
      fc.integer(),
      fc.double({ noNaN: false }),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom('a', 'size', 'toString'), fc.string({ maxLength: 5 })),
    );
    let differed = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...cases),
        fc.dictionary(
          fc.constantFrom('customer_name', 'plan_name', 'amount', 'currency', 'reference', 'old_amount', 'new_amount', 'trial_ends_at'),
          fc.option(value, { nil: undefined }),
        ),
        async (item, values) => {
          const payload = { ...item.request.payload };
          for (const [key, v] of Object.entries(values)) {
            if (v === undefined) delete payload[key];
            else payload[key] = v;
          }
          const request = { ...item, request: { ...item.request, payload } };
          const expected = await renderWith(reference, request);
          if (expected !== (await renderWith(reference, item))) differed += 1;
          expect(await renderWith(product.modules, request), JSON.stringify(payload)).toBe(expected);
        },
      ),
      { numRuns: 400 },
    );
    // The values reached the output (or its errors): the comparison was not between two unchanged renders.
    expect(differed).toBeGreaterThan(200);
    expect(product.outcomes.compiled).toBeGreaterThan(400);
    expect(product.outcomes.gaveUp).toBeGreaterThan(0);
  }, 120_000);

  it('generated templates, inside the subset and outside it, render the same compiled or not, in both engines', () => {
    const text = fc.constantFrom('Hello ', '<p>', ' & ', '"q" ', "it's", '\n', 'ü€😀', '  ', '{', '}');
    const path = fc.constantFrom(
      'name',
      'amount',
      'obj.inner',
      'obj.missing',
      'missing',
      'nul',
      'nul.x',
      'flag',
      'zero',
      'blank_text',
      'list',
      'list.first',
      'list[0]',
      'date',
      'name.size',
      'name.length',
      'obj["inner"]',
      'obj[key]',
      'num',
      'recipient.locale',
      'proto.x',
    );
    const filter = fc.constantFrom(
      '',
      ' | raw',
      ' | escape',
      ' | upcase',
      ' | money: currency',
      ' | local_date',
      " | local_date: 'month_day'",
      ' | local_datetime',
      " | default: 'd'",
      ' | size',
      ' | append: name',
      ' | money: num',
      " | append: 'x' | raw",
    );
    const literal = fc.constantFrom("'x'", '5', '0', 'true', 'false', 'nil', 'empty', 'blank', "''", '"Ana"');
    const operand = fc.oneof(path, literal);
    const condition = fc.oneof(
      { arbitrary: operand, weight: 2 },
      fc.tuple(operand, fc.constantFrom('==', '!=', '>', 'contains', 'and', 'or'), operand).map(([l, op, r]) => `${l} ${op} ${r}`),
    );
    const output = fc.oneof(
      fc.tuple(path, filter).map(([p, f]) => `{{ ${p}${f} }}`),
      literal.map((l) => `{{ ${l} }}`),
      fc.tuple(path, filter).map(([p, f]) => `{{- ${p}${f} -}}`),
    );
    const { node } = fc.letrec<{ node: string; nodes: string }>((tie) => ({
      node: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        { arbitrary: text, weight: 3 },
        { arbitrary: output, weight: 4 },
        {
          weight: 2,
          arbitrary: fc
            .tuple(condition, tie('nodes'), fc.option(fc.tuple(condition, tie('nodes'))), fc.option(tie('nodes')))
            .map(
              ([c, a, elsif, otherwise]) =>
                `{% if ${c} %}${a}${elsif ? `{% elsif ${elsif[0]} %}${elsif[1]}` : ''}${otherwise !== null ? `{% else %}${otherwise}` : ''}{% endif %}`,
            ),
        },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            '{% for x in list %}[{{ x }}]{% endfor %}',
            '{% unless flag %}u{% endunless %}',
            "{% assign name = 'z' %}",
            '{%- if flag -%} t {%- endif -%}',
            '{% raw %}{{ x }}{% endraw %}',
          ),
        },
      ),
      nodes: fc.array(tie('node'), { maxLength: 4 }).map((parts) => parts.join('')),
    }));
    const source = fc.array(node, { minLength: 1, maxLength: 6 }).map((parts) => parts.join(''));
    const anyValue = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.constantFrom('<a href="x">&amp;</a>', '19.00', 'EUR', '', 'de'),
      fc.integer({ min: -5, max: 5 }),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }),
      fc.constant(new Date('2026-10-01T02:30:00Z')),
    );
    const scope = fc.record(
      {
        name: anyValue,
        amount: fc.oneof(fc.constantFrom('19.00', '1234.5', 'abc'), anyValue),
        currency: fc.oneof(fc.constantFrom('EUR', 'JPY', 'bad'), anyValue),
        obj: fc.oneof(fc.record({ inner: anyValue }, { requiredKeys: [] }), anyValue),
        nul: fc.constant(null),
        flag: anyValue,
        zero: fc.constant(0),
        blank_text: fc.constant(''),
        list: fc.oneof(fc.array(fc.string({ maxLength: 3 }), { maxLength: 3 }), anyValue),
        date: fc.oneof(fc.constant(new Date('2026-10-01T02:30:00Z')), anyValue),
        num: anyValue,
        key: fc.constantFrom('inner', 'missing'),
        recipient: fc.oneof(fc.record({ locale: fc.constantFrom('en', 'de', 'de-AT'), time_zone: fc.constantFrom('UTC', 'America/New_York') }), anyValue),
        proto: fc.constant(Object.create({ x: 'inherited' }) as unknown),
      },
      { requiredKeys: ['nul', 'zero'] },
    );
    const counts = { compiled: 0, notCompiled: 0, gaveUp: 0 };
    fc.assert(
      fc.property(source, scope, fc.boolean(), (src, values, html) => {
        const engine = html ? htmlEngine : textEngine;
        let parsed: Template[];
        try {
          parsed = engine.parse(src);
        } catch {
          return; // LiquidJS refuses it: nothing is rendered either way.
        }
        let expected: string;
        try {
          expected = engine.renderSync(parsed, values) as string;
        } catch {
          expected = '<error>';
        }
        const compiled: CompiledTemplate | null = compileTemplate(engine, parsed);
        if (!compiled) {
          counts.notCompiled += 1;
          return;
        }
        const trace: TracePart[] = [];
        const out = compiled(values, trace);
        if (out === null) {
          counts.gaveUp += 1;
          return;
        }
        counts.compiled += 1;
        expect(out, src).toBe(expected);
        // The same render traced: its pieces and values, joined, are the output.
        expect(joinedHtml({ htmlTrace: { pieces: compiled.pieces, parts: trace } }), src).toBe(out);
        expect(compiled(values), src).toBe(out);
      }),
      { numRuns: 6_000 },
    );
    // Each way was taken often enough for the comparison to mean something.
    expect(counts.compiled).toBeGreaterThan(600);
    expect(counts.notCompiled).toBeGreaterThan(600);
    expect(counts.gaveUp).toBeGreaterThan(300);
  }, 120_000);

  it('compiles a parsed template once, per engine', async () => {
    const parsed = textEngine.parse('Hi {{ name }}');
    expect(compiledFor(textEngine, parsed)).toBe(compiledFor(textEngine, parsed));
    expect(compiledFor(htmlEngine, parsed)).not.toBe(compiledFor(textEngine, parsed));
    expect(compiledFor(textEngine, parsed)?.({ name: '<Ana>' })).toBe('Hi <Ana>');
    expect(compiledFor(htmlEngine, htmlEngine.parse('Hi {{ name }}'))?.({ name: '<Ana>' })).toBe('Hi &lt;Ana&gt;');
  });
});
