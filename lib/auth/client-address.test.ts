import { isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzParameters } from '@/test/fuzz/arbitraries';
import { clientAddressOf, throttleKeyOf } from './client-address';
import { addressThrottledError, throttledMinutesOf } from './sign-in-errors';

const hops = fc.integer({ min: 1, max: 10 });
const address = fc.oneof(fc.ipV4(), fc.ipV6());
const padding = fc.constantFrom('', ' ', '  ', '\t');
/** What a client may put in front of our proxies' entries: anything at all, commas included. */
const spoof = fc.array(fc.oneof(fc.string(), fc.ipV4(), fc.ipV6(), fc.constantFrom('unknown', '', '::ffff:10.0.0.1', '127.0.0.1', 'fe80::1%eth0')), {
  maxLength: 5,
});

function join(entries: string[], pad: string): string {
  return entries.map((entry) => `${pad}${entry}${pad}`).join(',');
}

describe('clientAddressOf', () => {
  it('trusts nobody with 0 hops, whatever the header says', () => {
    fc.assert(
      fc.property(
        fc.option(
          fc.oneof(
            fc.string(),
            address,
            fc.array(address, { minLength: 1, maxLength: 4 }).map((entries) => entries.join(', ')),
          ),
          { nil: undefined },
        ),
        (forwardedFor) => {
          expect(clientAddressOf({ forwardedFor, trustedHops: 0 })).toBeNull();
        },
      ),
      fuzzParameters(200),
    );
  });

  it('never throws on any header, and answers null or a bare IP address', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: 'binary' }),
          fc.array(fc.oneof(fc.ipV4Extended(), fc.ipV6(), fc.string())).map((parts) => parts.join(',')),
        ),
        fc.integer({ min: 0, max: 10 }),
        (forwardedFor, trustedHops) => {
          const result = clientAddressOf({ forwardedFor, trustedHops });
          if (result === null) return;
          expect(isIP(result)).not.toBe(0);
          expect(result).not.toContain('%');
          expect(result.length).toBeLessThanOrEqual(45);
        },
      ),
      fuzzParameters(500),
    );
  });

  it('takes the entry written by the outermost trusted proxy; entries a client adds to its left never change it', () => {
    fc.assert(
      fc.property(hops, address, fc.array(address, { minLength: 9, maxLength: 9 }), spoof, padding, (trustedHops, client, proxies, spoofed, pad) => {
        // The outermost trusted proxy appends the client, each inner one the proxy before it.
        const trusted = [client, ...proxies.slice(0, trustedHops - 1)];
        const honest = clientAddressOf({ forwardedFor: join(trusted, pad), trustedHops });
        expect(honest).toBe(client.toLowerCase().replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1'));
        expect(clientAddressOf({ forwardedFor: `${join(spoofed, pad)},${join(trusted, pad)}`, trustedHops })).toBe(honest);
      }),
      fuzzParameters(500),
    );
  });

  it('answers null when the header has fewer entries than trusted hops', () => {
    fc.assert(
      fc.property(fc.array(address, { minLength: 1, maxLength: 9 }), fc.integer({ min: 1, max: 9 }), (entries, missing) => {
        expect(clientAddressOf({ forwardedFor: entries.join(', '), trustedHops: Math.min(10, entries.length + missing) })).toBeNull();
      }),
      fuzzParameters(300),
    );
  });

  it('reads IPv4-mapped IPv6 as the IPv4 address, and refuses what is not an address', () => {
    fc.assert(
      fc.property(fc.ipV4(), fc.constantFrom('::ffff:', '::FFFF:'), (v4, prefix) => {
        expect(clientAddressOf({ forwardedFor: `${prefix}${v4}`, trustedHops: 1 })).toBe(v4);
      }),
      fuzzParameters(100),
    );
    const cases: [string, number, string | null][] = [
      ['203.0.113.7', 1, '203.0.113.7'],
      ['1.1.1.1, 203.0.113.7', 1, '203.0.113.7'],
      ['1.1.1.1, 203.0.113.7', 2, '1.1.1.1'],
      ['198.51.100.1, 203.0.113.7, 10.0.0.2', 2, '203.0.113.7'],
      ['2001:DB8::1', 1, '2001:db8::1'],
      ['203.0.113.7', 2, null],
      ['', 1, null],
      ['unknown', 1, null],
      ['203.0.113.7:443', 1, null],
      ['[2001:db8::1]', 1, null],
      ['fe80::1%eth0', 1, null],
      ['203.0.113.7,', 1, null],
      ['01.2.3.4', 1, null],
    ];
    for (const [forwardedFor, trustedHops, expected] of cases)
      expect(clientAddressOf({ forwardedFor, trustedHops }), `${forwardedFor} / ${trustedHops}`).toBe(expected);
    expect(clientAddressOf({ forwardedFor: null, trustedHops: 1 })).toBeNull();
  });
});

