import { Context, IfTag, Output, TypeGuards, defaultOperators, type Liquid, type Template, type Token, type Value } from 'liquidjs';

/**
 * A faster way to render the templates LiquidJS has parsed, for the part of Liquid the shipped
 * templates use: text, `{{ a.b | filter: 'x', c.d }}` and `{% if %}`/`{% elsif %}`/`{% else %}`
 * over a variable, a literal or `==`/`!=` between two of them.
 *
 * Why: LiquidJS evaluates every output through a stack of generators (evaluate → evalToken →
 * evalPropertyAccessToken → _getFromScope → readProperty, each driven by toValueSync), about 4 µs
 * and 4 KB of garbage per `{{ }}`. A notice's email has some 40 of them, and rendering was the
 * largest part of the worker's CPU per notice (issue 27). Here each template becomes a list of
 * closures, built once per parsed template.
 *
 * It is not a second Liquid. It walks LiquidJS's own parse tree (so tokenizing, whitespace
 * control and the appended output-escape filter are LiquidJS's), calls the engine's own filter
 * functions with a real LiquidJS `Context` (so `escape`, its memory limit and our `money` and
 * `local_date` behave as they do there), and reads variables the way `Context.readProperty`
 * does under `ownPropertyOnly` and `strictVariables`. Anything else is not guessed at:
 * - a template with another tag, an operator, a dynamic or special key (`a[b]`, `size`,
 *   `first`, `last`), a keyword argument or a literal that is a drop (`empty`, `blank`, `nil`)
 *   is not compiled, and renders with LiquidJS;
 * - a render that meets a value it does not handle (an array, a function, an object that is not
 *   plain), a filter that returns a promise or generator, or any error, gives up, and the caller
 *   renders with LiquidJS. So every error message, and every output outside the subset, is
 *   LiquidJS's own.
 * `compiled.test.ts` checks output equality with LiquidJS over every shipped template and over
 * generated templates and values.
 */

/**
 * A render as its template's static pieces, by index, and the values emitted between them:
 * joined (lib/templates/trace.ts joinTrace), exactly the output. The evidence record keeps a send's
 * HTML this way (lib/evidence/record.ts): the layout's ~10 KB of static markup once per template
 * (its pieces, by digest), the few hundred bytes a notice fills in once per notice.
 */
export type TracePart = number | string | RenderTrace;
export type RenderTrace = { pieces: TemplatePieces; parts: TracePart[] };

/** A compiled template's static texts, in the order compileList met them (each if-branch's too). */
export type TemplatePieces = { readonly texts: readonly string[] };

/**
 * Renders a compiled template, or returns null where LiquidJS must render it. With `trace`, the
 * render also pushes each static piece's index and each emitted value onto it, in output order.
 */
export type CompiledTemplate = ((scope: Record<string, unknown>, trace?: TracePart[]) => string | null) & { readonly pieces: TemplatePieces };

/** A value the compiled path does not handle: the render gives up. */
class GiveUp extends Error {}
const giveUp = new GiveUp();

type Frame = { scope: Record<string, unknown>; context: Context; trace: TracePart[] | undefined };
type Evaluate = (frame: Frame) => unknown;
type Emit = (frame: Frame) => string;

const hasOwn = Object.prototype.hasOwnProperty;
/** Keys Context.readProperty answers specially (`size`, `first`, `last`): left to LiquidJS. */
const specialKeys = new Set(['size', 'first', 'last']);

/** A plain object (JSON-like data): no class, no drop, no `toLiquid` of its own. */
function isPlainData(value: object): boolean {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return (prototype === Object.prototype || prototype === null) && typeof (value as { toLiquid?: unknown }).toLiquid !== 'function';
}

/**
 * One step of a path, as Context.readProperty does with ownPropertyOnly: nil stays nil, an own
 * property is read, anything else is undefined. toLiquid, drops, arrays and functions give up.
 */
function readProperty(object: unknown, key: string): unknown {
  if (object === null || object === undefined) return object;
  if (typeof object === 'function' || (typeof object === 'object' && !isPlainData(object))) throw giveUp;
  const value = hasOwn.call(object, key) ? (object as Record<string, unknown>)[key] : undefined;
  if (typeof value === 'function') throw giveUp;
  return value;
}

/** The kinds of value an output, a filter argument or a comparison may hold here. */
function checkValue(value: unknown): unknown {
  if (value === null || value === undefined) return value;
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return value;
    case 'object':
      if (value instanceof Date || isPlainData(value)) return value;
      throw giveUp;
    default:
      throw giveUp;
  }
}

/** A variable (`a.b`, `a["b"]`) or a literal (a string, a number, true, false); null for anything else. */
function compileOperand(token: Token): Evaluate | null {
  if (TypeGuards.isPropertyAccessToken(token)) {
    if (token.variable !== undefined || token.props.length === 0) return null;
    const keys: string[] = [];
    for (const prop of token.props) {
      if (!TypeGuards.isWordToken(prop) && !TypeGuards.isQuotedToken(prop)) return null;
      if (specialKeys.has(prop.content)) return null;
      keys.push(prop.content);
    }
    return ({ scope }) => {
      let value: unknown = scope;
      for (const key of keys) {
        value = readProperty(value, key);
        // strictVariables: LiquidJS throws an UndefinedVariableError; it renders it.
        if (value === undefined) throw giveUp;
      }
      return checkValue(value);
    };
  }
  if (TypeGuards.isQuotedToken(token) || TypeGuards.isNumberToken(token) || TypeGuards.isLiteralToken(token)) {
    // `nil`, `empty` and `blank` are drops (compared by their own rules): left to LiquidJS.
    const content: unknown = token.content;
    if (typeof content === 'string' || typeof content === 'number' || typeof content === 'boolean') return () => content;
  }
  return null;
}

