import type { ReactNode } from 'react';

/** Empty and error states say what happened and what to do next. */
export function EmptyState({ children, testId }: { children: ReactNode; testId?: string }) {
  return (
    <div className="notice" data-testid={testId ?? 'empty-state'}>
      {children}
    </div>
  );
}

export function ErrorState({ error, retry }: { error: unknown; retry?: () => void }) {
  const message = error instanceof Error ? error.message : 'Something went wrong.';
  return (
    <div className="notice error" data-testid="error-state">
      <p>
        <strong>Could not load this.</strong> {message}
      </p>
      {retry ? (
        <button type="button" onClick={retry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

export function Forbidden({ message }: { message: string }) {
  return (
    <div className="notice error" data-testid="forbidden">
      <p>
        <strong>Not available to your role.</strong> {message}
      </p>
      <p>Ask an admin if you need this access.</p>
    </div>
  );
}

export function SkeletonChart() {
  return <div className="skeleton chart" aria-busy="true" aria-label="Loading chart" />;
}

export function SkeletonLines({ lines = 4 }: { lines?: number }) {
  return (
    <div aria-busy="true" aria-label="Loading">
      {Array.from({ length: lines }, (_, index) => (
        <div key={index} className="skeleton line" />
      ))}
    </div>
  );
}
