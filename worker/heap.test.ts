import { describe, expect, it } from 'vitest';
import { boundHeapGrowth, HEAP_GROWING_PERCENT } from './heap';

// What the bound buys is measured where memory is measured, in bench/worker-ab.ts (peak RSS per
// variant; `NODE_ARGS=--heap-growing-percent=0` runs V8's dynamic factor beside it).
describe('boundHeapGrowth', () => {
  it('sets the growing factor when the command line names none', () => {
    expect(boundHeapGrowth(['--enable-source-maps'])).toBe(HEAP_GROWING_PERCENT);
  });

  it('leaves an operator’s own --heap-growing-percent alone, in either spelling', () => {
    expect(boundHeapGrowth(['--enable-source-maps', '--heap-growing-percent=0'])).toBeNull();
    expect(boundHeapGrowth(['--heap_growing_percent=30'])).toBeNull();
    expect(boundHeapGrowth(['--heap-growing-percent', '30'])).toBeNull();
  });
});