function compileExpression(postfix: readonly Token[]): Evaluate | null {
  if (postfix.length === 1 && postfix[0]) return compileOperand(postfix[0]);
  const [left, right, operator] = postfix;
  if (postfix.length !== 3 || !left || !right || !TypeGuards.isOperatorToken(operator)) return null;
  if (operator.operator !== '==' && operator.operator !== '!=') return null;
  const l = compileOperand(left);
  const r = compileOperand(right);
  if (!l || !r) return null;
  // equals(): no drops or arrays reach here (checkValue), so it is ===.
  return operator.operator === '==' ? (frame) => l(frame) === r(frame) : (frame) => l(frame) !== r(frame);
}

/** What Filter.render uses of a filter (its handler is private in the typings). */
type FilterInternals = { handler: (...args: unknown[]) => unknown; args: unknown[]; token: unknown; liquid: Liquid };

function compileValue(value: Value): Evaluate | null {
  const initial = compileExpression(value.initial.postfix);
  if (!initial) return null;
  const filters: { filter: FilterInternals; args: Evaluate[] }[] = [];
  for (const filter of value.filters as unknown as FilterInternals[]) {
    const args: Evaluate[] = [];
    for (const arg of filter.args) {
      if (Array.isArray(arg)) return null; // a keyword argument
      const compiled = compileOperand(arg as Token);
      if (!compiled) return null;
      args.push(compiled);
    }
    filters.push({ filter, args });
  }
  return (frame) => {
    let result = initial(frame);
    for (const { filter, args } of filters) {
      const argv = [result];
      for (const arg of args) argv.push(arg(frame));
      // Filter.render's call, with the same `this`.
      result = filter.handler.apply({ context: frame.context, token: filter.token, liquid: filter.liquid }, argv);
      if (
        typeof result === 'object' &&
        result !== null &&
        (typeof (result as { then?: unknown }).then === 'function' || typeof (result as { next?: unknown }).next === 'function')
      )
        throw giveUp;
    }
    return checkValue(result);
  };
}

/** emitter.write's stringify, for the values checkValue lets through. */
function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'object' && !(value instanceof Date)) throw giveUp;
  return String(value);
}

/** `texts` collects every static piece of the template, its index the one a trace names. */
function compileList(templates: Template[], texts: string[]): Emit[] | null {
  const parts: Emit[] = [];
  for (const template of templates) {
    if (TypeGuards.isHTMLToken(template.token)) {
      const text = (template as unknown as { str: unknown }).str;
      if (typeof text !== 'string') return null;
      if (text === '') continue;
      const index = texts.push(text) - 1;
      parts.push((frame) => {
        frame.trace?.push(index);
        return text;
      });
    } else if (template instanceof Output) {
      const value = compileValue(template.value);
      if (!value) return null;
      parts.push((frame) => {
        const text = stringify(value(frame));
        if (frame.trace && text !== '') frame.trace.push(text);
        return text;
      });
    } else if (template instanceof IfTag) {
      const branches: { test: Evaluate; body: Emit }[] = [];
      for (const branch of template.branches) {
        const test = compileValue(branch.value);
        const body = compileList(branch.templates, texts);
        if (!test || !body) return null;
        branches.push({ test, body: join(body) });
      }
      const otherwise = compileList(template.elseTemplates ?? [], texts);
      if (!otherwise) return null;
      const elseBody = join(otherwise);
      parts.push((frame) => {
        for (const { test, body } of branches) {
          const value = test(frame);
          // isTruthy without jsTruthy: only false and nil are false.
          if (value !== false && value !== null && value !== undefined) return body(frame);
        }
        return elseBody(frame);
      });
    } else {
      return null;
    }
  }
  return parts;
}

function join(parts: Emit[]): Emit {
  return (frame) => {
    let out = '';
    for (const part of parts) out += part(frame);
    return out;
  };
}

/** The engine options the closures above assume: own properties only, no globals, Liquid truthiness, the stock `==`/`!=`. */
function readsLikeThis(engine: Liquid): boolean {
  const { options } = engine;
  return (
    options.ownPropertyOnly === true &&
    !options.jsTruthy &&
    Object.keys(options.globals ?? {}).length === 0 &&
    options.operators['=='] === defaultOperators['=='] &&
    options.operators['!='] === defaultOperators['!=']
  );
}

/** The compiled form of a parsed template for `engine`, or null when it uses more than the subset. */
export function compileTemplate(engine: Liquid, templates: Template[]): CompiledTemplate | null {
  if (!readsLikeThis(engine)) return null;
  const texts: string[] = [];
  const parts = compileList(templates, texts);
  if (!parts) return null;
  const body = join(parts);
  const render = (scope: Record<string, unknown>, trace?: TracePart[]) => {
    // The Context Liquid.renderSync makes, for the filters' `this.context` (escape's memory limit, recipient lookups).
    const context = new Context(scope, engine.options, { sync: true }, { liquid: engine });
    try {
      return body({ scope, context, trace });
    } catch {
      return null;
    }
  };
  return Object.assign(render, { pieces: { texts } });
}

const compiledByEngine = new WeakMap<Liquid, WeakMap<Template[], CompiledTemplate | null>>();

/** compileTemplate, once per parsed template (the template sets keep their parsed arrays). */
export function compiledFor(engine: Liquid, templates: Template[]): CompiledTemplate | null {
  let byTemplates = compiledByEngine.get(engine);
  if (!byTemplates) {
    byTemplates = new WeakMap();
    compiledByEngine.set(engine, byTemplates);
  }
  let compiled = byTemplates.get(templates);
  if (compiled === undefined) {
    compiled = compileTemplate(engine, templates);
    byTemplates.set(templates, compiled);
  }
  return compiled;
}
