/** Starts a hello world floor (Express 5, or Node's plain `http`) in its own pinned process. */
import { freePort } from '../../packages/common/test/support/throwaway';
import { startServer, waitReady, type ServerProcess } from '../server';
import type { Pinning } from '../system';

export interface FloorPeer {
  server: ServerProcess;
  origin: string;
  stop(): Promise<void>;
}

/**
 * `express`: Express 5's stock `app.listen` (the framework's floor); `express-node-classes`: the same
 * app handling Node's own request and response objects, Express's methods on Node's prototypes (Attest's apps); `http`: Node's plain
 * `http` hello world (Node's floor). All three answer GET / with `hello` and run pinned alike (tsx).
 */
export type FloorKind = 'express' | 'express-node-classes' | 'http';

const SCRIPTS: Record<FloorKind, string> = {
  express: 'bench/peers/express-floor-server.ts',
  'express-node-classes': 'bench/peers/express-floor-server.ts',
  http: 'bench/peers/http-floor-server.ts',
};

export async function startFloor(pinning: Pinning, logDir: string, kind: FloorKind): Promise<FloorPeer> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const server = startServer(
    pinning,
    kind === 'http' ? 'http-floor' : kind === 'express' ? 'express-floor' : 'express-floor-app-prototypes',
    SCRIPTS[kind],
    {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PEER_PORT: String(port),
      PEER_NODE_CLASSES: kind === 'express-node-classes' ? '1' : '0',
    },
    logDir,
  );
  try {
    await waitReady(server, `${origin}/`);
  } catch (err) {
    await server.stop();
    throw err;
  }
  return { server, origin, stop: () => server.stop() };
}
