import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { packagesLoadedAfter } from '@/testing/loaded-packages';
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

describe('loading mjml', () => {
  it('a worker preparing its templates with the child compiler never loads it; the in-process compiler does', async () => {
    const prepare = `
      const { loadNoticeConfig } = await import('@/lib/windows/load-config');
      const { prepareTemplates } = await import('@/lib/templates/load');
      const { compileMjmlInChild } = await import('@/lib/templates/mjml');
      const { renderEmail } = await import('@/lib/templates/render');
      const { config } = loadNoticeConfig('config/notice-ledger.json');
      const set = await prepareTemplates(config, { compileMjml: compileMjmlInChild });
      const sample = config.templates.definitions.renewal_notice_t72.sample;
      const mail = await renderEmail(set, { template: 'renewal_notice_t72', noticeType: 'renewal_notice_t72', category: 'courtesy', locale: 'en', timeZone: 'UTC',
        payload: sample, anchorAt: new Date(), windowClosesAt: new Date(), code: 'ABCD2345EF', links: { manage: 'https://notices.example/r/x' } });
      if (!mail.html.includes('ABCD2345EF')) throw new Error('not rendered');`;
    const inProcess = `await (await import('@/lib/templates/mjml')).compileMjmlInProcess('<mjml><mj-body></mj-body></mjml>');`;
    expect(await packagesLoadedAfter([prepare, inProcess], ['mjml', 'juice', 'cheerio'])).toEqual([[], ['mjml', 'juice', 'cheerio']]);
  }, 30_000);
});
