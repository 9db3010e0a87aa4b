import { describe, expect, it } from 'vitest';
import { ledgerStates } from '@/db/schema/states';
import { findTransition, isTransitionAllowed, ledgerActors, ledgerTransitions, listActorsFor, type LedgerFrom, type LedgerTo } from './transitions';

const froms: LedgerFrom[] = ['absent', ...ledgerStates];
const tos: LedgerTo[] = [...ledgerStates, 'deleted'];

describe('the ledger transition table', () => {
  it('lists each (from, to, actor) once', () => {
    const keys = ledgerTransitions.map((t) => `${t.from}→${t.to}:${t.by}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('takes a claim only from no row or a released row, and only the worker does', () => {
    const claimers = froms.filter((from) => listActorsFor({ from, to: 'claimed' }).length > 0);
    expect(claimers).toEqual(['absent', 'released']);
    expect(listActorsFor({ from: 'absent', to: 'claimed' })).toEqual(['worker']);
    expect(listActorsFor({ from: 'released', to: 'claimed' })).toEqual(['worker']);
    for (const from of ['claimed', 'sent', 'suppressed'] as const) {
      for (const by of ledgerActors) expect(isTransitionAllowed({ from, to: 'claimed', by })).toBe(false);
    }
  });

  it('lets a claimed row end as sent by the worker, the provider evidence or a person, and nobody else', () => {
    expect(listActorsFor({ from: 'claimed', to: 'sent' }).sort()).toEqual(['operator', 'provider_evidence', 'worker']);
  });

  it('never lets provider evidence or retention make a claim sendable again', () => {
    for (const by of ['provider_evidence', 'retention', 'backfill'] as const) {
      for (const from of froms) expect(isTransitionAllowed({ from, to: 'released', by })).toBe(false);
    }
    expect(listActorsFor({ from: 'claimed', to: 'released' }).sort()).toEqual(['operator', 'worker']);
  });

  it('suppresses a claim only by a person', () => {
    expect(listActorsFor({ from: 'claimed', to: 'suppressed' })).toEqual(['operator']);
    for (const from of froms.filter((f) => f !== 'claimed')) expect(listActorsFor({ from, to: 'suppressed' })).toEqual([]);
  });

  it('deletes only settled rows, and only retention deletes', () => {
    for (const from of froms) {
      const deleters = listActorsFor({ from, to: 'deleted' });
      expect(deleters).toEqual(from === 'sent' || from === 'released' || from === 'suppressed' ? ['retention'] : []);
    }
  });

  it('refuses every change out of sent or suppressed except deletion', () => {
    for (const from of ['sent', 'suppressed'] as const) {
      for (const to of tos.filter((t) => t !== 'deleted')) {
        for (const by of ledgerActors) expect(isTransitionAllowed({ from, to, by })).toBe(false);
      }
    }
  });

  it('backfill only inserts sent rows', () => {
    expect(ledgerTransitions.filter((t) => t.by === 'backfill').map((t) => `${t.from}→${t.to}`)).toEqual(['absent→sent']);
  });

  it('says what each transition does to the job', () => {
    expect(findTransition({ from: 'claimed', to: 'sent', by: 'worker' })?.job).toEqual({ from: ['pending', 'claimed'], to: ['sent'] });
    expect(findTransition({ from: 'claimed', to: 'released', by: 'worker' })?.job).toEqual({ from: ['pending', 'claimed'], to: ['pending', 'failed'] });
    expect(findTransition({ from: 'claimed', to: 'released', by: 'operator' })?.job).toEqual({ from: ['pending', 'claimed', 'failed'], to: ['pending'] });
    expect(findTransition({ from: 'claimed', to: 'suppressed', by: 'operator' })?.job).toEqual({ from: ['pending', 'claimed', 'failed'], to: ['suppressed'] });
    expect(findTransition({ from: 'sent', to: 'deleted', by: 'retention' })?.job).toBe('unchanged');
    expect(findTransition({ from: 'sent', to: 'claimed', by: 'worker' })).toBeNull();
  });
});
