import type { Metadata } from 'next';
import { requirePage } from '@/app/_server/auth';
import { Forbidden } from '@/components/ui/states';
import { SendTest } from '@/components/templates/send-test';
import { can } from '@/lib/auth/permissions';
import { loadTemplatesView } from '@/lib/console/templates';
import { activeNoticeConfig } from '@/lib/windows/active';

export const metadata: Metadata = { title: 'Templates' };
export const dynamic = 'force-dynamic';

/**
 * Read-only: every template the notice types use, each channel × locale rendered with the
 * template's declared sample payload (config/notice-ledger.json `templates`). The HTML is shown
 * in a sandboxed frame with no script, no same-origin and no navigation (`sandbox=""`).
 */
export default async function TemplatesPage() {
  const auth = await requirePage('notice_config.read', '/admin/templates');
  if (!auth.ok) return <Forbidden message={auth.refusal.message} />;
  const mayTest = can(auth.session.user.role, 'templates.test');
  const view = await loadTemplatesView(activeNoticeConfig().config);
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Templates</h1>
          <p>
            Files under <code>{view.directory}</code>, loaded and checked at start-up (edit the files and restart). Each is rendered here with its sample
            payload; the charge date is the sample notice&apos;s anchor ({view.sampleAnchor.slice(0, 10)}, {view.sampleTimeZone}). A recipient whose locale has
            no template gets <code>{view.fallbackLocale}</code>, formatted in its language (a recipient whose language the template speaks, such as{' '}
            <code>de-AT</code> for <code>de</code>, gets their own locale&apos;s dates and amounts).
          </p>
        </div>
      </div>
      {view.templates.map((template) => (
        <div className="card" key={template.id} data-testid={`template-${template.id}`}>
          <h2>
            <span className="mono">{template.id}</span>{' '}
            {template.category === 'required' ? <span className="badge warn">required: no unsubscribe</span> : <span className="badge">courtesy</span>}
          </h2>
          <p className="small muted">
            Used by{' '}
            {template.noticeTypes.map((type, index) => (
              <span key={type.name}>
                {index > 0 ? ', ' : ''}
                <span className="mono">{type.name}</span> ({type.channel})
              </span>
            ))}
            {template.meets.length > 0 ? (
              <>
                {' '}
                · meets <span className="mono">{template.meets.join(', ')}</span>
              </>
            ) : null}
          </p>
          <div className="table-wrap">
            <table data-testid={`template-${template.id}-variables`}>
              <thead>
                <tr>
                  <th>Variable</th>
                  <th>Type</th>
                  <th>Sample</th>
                </tr>
              </thead>
              <tbody>
                {template.variables.map((variable) => (
                  <tr key={variable.name}>
                    <td className="mono">{variable.name}</td>
                    <td className="mono small">{variable.type}</td>
                    <td className="small">{variable.sample}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {template.renderings.map((rendering) => (
            <section
              key={`${rendering.channel}.${rendering.locale}`}
              data-testid={`rendering-${template.id}-${rendering.channel}-${rendering.locale}`}
              style={{ marginTop: 20 }}
            >
              <h3>
                {rendering.channel} · <span className="mono">{rendering.locale}</span> <span className="small muted mono">{rendering.files.join(' ')}</span>
              </h3>
              {'error' in rendering ? (
                <p className="error-text">Does not render: {rendering.error}</p>
              ) : rendering.channel === 'email' ? (
                <>
                  <p>
                    <span className="muted small">Subject:</span> <strong data-testid="rendered-subject">{rendering.subject}</strong>
                  </p>
                  <div style={{ display: 'grid', gridTemplateColumns: 'repeat(auto-fit, minmax(300px, 1fr))', gap: 16 }}>
                    <iframe
                      title={`${template.id} ${rendering.locale} HTML`}
                      sandbox=""
                      srcDoc={rendering.html}
                      data-testid="rendered-html"
                      style={{ width: '100%', height: 620, border: '1px solid var(--border, #d0d5dd)', borderRadius: 6, background: '#f3f4f6' }}
                    />
                    <pre data-testid="rendered-text" className="small" style={{ whiteSpace: 'pre-wrap', margin: 0, overflow: 'auto', maxHeight: 620 }}>
                      {rendering.text}
                    </pre>
                  </div>
                  {mayTest ? <SendTest template={template.id} locale={rendering.locale} /> : null}
                </>
              ) : (
                <pre data-testid="rendered-sms" className="small" style={{ whiteSpace: 'pre-wrap' }}>
                  {rendering.text} <span className="muted">({rendering.text.length} characters)</span>
                </pre>
              )}
            </section>
          ))}
        </div>
      ))}
    </>
  );
}
