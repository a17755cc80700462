import Joi from 'joi';
import { loadEnv, port } from '@attest/common';

export interface DemoConfig {
  DEMO_ENABLED: boolean;
  DEMO_PORT: number;
}

/** `pnpm start`'s demo app: on by default, on its own port. */
export const loadDemoConfig = (env: NodeJS.ProcessEnv): Readonly<DemoConfig> =>
  loadEnv<DemoConfig>({ DEMO_ENABLED: Joi.boolean().default(true), DEMO_PORT: port(4003) }, env);
