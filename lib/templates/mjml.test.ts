import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileMjmlInChild, compileMjmlInProcess, MjmlError } from './mjml';

const layout = readFileSync('config/templates/_layout/email.mjml', 'utf8');

describe('compiling the layout in a child process (the worker) and in this one (the console)', () => {
  it('gives the same HTML for the shipped layout, its Liquid left in place', async () => {
    const [child, inProcess] = await Promise.all([compileMjmlInChild(layout), compileMjmlInProcess(layout)]);
    expect(child).toBe(inProcess);
    expect(child).toContain('{{ body | raw }}');
    expect(child).toMatch(/^<!doctype html>/i);
  });

  it('gives the same MjmlError for a layout strict validation refuses', async () => {
    const invalid = layout.replace('<mj-body', '<mj-body><mj-nonsense>x</mj-nonsense></mj-body><mj-body');
    const [child, inProcess] = await Promise.all([
      compileMjmlInChild(invalid).catch((error: unknown) => error),
      compileMjmlInProcess(invalid).catch((error: unknown) => error),
    ]);
    expect(child).toBeInstanceOf(MjmlError);
    expect(inProcess).toBeInstanceOf(MjmlError);
    expect((child as MjmlError).message).toBe((inProcess as MjmlError).message);
    expect((child as MjmlError).message.length).toBeGreaterThan(0);
  });
});
