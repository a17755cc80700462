export * from './database';
export * from './migrate';
export { startEmbeddedPostgres, SharedEmbeddedPostgres } from './embedded-postgres';
export * from './embedded-layout';
export { startEmbeddedMaintenance, MAINTENANCE_INTERVAL_MS, type EmbeddedMaintenance } from './embedded-maintenance';
