export * from './states';
export * from './ledger';
export * from './jobs';
export * from './events';
export * from './replays';
export * from './auth';
export * from './audit';
export * from './overview';
