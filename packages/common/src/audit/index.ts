export * from './audit-store';
export * from './audit-log';
export * from './audit-journal';
export * from './admin-tokens';
export * from './audit-routes';
