import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { activeNoticeConfig } from '@/lib/windows/active';
import { prepareTemplates } from '@/lib/templates/load';
import { renderEmail, type RenderRequest } from '@/lib/templates/render';
const { config } = activeNoticeConfig();
const set = await prepareTemplates(config);
const req = (i: number): RenderRequest => ({
  template: 'renewal_notice_t72', noticeType: 'renewal_notice_t72', category: 'courtesy', locale: 'en', timeZone: 'UTC',
  payload: { customer_name: 'Ana Silva ' + i, plan_name: 'Coffee Box', amount: '19.00', currency: 'EUR' },
  anchorAt: new Date(Date.now() + 3 * 86400e3), windowClosesAt: new Date(Date.now() + 2 * 86400e3), code: 'ABCD2345EF' ,
  links: { manage: 'https://notices.example/r/abc' + i, unsubscribe: 'https://notices.example/u/abc' + i }, cancellable: true,
});
for (let i = 0; i < 2000; i++) await renderEmail(set, req(i));
const s = new Session(); s.connect();
await s.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as any);
for (let i = 0; i < 3000; i++) await renderEmail(set, req(i));
const { profile } = await s.post('HeapProfiler.stopSampling');
// aggregate self size by function+url
const agg = new Map<string, number>();
const walk = (n: any, stack: string[]) => { const name = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; agg.set(name, (agg.get(name) ?? 0) + n.selfSize); for (const c of n.children) walk(c, [...stack, name]); };
walk(profile.head, []);
const total = [...agg.values()].reduce((a, b) => a + b, 0);
console.log('total per render KB', (total / 3000 / 1024).toFixed(1));
for (const [k, v] of [...agg].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log((v / 3000 / 1024).toFixed(1).padStart(6), k);
writeFileSync('/tmp/rb/heap.heapprofile', JSON.stringify(profile));
