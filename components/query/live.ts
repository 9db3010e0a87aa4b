/** Live refresh: the overview and quarantine poll; an on-call screen left open stays true. */
export const LIVE_REFRESH_MS = 15_000;