describe('the throttled sign-in error code', () => {
  it('carries whole minutes to wait, at least one, and reads back only from its own shape', () => {
    expect(addressThrottledError({ retryInMs: 1 })).toBe('AddressThrottled:1');
    expect(addressThrottledError({ retryInMs: 14 * 60_000 + 1 })).toBe('AddressThrottled:15');
    expect(throttledMinutesOf(addressThrottledError({ retryInMs: 900_000 }))).toBe(15);
    for (const code of ['AddressThrottled', 'AddressThrottled:', 'AddressThrottled:12345', 'AccountLocked', 'xAddressThrottled:3', 'AddressThrottled:3 '])
      expect(throttledMinutesOf(code), code).toBeNull();
  });
});

describe('throttleKeyOf', () => {
  const group = fc.integer({ min: 0, max: 0xffff });
  const groups = fc.array(group, { minLength: 8, maxLength: 8 });
  const full = (g: number[]) => g.map((n) => n.toString(16).padStart(4, '0')).join(':');
  // WHATWG URL serialises IPv6 hosts canonically: lower case, no leading zeros, the longest run of zero groups as "::".
  const canonical = (address: string) => new URL(`http://[${address}]/`).hostname.slice(1, -1);

  it('counts an IPv6 address by its /64, however it is written', () => {
    fc.assert(
      fc.property(groups, (g) => {
        const expected = `${g
          .slice(0, 4)
          .map((n) => n.toString(16))
          .join(':')}::/64`;
        expect(throttleKeyOf(full(g))).toBe(expected);
        expect(throttleKeyOf(canonical(full(g)))).toBe(expected);
        expect(throttleKeyOf(full(g).toUpperCase())).toBe(expected);
      }),
      fuzzParameters(300),
    );
  });

  it('gives two addresses one key exactly when their first 64 bits agree', () => {
    fc.assert(
      fc.property(groups, groups, fc.boolean(), (a, b, samePrefix) => {
        const other = samePrefix ? [...a.slice(0, 4), ...b.slice(4)] : b;
        const same = a.slice(0, 4).every((n, i) => n === other[i]);
        expect(throttleKeyOf(canonical(full(a))) === throttleKeyOf(canonical(full(other)))).toBe(same);
      }),
      fuzzParameters(300),
    );
  });

  it('reads any IPv6 form, an IPv4 tail included, as its canonical spelling does; leaves IPv4 alone', () => {
    fc.assert(
      fc.property(fc.ipV6(), (address) => {
        expect(throttleKeyOf(address)).toBe(throttleKeyOf(canonical(address)));
      }),
      fuzzParameters(300),
    );
    expect(throttleKeyOf('64:ff9b::192.0.2.33')).toBe('64:ff9b:0:0::/64');
    expect(throttleKeyOf('::1')).toBe('0:0:0:0::/64');
    fc.assert(
      fc.property(fc.ipV4(), (address) => {
        expect(throttleKeyOf(address)).toBe(address);
      }),
      fuzzParameters(100),
    );
  });
});
