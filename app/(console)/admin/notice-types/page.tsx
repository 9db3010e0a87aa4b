import type { Metadata } from 'next';
import Link from 'next/link';
import { loadNoticeConfigView } from '@/lib/console/windows';
import { formatDuration } from '@/lib/console/format';
import { Forbidden } from '@/components/ui/states';
import { requirePage } from '@/app/_server/auth';

export const metadata: Metadata = { title: 'Notice types and rules' };
export const dynamic = 'force-dynamic';

const offset = (ms: number) => (ms === 0 ? '0 h' : `${ms < 0 ? '−' : '+'}${formatDuration(ms)}`);

/** Read-only: what activeNoticeConfig() loaded from NOTICE_CONFIG at start-up. A change takes effect on restart. */
export default async function NoticeTypesPage() {
  const auth = await requirePage('notice_config.read', '/admin/notice-types');
  if (!auth.ok) return <Forbidden message={auth.refusal.message} />;
  const view = loadNoticeConfigView();
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Notice types and rules</h1>
          <p>
            Loaded from <code>{view.file}</code> at start-up (read-only here: edit the file and restart). Rule set{' '}
            <code data-testid="rule-set-version">{view.ruleSetVersion}</code> is recorded with every notice it plans. What each template renders:{' '}
            <Link href="/admin/templates">Templates →</Link>
          </p>
        </div>
      </div>
      <div className="card" data-testid="notice-types">
        <h2>Notice types</h2>
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Type</th>
                <th>Event</th>
                <th>Category</th>
                <th>Merchant window</th>
                <th>Obligation</th>
                <th>Quiet hours</th>
                <th>Template</th>
              </tr>
            </thead>
            <tbody>
              {view.noticeTypes.map((type) => (
                <tr key={type.name} data-testid={`notice-type-${type.name}`}>
                  <td style={{ minWidth: 220 }}>
                    <span className="mono nowrap">{type.name}</span>
                    <span className="sub">{type.label}</span>
                    {type.enabled ? null : <span className="badge">switched off</span>}
                  </td>
                  <td className="small">
                    <span className="mono nowrap">{type.event}</span>
                    {type.identity.map((field) => (
                      <span key={field} className="sub mono nowrap">
                        {field}
                      </span>
                    ))}
                  </td>
                  <td>
                    {type.category === 'required' ? <span className="badge warn">required</span> : 'courtesy'}
                    <span className="sub">{type.channel}</span>
                  </td>
                  <td className="small nowrap">
                    {type.window ? `${offset(type.window.fromMs)} … ${offset(type.window.toMs)}` : <span className="muted">rules govern</span>}
                  </td>
                  <td className="small mono nowrap">{type.obligation ?? '—'}</td>
                  <td className="small nowrap">{type.quietHours ?? 'off'}</td>
                  <td className="small">
                    <span className="mono nowrap">{type.template}</span>
                    <span className="sub nowrap">correction: {type.correction.replaceAll('_', ' ')}</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </div>
      <div className="card" data-testid="rules">
        <h2>Jurisdiction rules</h2>
        <p className="muted small">
          Day and month counts are calendar units in the recipient&apos;s time zone, read conservatively. The product computes and enforces; counsel decides the
          rules.
        </p>
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Rule</th>
                <th>Jurisdiction</th>
                <th>Obligation</th>
                <th>Window</th>
                <th>Source</th>
                <th>Checked</th>
              </tr>
            </thead>
            <tbody>
              {view.rules.map((rule) => (
                <tr key={rule.id} data-testid={`rule-${rule.id}`}>
                  <td style={{ maxWidth: 440 }}>
                    <span className="mono nowrap">
                      {rule.id}@{rule.version}
                    </span>
                    <span className="sub">{rule.title}</span>
                    {rule.enabled ? null : <span className="badge">switched off</span>}
                    {rule.unconfirmed.length > 0 ? (
                      <details className="small">
                        <summary className="muted">not confirmed ({rule.unconfirmed.length})</summary>
                        {rule.unconfirmed.map((item) => (
                          <span key={item} className="sub">
                            {item}
                          </span>
                        ))}
                      </details>
                    ) : null}
                  </td>
                  <td>{rule.jurisdiction === '*' ? 'everywhere' : rule.jurisdiction}</td>
                  <td className="small">
                    <span className="mono nowrap">{rule.obligation}</span>
                    <span className="sub">{rule.dutyHolder === 'issuer' ? "the card issuer's duty" : "the merchant's duty"}</span>
                  </td>
                  <td className="small nowrap">
                    {rule.window.min ?? 0}–{rule.window.max ?? '∞'} {rule.window.unit}
                    <span className="sub">before the {rule.anchor.replaceAll('_', ' ')}</span>
                  </td>
                  <td className="small nowrap">
                    <a href={rule.sourceUrl} rel="noreferrer" target="_blank" title={rule.sourceUrl}>
                      {new URL(rule.sourceUrl).hostname.replace(/^www\./, '')} ↗
                    </a>
                  </td>
                  <td className="small nowrap">{rule.checkedAt}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </div>
    </>
  );
}
