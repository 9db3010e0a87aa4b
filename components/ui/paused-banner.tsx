export type PausedView = { name: string; label: string; reason: string; changedBy: string; since: string };

const time = (iso: string) => new Date(iso).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';

/** On every console page while an operator's pause holds (the kill switch): what is paused, by whom, why. */
export function PausedBanner({ paused }: { paused: PausedView[] }) {
  if (paused.length === 0) return null;
  return (
    <div className="transport-banners" data-testid="sending-paused">
      {paused.map((row) => (
        <div key={row.name} className="banner critical" role="alert" data-control={row.name}>
          <span className="icon">‖</span>
          <span>
            <strong>Sending paused: {row.label}</strong> by {row.changedBy} since {time(row.since)} ({row.reason}). Nothing in it is claimed or sent and no
            attempt is counted, but windows keep closing. <a href="/controls">Controls</a>
          </span>
        </div>
      ))}
    </div>
  );
}
