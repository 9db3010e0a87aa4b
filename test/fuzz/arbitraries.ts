import fc from 'fast-check';

/**
 * Hostile inputs shared by the fuzz suite. Every property runs with a fixed seed (FC_SEED, or
 * the constant below) so CI is reproducible; fast-check prints the seed and the shrunk
 * counterexample on failure, and `FC_SEED=<n> npx vitest run test/fuzz` replays it.
 */
export const FUZZ_SEED = Number.parseInt(process.env.FC_SEED ?? '', 10) || 20_261_129;

export function fuzzParameters(numRuns: number): fc.Parameters<unknown> {
  return { seed: FUZZ_SEED, numRuns, endOnFailure: false };
}

export const injectionStrings = [
  "'; drop table notice_ledger; --",
  "' or '1'='1",
  '"; select pg_sleep(10); --',
  "1; update users set role = 'admin'",
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  '../../../../etc/passwd',
  '..\\..\\..\\windows\\win.ini',
  '/dev/zero',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  '\u0000',
  'a\u0000b',
  '%00',
  'victim@example.com\r\nBcc: attacker@example.com',
  'Subject\r\nX-Injected: 1',
  'x\nSet-Cookie: a=b',
  '${jndi:ldap://127.0.0.1/a}',
  '{{7*7}}',
  '__proto__',
  'constructor',
  '%',
  '_',
  '\\',
  '*',
  '',
  ' ',
  '\t\n',
  'null',
  'undefined',
  'NaN',
  '-1',
  '0',
  '1e309',
  '9'.repeat(40),
  '2026-02-30 25:61:61',
  '9999-99-99T99:99:99+99',
  '0000-00-00 00:00:00',
  '2026-11-29T10:00:00+99:99',
] as const;

export const unicodeEdgeStrings = [
  '\uD800',
  '\uDFFF',
  'a\uD83Db',
  '\u202Eexe.pdf',
  '\u202Egnp.\u202Dexe',
  'e\u0301\u0301\u0301\u0301\u0301',
  'Z̸̡̢̛̖̗̘̙̜̝̞̟̠̣̤̥̦̩̪̫̬̭̮̯̰̱̲̳̹̺̻̼ͅ͏͓͔͕͖͙͚',
  '👩‍👩‍👧‍👦',
  '🏳️‍🌈',
  '\uFEFFbom',
  '\u200B',
  '\uFFFF',
  '\uFFFE',
  '𝕏𝕐',
  'İı',
  'ß',
  'Ω≈ç√',
  '\u0085',
  '\u2028\u2029',
  '\u001B[31mred',
] as const;

export const ONE_MEGABYTE = 1024 * 1024;

/** Grows a short seed to a large string (up to ~1 MB) without generating a megabyte char by char. */
const oversized = fc
  .tuple(fc.constantFrom('a', '\u0000', "'", '<', '🙂', 'é', '\uD800'), fc.constantFrom(321, 4_096, 100_000, ONE_MEGABYTE))
  .map(([unit, length]) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length));

/** Strings an attacker, a buggy producer or a copy-paste accident would send. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...injectionStrings, ...unicodeEdgeStrings), weight: 6 },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ maxLength: 40, unit: 'binary' }), weight: 2 },
  { arbitrary: fc.string({ maxLength: 20, unit: 'grapheme' }), weight: 1 },
  {
    arbitrary: fc
      .tuple(fc.string({ maxLength: 8 }), fc.constantFrom(...injectionStrings, ...unicodeEdgeStrings), fc.string({ maxLength: 8 }))
      .map((parts) => parts.join('')),
    weight: 3,
  },
  { arbitrary: oversized, weight: 1 },
);

/**
 * Values that pass a format check but not a semantic one (Feb 30, hour 25, an id past int4),
 * or that look right and carry one poisoned character: these reach the database, where a
 * pure-garbage value is stopped by the first regex.
 */
export const plausibleString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '2026-11-29 10:00:00+00',
    '2026-11-29T10:00:00.123456+00:00',
    '2026-02-30 10:00:00+00',
    '2026-13-01 10:00:00+00',
    '2026-11-29 25:61:61+00',
    '2026-11-29 10:00:00+99',
    '0000-01-01 00:00:00+00',
    '9999-12-31 23:59:59-15',
    '2026-11-29 1',
    '2026-11-29T10:00:00Z',
    '99999999999',
    '2147483648',
    '9223372036854775808',
    '0',
    '-1',
    '1.5',
    'renewal_notice_t72',
    'payment_recovery',
    'example.com',
    'customer0@example.com',
    'support',
    'admin',
    '24h',
    '7d',
    '0123456789abcdef0123456789abcdef',
    'a'.repeat(64),
    'A'.repeat(64),
    '<0123456789abcdef0123456789abcdef@notices.localhost>',
    '00000000-0000-0000-0000-000000000000',
  ),
  fc.uuid(),
  fc.string({ minLength: 8, maxLength: 64, unit: fc.constantFrom(...'0123456789abcdef') }),
  fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
  fc.integer().map(String),
  fc.emailAddress(),
);

const poisons = ['\u0000', '\u0000', '\u0000', '\r\nBcc: attacker@example.com', '\uD800', "'; drop table users; --", '%', '\u202E', '<script>', '../'] as const;

