import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { loadAuditPage, AUDIT_PAGE_SIZE } from '@/lib/console/audit-view';
import { insertAuditEntries } from './audit';

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
  // Many rows in one statement share now(): the keyset must still page through ties by id.
  await insertAuditEntries(t.db, {
    entries: Array.from({ length: 120 }, (_, index) => ({
      actor: index % 3 === 0 ? 'oncall@example.com' : 'admin@example.com',
      action: index % 2 === 0 ? 'quarantine.release' : 'user.role',
      targetType: 'notice',
      targetId: `target-${index % 10}`,
      reason: `reason ${index}`,
      before: { n: index },
      after: { n: index + 1 },
    })),
  });
});
afterAll(async () => {
  await t.drop();
});

describe('audit log', () => {
  it('pages newest first through every entry exactly once', async () => {
    const seen: number[] = [];
    let page = await loadAuditPage(t.db, {});
    seen.push(...page.rows.map((row) => row.id));
    while (page.next) {
      page = await loadAuditPage(t.db, { beforeAt: page.next.beforeAt, beforeId: page.next.beforeId });
      seen.push(...page.rows.map((row) => row.id));
    }
    expect(seen).toHaveLength(120);
    expect(new Set(seen).size).toBe(120);
    expect(seen).toEqual([...seen].sort((a, b) => b - a));
    expect((await loadAuditPage(t.db, {})).rows).toHaveLength(AUDIT_PAGE_SIZE);
  });

  it('filters by actor, action prefix and target', async () => {
    const byActor = await loadAuditPage(t.db, { actor: 'OnCall@example.com' });
    expect(byActor.rows.length).toBe(40);
    expect(byActor.rows.every((row) => row.actor === 'oncall@example.com')).toBe(true);
    const byAction = await loadAuditPage(t.db, { action: 'quarantine.' });
    expect(byAction.rows.every((row) => row.action === 'quarantine.release')).toBe(true);
    const combined = await loadAuditPage(t.db, { target: 'target-3', action: 'user' });
    expect(combined.rows.map((row) => row.reason).sort()).toEqual(
      [
        'reason 103',
        'reason 113',
        'reason 13',
        'reason 23',
        'reason 3',
        'reason 33',
        'reason 43',
        'reason 53',
        'reason 63',
        'reason 73',
        'reason 83',
        'reason 93',
      ].sort(),
    );
    expect((await loadAuditPage(t.db, { action: '%' })).rows).toEqual([]);
  });
});
