import { describe, expect, it } from 'vitest';
import { parseControlArgs } from './control-args';

describe('npm run ledger -- pause|resume', () => {
  it('parses one target with a reason and an actor', () => {
    expect(parseControlArgs(['pause', '--type', 'renewal_notice_t72', '--as', 'op@example.com', '--reason', 'incident 42'])).toEqual({
      ok: true,
      command: { kind: 'pause', target: { scope: 'notice_type', noticeType: 'renewal_notice_t72' }, reason: 'incident 42', as: 'op@example.com' },
    });
    expect(parseControlArgs(['resume', '--all', '--as', 'op@example.com', '--reason', 'over now'])).toMatchObject({
      ok: true,
      command: { target: { scope: 'all' } },
    });
  });

  it('refuses no target, two targets, an unknown type or channel, and no reason', () => {
    for (const argv of [
      ['pause', '--as', 'a@b.c', '--reason', 'why not'],
      ['pause', '--all', '--channel', 'sms', '--as', 'a@b.c', '--reason', 'why not'],
      ['pause', '--type', 'no_such_type', '--as', 'a@b.c', '--reason', 'why not'],
      ['pause', '--channel', 'fax', '--as', 'a@b.c', '--reason', 'why not'],
      ['pause', '--all', '--as', 'a@b.c'],
      ['pause', '--all', '--reason', 'why not'],
    ]) {
      expect(parseControlArgs(argv).ok, argv.join(' ')).toBe(false);
    }
  });
});
