export * from './app-factory';
export * from './endpoint';
export * from './error-handler';
export * from './health';
export * from './admin-auth';
export * from './request-context';
export * from './service-apps';
export * from './metrics';
