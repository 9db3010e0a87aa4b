import { transportDownText, type TransportDown } from '@/lib/console/words';

export type TransportDownView = {
  transport: TransportDown['transport'];
  reason: 'nothing_left' | 'config_broken' | null;
  errorClass: string | null;
  code: number | null;
  since: string;
  checkedAt: string;
};

const time = (iso: string) => new Date(iso).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';

/** On every console page while a transport's breaker is open: what is down, since when, and what to do. */
export function TransportBanner({ down }: { down: TransportDownView[] }) {
  if (down.length === 0) return null;
  return (
    <div className="transport-banners" data-testid="transport-down">
      {down.map((row) => {
        const words = transportDownText(row);
        return (
          <div key={row.transport} className={`banner ${row.reason === 'config_broken' ? 'critical' : 'warning'}`} role="alert" data-transport={row.transport}>
            <span className="icon">!</span>
            <span>
              <strong>{words.headline}</strong>: {words.action}. Nothing is claimed for {row.transport === 'smtp' ? 'email' : 'SMS'} meanwhile and no attempt is
              counted. Down since {time(row.since)}, last checked {time(row.checkedAt)}.
            </span>
          </div>
        );
      })}
    </div>
  );
}
