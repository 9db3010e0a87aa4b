/** Shared by the server prefetch and the client hook, so hydration lands on the same entry. */
export const replaysKey = ['replays'] as const;
