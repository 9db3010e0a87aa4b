'use client';

export function PrintButton() {
  return (
    <button type="button" onClick={() => window.print()} data-testid="print-report">
      Print
    </button>
  );
}
