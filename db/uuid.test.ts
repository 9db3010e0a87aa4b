import { describe, expect, it } from 'vitest';
import { isUuid } from './uuid';

describe('isUuid', () => {
  it('accepts what gen_random_uuid() returns, in either case', () => {
    expect(isUuid('3f2504e0-4f89-41d3-9a0c-0305e82c3301')).toBe(true);
    expect(isUuid('3F2504E0-4F89-41D3-9A0C-0305E82C3301')).toBe(true);
  });

  it.each([
    '-'.repeat(36),
    '3f2504e04f8941d39a0c0305e82c3301',
    '3f2504e0-4f89-41d3-9a0c-0305e82c330',
    '3f2504e0-4f89-41d3-9a0c-0305e82c3301 ',
    'g'.repeat(8) + '-4f89-41d3-9a0c-0305e82c3301',
    '',
  ])('refuses %j', (text) => {
    expect(isUuid(text)).toBe(false);
  });
});
