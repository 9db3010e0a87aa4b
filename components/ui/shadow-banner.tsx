export type ShadowView = { since: string | null; changedBy: string | null; stored: boolean };

/** On every console page while the ledger runs in shadow: duplicates are counted, not suppressed. */
export function ShadowBanner({ shadow }: { shadow: ShadowView | null }) {
  if (!shadow) return null;
  const since = shadow.since ? ` since ${new Date(shadow.since).toISOString().replace('T', ' ').slice(0, 16)} UTC` : '';
  return (
    <div className="transport-banners" data-testid="shadow-mode">
      <div className="banner warning" role="status">
        <span className="icon">◐</span>
        <span>
          <strong>Shadow mode{since}</strong>
          {shadow.changedBy ? ` (set by ${shadow.changedBy})` : shadow.stored ? '' : ' (from LEDGER_MODE; no worker has stored it yet)'}: the ledger records
          claims and counts duplicates but suppresses none — a duplicate notice is sent. <a href="/rollout">Rollout</a>
        </span>
      </div>
    </div>
  );
}
