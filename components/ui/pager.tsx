import Link from 'next/link';
import { toQueryString } from '../query/api';

type Params = Record<string, string | number | undefined | null>;

/**
 * Keyset pagination links: back to the first page (only when not on it) and onward with the
 * cursor the server returned (only when there is more).
 */
export function Pager({
  path,
  filter,
  onFirstPage,
  next,
  firstLabel,
  nextLabel,
  nextTestId,
}: {
  path: string;
  filter: Params;
  onFirstPage: boolean;
  next: Params | null | undefined;
  firstLabel: string;
  nextLabel: string;
  nextTestId?: string;
}) {
  return (
    <div className="pager">
      {onFirstPage ? null : (
        <Link className="button" href={`${path}${toQueryString(filter)}`}>
          ← {firstLabel}
        </Link>
      )}
      {next ? (
        <Link className="button" href={`${path}${toQueryString({ ...filter, ...next })}`} data-testid={nextTestId}>
          {nextLabel} →
        </Link>
      ) : null}
    </div>
  );
}
