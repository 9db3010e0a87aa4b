import Link from 'next/link';

type Params = Record<string, string | number | undefined | null>;

function searchOf(params: Params): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

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
        <Link className="button" href={`${path}${searchOf(filter)}`}>
          ← {firstLabel}
        </Link>
      )}
      {next ? (
        <Link className="button" href={`${path}${searchOf({ ...filter, ...next })}`} data-testid={nextTestId}>
          {nextLabel} →
        </Link>
      ) : null}
    </div>
  );
}
