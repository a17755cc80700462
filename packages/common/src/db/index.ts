export * from './database';
export * from './migrate';
export { startEmbeddedPostgres, SharedEmbeddedPostgres } from './embedded-postgres';
export * from './embedded-layout';
export { startEmbeddedMaintenance, type EmbeddedMaintenance } from './embedded-maintenance';
