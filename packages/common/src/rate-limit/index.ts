export * from './failure-policy';
export * from './failure-limiter';
export * from './rate-limit-fields';
export * from './client-address';
export * from './credential-limits';
