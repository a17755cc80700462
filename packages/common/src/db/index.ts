export * from './database';
export * from './migrate';
export { startEmbeddedPostgres } from './embedded-postgres';
