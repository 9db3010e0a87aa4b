import { describe, expect, it } from 'vitest';
import { assertReadyIsLogged, spawnWorker } from './worker-process';

describe('spawnWorker', () => {
  it('refuses a LOG_LEVEL that would hide its "worker ready" line, before it starts anything, instead of waiting for ever', () => {
    for (const level of ['warn', 'error', 'fatal', 'silent']) expect(() => spawnWorker({ LOG_LEVEL: level })).toThrow(/info or lower/);
    // The levels that show the line pass.
    for (const level of ['trace', 'debug', 'info', undefined]) expect(() => assertReadyIsLogged(level)).not.toThrow();
  });
});