/** A valid-looking value with one poisoned substring at a random position. */
export function poisoned(valid: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.tuple(valid, fc.constantFrom(...poisons), fc.nat()).map(([value, poison, at]) => {
    const index = at % (value.length + 1);
    return value.slice(0, index) + poison + value.slice(index);
  });
}

/** Any JSON value, biased to hostile strings: wrong types for every field. */
export const hostileJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileString,
    plausibleString,
    fc.constantFrom(null, true, false, 0, -1, 1.5, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1e308, 2 ** 31, 2 ** 63),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      hostileString.filter((key) => key.length < 50),
      tie('value'),
      { maxKeys: 4 },
    ),
  ),
})).value;

/** Replaces, removes or adds one field of a valid object, or wraps it in the wrong container. */
export function mutatedObject(valid: Record<string, unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys(valid);
  const replaceOne = fc.tuple(fc.constantFrom(...keys), hostileJson).map(([key, value]) => ({ ...valid, [key]: value }));
  const nested = keys.filter((key) => isPlainObject(valid[key]) || (Array.isArray(valid[key]) && isPlainObject(valid[key][0])));
  const deep: fc.Arbitrary<unknown>[] = nested.map((key) => {
    const inner = valid[key];
    if (Array.isArray(inner)) return mutatedObject(inner[0] as Record<string, unknown>).map((value) => ({ ...valid, [key]: [value] }));
    return mutatedObject(inner as Record<string, unknown>).map((value) => ({ ...valid, [key]: value }));
  });
  const scalarArrays = keys.filter((key) => Array.isArray(valid[key]) && !isPlainObject((valid[key] as unknown[])[0]));
  const arrayElements: fc.Arbitrary<unknown>[] = scalarArrays.map((key) =>
    fc.array(fc.oneof(plausibleString, hostileString, hostileJson), { maxLength: 6 }).map((value) => ({ ...valid, [key]: value })),
  );
  const replaceMany = fc
    .tuple(...keys.map((key) => fc.option(hostileJson, { freq: 2 }).map((value) => [key, value] as const)))
    .map((entries) => Object.fromEntries(entries.map(([key, value]) => [key, value ?? valid[key]])));
  const stringKeys = keys.filter((key) => typeof valid[key] === 'string');
  const poisonOne =
    stringKeys.length === 0
      ? []
      : [fc.constantFrom(...stringKeys).chain((key) => poisoned(fc.constant(String(valid[key]))).map((value) => ({ ...valid, [key]: value })))];
  const removeOne = fc.constantFrom(...keys).map((key) => Object.fromEntries(Object.entries(valid).filter(([name]) => name !== key)));
  const extraField = fc
    .tuple(
      hostileString.filter((key) => !keys.includes(key) && key.length < 100),
      hostileJson,
    )
    .map(([key, value]) => ({ ...valid, [key]: value }));
  const wrongContainer = fc.constantFrom<unknown>([valid], JSON.stringify(valid), null, 42, [], {});
  return fc.oneof(
    replaceOne,
    replaceMany,
    removeOne,
    extraField,
    wrongContainer,
    hostileJson,
    ...poisonOne,
    ...poisonOne,
    ...poisonOne,
    ...deep,
    ...arrayElements,
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Raw request bodies that are not (quite) JSON. */
export const hostileBodyText: fc.Arbitrary<string> = fc.oneof(
  hostileString,
  fc.constantFrom('{', '{"a":', '[1,2', '{"__proto__":{"admin":true}}', '\u0000{}', '{}\u0000', 'null', '"text"', '[]', '{"a":1}{"b":2}', '\uFEFF{}'),
  fc.nat({ max: 5_000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
  fc.nat({ max: 5_000 }).map((depth) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)),
  hostileJson.map((value) => JSON.stringify(value) ?? 'null'),
);

/** Query parameters: every known name present or not, each plausible or hostile, plus unknown and repeated names. */
export function hostileQuery(names: readonly string[]): fc.Arbitrary<Array<[string, string]>> {
  const value = fc.oneof(plausibleString, poisoned(plausibleString), hostileString);
  const known = fc.tuple(...names.map((name) => fc.option(value, { freq: 2 }).map((chosen) => [name, chosen] as const)));
  const extra = fc.array(fc.tuple(names.length > 0 ? fc.oneof(fc.constantFrom(...names), hostileString) : hostileString, value), { maxLength: 2 });
  return fc
    .tuple(known, extra)
    .map(([pairs, more]) => [
      ...pairs.flatMap(([name, chosen]): Array<[string, string]> => (chosen === null ? [] : [[name, chosen]])),
      ...more.filter(([name]) => name.length < 200),
    ]);
}

/** Header values that could smuggle a second header or overflow a parser; only those `Headers` accepts. */
export const hostileHeaderValue: fc.Arbitrary<string> = fc
  .oneof(
    hostileString,
    fc.constantFrom(
      'Bearer',
      'Bearer ',
      'Bearer nlk_',
      'Basic',
      'Basic !!!',
      'Basic ' + Buffer.from(':').toString('base64'),
      'v1=',
      'v1=' + '0'.repeat(64),
      '1',
      '-1',
      '99999999999999',
    ),
  )
  .filter(isValidHeaderValue);

export function isValidHeaderValue(value: string): boolean {
  try {
    new Headers({ x: value });
    return true;
  } catch {
    return false;
  }
}
