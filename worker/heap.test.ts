import { describe, expect, it } from 'vitest';
import { boundHeapGrowth, HEAP_GROWING_PERCENT } from './heap';

// What the bound buys is measured where memory is measured, in bench/worker-ab.ts (peak RSS per
// variant; `NODE_ARGS=--heap-growing-percent=0` runs V8's dynamic factor beside it).
describe('boundHeapGrowth', () => {
  const setting = (execArgv: readonly string[]) => {
    const set: string[] = [];
    const result = boundHeapGrowth({ execArgv, setFlags: (flags) => set.push(flags) });
    return { result, set };
  };

  it('sets the growing factor when the command line names none', () => {
    expect(setting(['--enable-source-maps'])).toEqual({ result: HEAP_GROWING_PERCENT, set: [`--heap-growing-percent=${String(HEAP_GROWING_PERCENT)}`] });
  });

  it('leaves an operator’s own --heap-growing-percent alone, in either spelling', () => {
    for (const execArgv of [['--enable-source-maps', '--heap-growing-percent=0'], ['--heap_growing_percent=30'], ['--heap-growing-percent', '30']])
      expect(setting(execArgv), execArgv.join(' ')).toEqual({ result: null, set: [] });
  });
});
