export * from './audit-store';
export * from './audit-log';
export * from './admin-tokens';
export * from './audit-routes';
