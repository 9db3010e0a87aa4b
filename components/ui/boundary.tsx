'use client';

import { QueryErrorResetBoundary } from '@tanstack/react-query';
import { Component, Suspense, type ReactNode } from 'react';
import { ErrorState } from './states';

type CatchProps = { children: ReactNode; onReset: () => void };
type CatchState = { error: unknown };

class Catch extends Component<CatchProps, CatchState> {
  override state: CatchState = { error: null };
  static getDerivedStateFromError(error: unknown): CatchState {
    return { error };
  }
  override render() {
    if (this.state.error) {
      return (
        <ErrorState
          error={this.state.error}
          retry={() => {
            this.props.onReset();
            this.setState({ error: null });
          }}
        />
      );
    }
    return this.props.children;
  }
}

/** Suspense with a skeleton plus an error state with retry, around one independently loading part. */
export function Section({ fallback, children }: { fallback: ReactNode; children: ReactNode }) {
  return (
    <QueryErrorResetBoundary>
      {({ reset }) => (
        <Catch onReset={reset}>
          <Suspense fallback={fallback}>{children}</Suspense>
        </Catch>
      )}
    </QueryErrorResetBoundary>
  );
}
