import Joi from 'joi';
import { loadEnv, port } from '@attest/common';

export interface DemoConfig {
  DEMO_ENABLED: boolean;
  DEMO_PORT: number;
  /** The username whose creation by an operator makes them the demo app's owner (while its team is empty). */
  DEMO_OWNER_USERNAME: string;
}

/** `pnpm start`'s demo app: on by default, on its own port; alice, once an operator creates her, owns it. */
export const loadDemoConfig = (env: NodeJS.ProcessEnv): Readonly<DemoConfig> =>
  loadEnv<DemoConfig>(
    {
      DEMO_ENABLED: Joi.boolean().default(true),
      DEMO_PORT: port(4003),
      DEMO_OWNER_USERNAME: Joi.string().trim().max(200).default('alice'),
    },
    env,
  );
